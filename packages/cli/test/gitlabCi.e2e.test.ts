import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type GitDaemon, newClone, startGitDaemon } from "@spool/testkit/gitDaemon"
import { type PipelineResult, runPipeline } from "@spool/testkit/gitlabCi"
import { copyFileSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { addChange, examples, git, makeWorkspace, runProgram, spool } from "./support.js"

// examples/ci/gitlab-ci.yml run for real by a GitLab CI engine (gitlab-ci-local, shell executor):
// its jobs install spool from the packed package and run loops on a real git remote (git daemon on
// 127.0.0.1) with a scripted agent. A first pipeline stops every change at its deadline; the next
// one resumes each where it stopped, to completion, as a scheduled pipeline would.

const cliDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const changes = ["001-01_greeting-cli", "001-02_second"] as const

/** An agent that writes one file per iteration, works 1.5 s, and claims completion at iteration 3. */
const AGENT = `
import { mkdirSync, writeFileSync } from "node:fs"
const it = Number(process.env.SPOOL_ITERATION)
mkdirSync("work", { recursive: true })
writeFileSync("work/" + process.env.SPOOL_CHANGE + "-" + it + ".txt", "iteration " + it + "\\n")
console.log("did iteration " + it + " of " + process.env.SPOOL_CHANGE)
await new Promise((resolve) => setTimeout(resolve, 1500))
if (it === 3) console.log("<promise>COMPLETE</promise>")
`

let work: string
let daemon: GitDaemon
let bare: string
let project: string
let tarball: string
let agent: string
// The environment as a package manager running the tests leaves it, put back afterwards.
const saved: Record<string, string | undefined> = {}

beforeAll(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), "spool-gitlab-ci-")))
  // Nothing of this checkout reaches npm in the jobs: no NODE_PATH, none of the settings (`npm_*`) a
  // package manager passes down to its children.
  for (const key of Object.keys(process.env)) {
    if (/^npm_/i.test(key) || key === "NODE_PATH") {
      saved[key] = process.env[key]
      delete process.env[key]
    }
  }
  const pack = await runProgram("npm", ["pack", "--json", "--pack-destination", work, "--cache", join(work, "npm-cache")], {
    cwd: cliDir,
    env: process.env
  })
  expect(pack.code, pack.stderr).toBe(0)
  tarball = join(work, (JSON.parse(pack.stdout) as ReadonlyArray<{ filename: string }>)[0]!.filename)

  daemon = await startGitDaemon()
  const root = makeWorkspace()
  addChange(root, changes[1], "# A second change\n\nSay goodbye as well.\n")
  git(root, "add", "-A")
  git(root, "commit", "-qm", "a second change")
  bare = daemon.createBare("project", root)
  rmSync(root, { recursive: true, force: true })
  project = newClone(daemon.url("project"), join(work, "project"))
  copyFileSync(join(examples, "ci", "gitlab-ci.yml"), join(project, ".gitlab-ci.yml"))
  git(project, "add", ".gitlab-ci.yml")
  git(project, "commit", "-qm", "spool's pipeline")
  git(project, "push", "-q", "origin", "main")

  agent = join(work, "agent.mjs")
  writeFileSync(agent, AGENT)
}, 300_000)

afterAll(async () => {
  await daemon?.stop()
  if (daemon !== undefined) rmSync(daemon.base, { recursive: true, force: true })
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
  Object.assign(process.env, saved)
})

/** The example's pipeline, as a schedule starts it, with spool from the tarball and the scripted agent. */
const pipeline = (variables: Record<string, string> = {}): Promise<PipelineResult> =>
  runPipeline({
    cwd: project,
    variables: {
      CI_PIPELINE_SOURCE: "schedule",
      SPOOL_PACKAGE: tarball,
      SPOOL_AGENT_PACKAGE: "",
      SPOOL_HARNESS: "command",
      SPOOL_HARNESS_COMMAND: `${process.execPath} ${agent}`,
      ...variables
    },
    // The tarball has no dependencies: npm installs it without the registry (--offline).
    env: { npm_config_cache: join(work, "npm-cache"), npm_config_offline: "true", npm_config_update_notifier: "false" },
    // The example names a container image; here every job runs in the shell.
    args: ["--force-shell-executor"]
  })

const refs = () => git(bare, "for-each-ref", "--format=%(refname)").split("\n").filter(Boolean)
const remoteState = (change: string) => JSON.parse(git(bare, "show", `refs/spool/state/${change}:state.json`))
const remoteHistory = (change: string) =>
  git(bare, "show", `refs/spool/state/${change}:history.jsonl`).split("\n").filter(Boolean).map((line) => JSON.parse(line))
/**
 * The jobs that ran: name, status, exit code. gitlab-ci-local warns about the overridden
 * CI_PIPELINE_SOURCE in a line shaped like a job's in its closing report; that line is no job.
 */
const summary = (run: PipelineResult) =>
  run.jobs.filter((job) => !job.name.startsWith("Avoid overriding predefined variables")).map((job) => [job.name, job.status, job.exitCode])

describe("examples/ci/gitlab-ci.yml under gitlab-ci-local", () => {
  it("runs none of its jobs in a push pipeline (the loops' own pushes start none)", async () => {
    const run = await runPipeline({ cwd: project, args: ["--force-shell-executor"] })
    expect(run.exitCode, run.output).toBe(0)
    expect(summary(run)).toEqual([])
    expect(refs().filter((ref) => ref.startsWith("refs/spool/") || ref.startsWith("refs/heads/spool/"))).toEqual([])
  })

  it("stops each change at the deadline (exit 75, allowed), and the next pipeline resumes each to completion", async () => {
    const first = await pipeline({ SPOOL_DEADLINE: "3s" })
    expect(first.timedOut).toBe(false)
    expect(first.failed, first.output).toEqual([])
    expect(summary(first), first.output).toEqual([
      ["plan", "pass", 0],
      ["loop: [1/2]", "warn", 75],
      ["loop: [2/2]", "warn", 75]
    ])
    expect(first.job("plan").log).toContain(`${changes[0]}\n${changes[1]}\n`)
    // Job i of 2 takes the i-th ready change: the jobs never meet on one.
    for (const [i, change] of changes.entries()) {
      const log = first.job(`loop: [${i + 1}/2]`).log
      expect(log).toContain(`on origin: no branch spool/${change} yet`)
      expect(log).not.toContain(`spool/${changes[1 - i]}`)
      expect(log).toMatch(
        /stopped: --deadline \S+ (?:came during the iteration|would come before another iteration ended \([^)]*\)|has come); not done; continue in a later job with --resume/
      )
      expect(log).toContain("spool: not done by the deadline; the work so far is on the remote, and the next pipeline")
      expect(remoteState(change)).toMatchObject({ status: "deadline", stopReason: "deadline" })
      expect(remoteState(change).iteration).toBeLessThan(3)
    }
    expect(refs().filter((ref) => ref.startsWith("refs/spool/lease/"))).toEqual([])

    // The next pipeline, with the example's own deadline: the plan lists both changes as ready again.
    const second = await pipeline()
    expect(second.timedOut).toBe(false)
    expect(second.failed, second.output).toEqual([])
    expect(summary(second), second.output).toEqual([
      ["plan", "pass", 0],
      ["loop: [1/2]", "pass", 0],
      ["loop: [2/2]", "pass", 0]
    ])
    expect(second.job("plan").log).toContain(`${changes[0]}\n${changes[1]}\n`)
    for (const [i, change] of changes.entries()) {
      const log = second.job(`loop: [${i + 1}/2]`).log
      expect(log).toContain(`on origin: branch spool/${change} and the loop's state fetched`)
      expect(log).toMatch(/resuming run \S+ at iteration [12] /)
      expect(log).toContain("complete: the promise was accepted at iteration 3")
      expect(log).toContain("spool: done")

      // On the remote: one commit per iteration on the change's branch, on top of main, each with its file.
      expect(git(bare, "log", "--format=%s", `main..spool/${change}`).split("\n")).toEqual([3, 2, 1].map((n) => `spool ralph: ${change} iteration ${n}`))
      expect(git(bare, "merge-base", "main", `spool/${change}`)).toBe(git(bare, "rev-parse", "main"))
      expect(git(bare, "ls-tree", "-r", "--name-only", `spool/${change}`, "work/").split("\n")).toEqual([1, 2, 3].map((n) => `work/${change}-${n}.txt`))
      // One run across both pipelines, its iterations numbered without a gap or a repeat.
      const history = remoteHistory(change)
      expect(history.map((record) => record.iteration)).toEqual([1, 2, 3])
      expect(new Set(history.map((record) => record.run)).size).toBe(1)
      expect(history.at(-1)).toMatchObject({ outcome: "complete", completionDetected: true })
      expect(remoteState(change)).toMatchObject({ status: "complete", iteration: 3, run: history[0].run })
    }
    expect(refs().filter((ref) => ref.startsWith("refs/spool/lease/"))).toEqual([])

    // What the next plan would see: nothing is left to do.
    const listed = await spool(["ralph", "--list", "--json", "--remote", "origin"], { cwd: project })
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).map((c: { id: string; state: string; ready: boolean }) => [c.id, c.state, c.ready])).toEqual(
      changes.map((change) => [change, "complete", false])
    )
  })
})
