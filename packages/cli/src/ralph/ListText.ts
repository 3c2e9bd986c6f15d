import { formatTaskCount, isAbandoned, type ListedChange } from "@spool/core"
import type { Palette } from "../Colour.js"

/** A last run its state says runs, that nothing holds (no live lock here, no lease on the remote), was abandoned: killed, or its machine stopped. */
const lastRun = (c: ListedChange) =>
  isAbandoned(c.lastStatus, c.holder !== null) ? `${c.lastStatus}, abandoned` : c.lastStatus

/** `--list`: a line per change; `--list --json`: the array a CI matrix is built from. */
export const listText = (changes: ReadonlyArray<ListedChange>, p: Palette, changesDir = ".spool/changes") => {
  if (changes.length === 0) return `no changes under ${changesDir}/`
  const width = Math.max(...changes.map((c) => c.id.length))
  const colour = (state: ListedChange["state"]) =>
    state === "ready" ? p.cyan(state) : state === "complete" ? p.green(state) : state === "running" ? p.yellow(state) : p.dim(state)
  return changes.map((c) => {
    // A completed change whose merge was not made: `complete, not merged: conflict in src/app.ts`.
    const unmerged = c.state === "complete" && c.merge !== null && !c.merge.merged ? `complete, ${c.merge.text}` : null
    const details = [
      ...(c.holder === null ? [] : [c.leaseExpiresAt === null ? c.holder : `${c.holder}, lease until ${c.leaseExpiresAt}`]),
      ...(c.why === null || unmerged !== null ? [] : [c.why]),
      ...(c.lastStatus === null || c.state === "complete" ? [] : [`last run: ${lastRun(c)} at iteration ${c.iteration}${c.maxIterations === null ? "" : `/${c.maxIterations}`}`]),
      ...(c.tasks === null ? [] : [`tasks ${formatTaskCount(c.tasks)}`]),
      ...(c.resumeAt === null ? [] : [`again after ${c.resumeAt}`])
    ]
    const state = unmerged === null ? colour(c.state) : p.yellow(unmerged)
    return `${c.id.padEnd(width)}  ${state}${" ".repeat(Math.max(0, 9 - (unmerged ?? c.state).length))}  ${details.join("; ")}`.trimEnd()
  }).join("\n")
}
