import type { Task, TaskList } from "../prompt/Tasks.js"

// `- [ ] T012 [P] [US1] Create the model in src/models/user.py`: spec-kit's task line. Only ` `, `x`
// and `X` are boxes spec-kit writes (`/speckit.implement` counts `- [ ]`, `- [x]`, `- [X]`).
const TASK_LINE = /^[ \t]*[-*+][ \t]+\[([ xX])\][ \t]+(.*)/s
// `T012`: spec-kit's tasks command writes every task as `- [ ] [TaskID] [P?] [Story?] Description`;
// a checkbox without an id (the older template's "Validation Checklist", a gate for the generator) is no task.
const TASK_ID = /^(T\d+)\b[ \t]*(.*)/s
const MARKER = /^\[(P|US\d+)\][ \t]*(.*)/s
// `## Phase 3: User Story 1 - Sign in (Priority: P1)`: the tasks below it are that phase's.
const HEADING = /^(#{1,6})[ \t]+(.*)/
const PHASE = /^Phase\b/i
const FENCE_OPEN = /^[ \t]*(`{3,}(?=[^`]*$)|~{3,})/
const FENCE_CLOSE = /^[ \t]*(`{3,}|~{3,})[ \t]*$/

const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, " ").trim()

/**
 * Parses a spec-kit feature's `tasks.md`: its checkbox lines that start with a task id (`T012`),
 * outside fenced code blocks, each with its parallel marker and its user story when it has them, and
 * the phase heading it sits under. Never throws.
 */
export const parseSpecKitTasks = (text: string | null): TaskList => {
  if (text === null) return { tasks: [] }
  const tasks: Array<Task> = []
  let fence: string | null = null
  let phase: { readonly name: string; readonly level: number } | null = null
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (fence !== null) {
      const close = FENCE_CLOSE.exec(line)
      if (close !== null && close[1]![0] === fence[0] && close[1]!.length >= fence.length) fence = null
      continue
    }
    const open = FENCE_OPEN.exec(line)
    if (open !== null) {
      fence = open[1]!
      continue
    }
    const heading = HEADING.exec(line)
    if (heading !== null) {
      const level = heading[1]!.length
      const name = oneLine(heading[2]!.replace(/[ \t]+#+[ \t]*$/, ""))
      if (PHASE.test(name)) phase = { name, level }
      else if (phase !== null && level <= phase.level) phase = null
      continue
    }
    const box = TASK_LINE.exec(line)
    if (box === null) continue
    const id = TASK_ID.exec(oneLine(box[2]!))
    if (id === null) continue
    let rest = id[2]!
    let parallel = false
    let story: string | undefined
    for (let marker = MARKER.exec(rest); marker !== null; marker = MARKER.exec(rest)) {
      if (marker[1] === "P") parallel = true
      else story ??= marker[1]!
      rest = marker[2]!
    }
    tasks.push({
      id: id[1]!,
      description: rest.trim(),
      status: box[1] === " " ? "pending" : "complete",
      line: i + 1,
      ...(phase === null ? {} : { phase: phase.name }),
      ...(parallel ? { parallel } : {}),
      ...(story === undefined ? {} : { story })
    })
  }
  return { tasks }
}
