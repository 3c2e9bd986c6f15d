import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { makeTempDirectory } from "../src/fakeHttpServer.js"
import { git, type GitDaemon, newClone, startGitDaemon } from "../src/gitDaemon.js"
import { buildDir, runPipeline, safeJobName } from "../src/gitlabCi.js"
import { processesMentioning, remaining } from "../src/processes.js"

/*
 * A real GitLab pipeline (gitlab-ci-local, shell executor) whose jobs fetch from and push to a real
 * remote (git daemon on 127.0.0.1), as a loop run in CI does.
 */

let daemon: GitDaemon
let work: string
let home: string

beforeAll(async () => {
  work = makeTempDirectory("spool-gitlab-ci-test-")
  home = makeTempDirectory("spool-gitlab-ci-home-")
  writeFileSync(path.join(work, "gitconfig"), "")
  process.env.GIT_CONFIG_NOSYSTEM = "1"
  process.env.GIT_CONFIG_GLOBAL = path.join(work, "gitconfig")
  daemon = await startGitDaemon()
})

afterAll(async () => {
  await daemon?.stop()
  if (daemon !== undefined) rmSync(daemon.base, { recursive: true, force: true })
  for (const dir of [work, home]) if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** A clone of a new served repository whose `main` holds `.gitlab-ci.yml`, pushed. */
const project = (name: string, pipeline: string) => {
  daemon.createBare(name)
  const dir = newClone(daemon.url(name), path.join(work, name))
  writeFileSync(path.join(dir, ".gitlab-ci.yml"), pipeline)
  git(dir, "add", ".gitlab-ci.yml")
  git(dir, "commit", "-q", "-m", "pipeline")
  git(dir, "push", "-q", "-u", "origin", "main")
  return { dir, bare: daemon.bare(name), main: git(dir, "rev-parse", "HEAD").trim() }
}

const PIPELINE = `
stages: [work, check]

publish:
  stage: work
  script:
    - echo "sees $FROM_ENV and home $HOME"
    - git remote get-url origin
    - echo "$GREETING" > greeting.txt
    - git add greeting.txt
    - git commit -q -m "greeting from $CI_JOB_NAME"
    - git push -q origin HEAD:refs/heads/published

interrupted:
  stage: work
  allow_failure:
    exit_codes: [75, 73]
  script:
    - echo "deadline reached"
    - exit 75

verify:
  stage: check
  needs: [publish]
  script:
    - git fetch -q origin published
    - test "$(git show FETCH_HEAD:greeting.txt)" = "$GREETING"
    # A fresh copy of the repository: the commit made in publish's copy is not here.
    - test ! -e greeting.txt
    - echo "verified $(git rev-parse FETCH_HEAD)"
`

// Generous: on a loaded machine a pipeline of a few jobs can take many times its usual couple of seconds.
const PIPELINE_TIMEOUT = 300_000

describe("runPipeline", () => {
  it("runs each job in its own copy of the repository whose origin is the remote: one pushes, the next fetches it", async () => {
    const { dir, bare, main } = project("pipeline", PIPELINE)

    const run = await runPipeline({ cwd: dir, home, variables: { GREETING: "hello from CI" }, env: { FROM_ENV: "the caller's env" } })

    expect(run.exitCode, run.output).toBe(0)
    expect(run.timedOut).toBe(false)
    expect(run.jobs.map((job) => [job.name, job.status, job.exitCode])).toEqual([
      ["publish", "pass", 0],
      ["verify", "pass", 0],
      ["interrupted", "warn", 75]
    ])
    expect(run.failed).toEqual([])

    // The remote holds the pushed branch: one commit on main holding the greeting.
    const published = git(bare, "rev-parse", "refs/heads/published").trim()
    expect(git(bare, "rev-parse", "refs/heads/published~1").trim()).toBe(main)
    expect(git(bare, "show", "refs/heads/published:greeting.txt")).toBe("hello from CI\n")
    expect(git(bare, "log", "-1", "--format=%s", "refs/heads/published").trim()).toBe("greeting from publish")

    const publish = run.job("publish")
    expect(publish.log).toContain(`sees the caller's env and home ${home}`)
    expect(publish.log).toContain(daemon.url("pipeline"))
    expect(publish.buildDir).toBe(path.join(dir, ".gitlab-ci-local", "builds", "publish"))
    expect(git(publish.buildDir, "rev-parse", "HEAD").trim()).toBe(published)
    expect(run.job("verify").log).toContain(`verified ${published}`)
    expect(run.job("interrupted").log).toContain("deadline reached")
    expect(run.output).toContain("interrupted finished in")

    // The repository the pipeline ran in is untouched: no commit, no greeting.
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(main)
    expect(existsSync(path.join(dir, "greeting.txt"))).toBe(false)
    expect(git(dir, "status", "--porcelain", "--untracked-files=no")).toBe("")
  }, PIPELINE_TIMEOUT)

  it("exits 0 for a job failing with an exit code allow_failure does not list, runs what needs it, and reports it failed", async () => {
    const { dir } = project(
      "allowed",
      `
odd:
  allow_failure:
    exit_codes: [75]
  script: [exit 3]
after-odd:
  needs: [odd]
  script: [echo ran after odd]
shards:
  parallel: 2
  script: ['echo "shard $CI_NODE_INDEX of $CI_NODE_TOTAL"']
broken:
  when: manual
  script: [exit 1]
`
    )

    const run = await runPipeline({ cwd: dir, home, schemaValidation: false })

    // GitLab would fail the pipeline and skip after-odd; gitlab-ci-local only reports odd as failed.
    expect(run.exitCode, run.output).toBe(0)
    expect(run.failed.map((job) => [job.name, job.exitCode])).toEqual([["odd", 3]])
    expect(run.job("after-odd").status).toBe("pass")
    expect(run.job("shards: [1/2]").log).toContain("shard 1 of 2")
    expect(run.job("shards: [2/2]").log).toContain("shard 2 of 2")
    expect(run.job("shards: [2/2]").buildDir).toBe(buildDir(dir, "shards: [2/2]"))
    expect(safeJobName("shards: [2/2]")).toBe("shardsOiBb2Lw2XQ")
    expect(() => run.job("broken")).toThrow(/did not run/)

    // A job not allowed to fail makes the run exit 1; only the job asked for runs.
    const broken = await runPipeline({ cwd: dir, home, job: "broken", schemaValidation: false })
    expect(broken.exitCode, broken.output).toBe(1)
    expect(broken.jobs.map((job) => [job.name, job.status, job.exitCode])).toEqual([["broken", "fail", 1]])
    expect(readFileSync(path.join(dir, ".gitlab-ci-local", "output", "broken.log"), "utf8")).toContain("$ exit 1")
  }, PIPELINE_TIMEOUT)

  it("stops the whole run at its timeout, the jobs' processes with it", async () => {
    const marker = `spool-gitlab-ci-timeout-${process.pid}`
    const { dir } = project("stuck", `stuck:\n  script: ['sleep 600 && echo ${marker}']\n`)

    const run = await runPipeline({ cwd: dir, home, schemaValidation: false, timeoutMs: 3_000 })

    expect(run.timedOut).toBe(true)
    expect(run.exitCode === 0).toBe(false)
    expect(await remaining(() => processesMentioning(marker))).toEqual([])
  }, PIPELINE_TIMEOUT)
})
