import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { makeTempDirectory } from "./fakeHttpServer.js"

/*
 * A GitLab pipeline run for real on this machine: gitlab-ci-local (the version cli pins) with its
 * shell executor, each job in its own copy of the repository (--shell-isolation).
 *
 * What a job gets: `.gitlab-ci-local/builds/<job>` under the repository, an rsync of its working
 * tree (tracked files as they are on disk, committed or not; no untracked or ignored file) and of
 * its whole `.git`, so `origin` and its remote-tracking branches are there and HEAD is the branch
 * checked out (GitLab's own runners check out the commit, detached). Each job starts from a fresh
 * copy: what one job commits reaches the next only through a push (or artifacts). Its environment
 * is this process's, with the pipeline's variables and GitLab's predefined ones (`CI=true`,
 * `CI_PROJECT_DIR`, `CI_JOB_NAME`, `CI_NODE_INDEX`, ...) over it.
 *
 * Where gitlab-ci-local is not GitLab: a job failing with an exit code its `allow_failure:
 * exit_codes` does not list is reported failed, yet the run exits 0 and the jobs that need it run;
 * a job whose shell dies of a signal is reported passed; `timeout:` and `retry:` are ignored; a
 * job's `artifacts` are copied back into the repository it ran in.
 */

/** gitlab-ci-local as cli pins it in its devDependencies. */
export const GITLAB_CI_LOCAL_BIN = fileURLToPath(new URL("../../cli/node_modules/.bin/gitlab-ci-local", import.meta.url))

/** Where gitlab-ci-local keeps its state, under the repository it runs in. */
export const STATE_DIR = ".gitlab-ci-local"

export interface PipelineOptions {
  /** A git repository holding `.gitlab-ci.yml` (or `file`). */
  readonly cwd: string
  /** Only these jobs (all by default); with `needs`, the jobs they need too. */
  readonly job?: string | ReadonlyArray<string>
  readonly needs?: boolean
  /** Pipeline variables (`--variable KEY=VALUE`): over the file's own, seen by every job. */
  readonly variables?: Readonly<Record<string, string>>
  /** Added to the environment gitlab-ci-local and so every job runs in. */
  readonly env?: Readonly<Record<string, string>>
  /** The HOME of gitlab-ci-local and its jobs; a private directory by default. */
  readonly home?: string
  /** The pipeline file, relative to `cwd`. */
  readonly file?: string
  /** Check the file against GitLab's schema first (about a second); on by default. */
  readonly schemaValidation?: boolean
  /** Any further flags. */
  readonly args?: ReadonlyArray<string>
  /** Stops the whole run (gitlab-ci-local and its jobs) after this long; four minutes by default. */
  readonly timeoutMs?: number
  readonly bin?: string
}

/**
 * A job as gitlab-ci-local's closing report gives it: passed, failed but allowed to (`warn`: by
 * `allow_failure: true` or one of its `exit_codes`), or failed.
 */
export interface JobResult {
  readonly name: string
  readonly status: "pass" | "warn" | "fail"
  /** The exit code of its script (`before_script` and `script`). */
  readonly exitCode: number
  /** Whether its `after_script` failed (reported apart, a warning only). */
  readonly afterScriptFailed: boolean
  /** Its output: each command (`$ ...`) and what it printed. */
  readonly log: string
  /** The copy of the repository it ran in. */
  readonly buildDir: string
}

export interface PipelineResult {
  /** gitlab-ci-local's: 1 when a job failed that was not allowed to, else 0 (but see `failed`). */
  readonly exitCode: number | null
  readonly signal: NodeJS.Signals | null
  readonly timedOut: boolean
  /** stdout and stderr as they came, interleaved. */
  readonly output: string
  readonly stdout: string
  readonly stderr: string
  /** Every job that ran, in the order of the closing report (passed, warned, failed). */
  readonly jobs: ReadonlyArray<JobResult>
  /** The job called `name`; throws, with the output, when it did not run. */
  readonly job: (name: string) => JobResult
  /** Jobs with status `fail`: the exit code does not tell them all (see the module's notes). */
  readonly failed: ReadonlyArray<JobResult>
}

/** A job's name as gitlab-ci-local spells it in its files' names (each run of other characters base64url-encoded). */
export const safeJobName = (name: string): string => name.replace(/[^\w-]+/g, (run) => Buffer.from(run).toString("base64url"))

/** The copy of the repository the job `name` runs in. */
export const buildDir = (cwd: string, name: string): string => path.join(cwd, STATE_DIR, "builds", safeJobName(name))

// Runs still going when the process exits are killed then, with their jobs.
const running = new Set<number>()
let exitHookInstalled = false
const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // Already gone.
  }
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The jobs of gitlab-ci-local's closing report, their exit codes from the lines announcing each job's end. */
export const parseReport = (cwd: string, stdout: string, stderr: string): Array<JobResult> => {
  const lines = stdout.split("\n")
  const report: Array<{ name: string; status: JobResult["status"] }> = []
  const afterScriptFailed = new Set<string>()
  for (const line of lines) {
    // With --max-job-name-padding 0 names are not padded: " PASS  name", " WARN  name  pre_script", " FAIL  name".
    const found = /^ (PASS|WARN|FAIL) {2}(.+?)(?: {2}(pre_script|after_script))?$/.exec(line)
    if (found === null) continue
    const [, status, name, part] = found
    if (part === "after_script") afterScriptFailed.add(name!)
    else report.push({ name: name!, status: status === "PASS" ? "pass" : status === "WARN" ? "warn" : "fail" })
  }
  return report.map(({ name, status }) => {
    // "<name> finished in 147 ms  WARN 75 " (stderr) for a script that failed; a passing one prints no code.
    const ended = new RegExp(`^${escape(name)} finished in .*? (?:WARN|FAIL) (\\d+) ?$`, "m").exec(stderr)
    const logFile = path.join(cwd, STATE_DIR, "output", `${safeJobName(name)}.log`)
    return {
      name,
      status,
      exitCode: status === "pass" ? 0 : ended === null ? -1 : Number(ended[1]),
      afterScriptFailed: afterScriptFailed.has(name),
      log: fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "",
      buildDir: buildDir(cwd, name)
    }
  })
}

/** Runs the pipeline of `options.cwd` (or some of its jobs) with gitlab-ci-local's shell executor. */
export const runPipeline = (options: PipelineOptions): Promise<PipelineResult> => {
  const jobs = options.job === undefined ? [] : typeof options.job === "string" ? [options.job] : [...options.job]
  const args = [
    "--no-color",
    "--max-job-name-padding",
    "0",
    // Each job in its own copy of the repository, never in `cwd` itself.
    "--shell-isolation",
    ...(options.schemaValidation === false ? ["--no-json-schema-validation"] : []),
    ...(options.file === undefined ? [] : ["--file", options.file]),
    ...(options.needs === true ? ["--needs"] : []),
    ...Object.entries(options.variables ?? {}).flatMap(([key, value]) => ["--variable", `${key}=${value}`]),
    ...(options.args ?? []),
    ...jobs
  ]
  const ownHome = options.home === undefined ? makeTempDirectory("spool-gitlab-ci-local-home-") : undefined
  const home = options.home ?? ownHome!
  // gitlab-ci-local reads any GCL_* variable as one of its options: none of the caller's apply.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("GCL_")))
  const env = { ...inherited, ...options.env, HOME: home }
  return new Promise((resolve, reject) => {
    const child = spawn(options.bin ?? GITLAB_CI_LOCAL_BIN, args, {
      cwd: options.cwd,
      env,
      // Its own process group, so a timeout stops its jobs too.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"]
    })
    const pid = child.pid
    if (pid !== undefined) {
      running.add(pid)
      if (!exitHookInstalled) {
        exitHookInstalled = true
        process.on("exit", () => {
          for (const group of running) killGroup(group, "SIGKILL")
        })
      }
    }
    let output = ""
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk
      output += chunk
    })
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
      output += chunk
    })
    let timedOut = false
    let hard: NodeJS.Timeout | undefined
    const timer = setTimeout(() => {
      timedOut = true
      if (pid === undefined) return
      killGroup(pid, "SIGTERM")
      hard = setTimeout(() => killGroup(pid, "SIGKILL"), 5_000)
    }, options.timeoutMs ?? 240_000)
    child.once("error", (error) => {
      clearTimeout(timer)
      if (ownHome !== undefined) fs.rmSync(ownHome, { recursive: true, force: true })
      if (pid !== undefined) running.delete(pid)
      reject(error)
    })
    child.once("close", (exitCode, signal) => {
      clearTimeout(timer)
      clearTimeout(hard)
      if (pid !== undefined) {
        running.delete(pid)
        // A job's processes left behind (a background process of a script) go with the run.
        killGroup(pid, "SIGKILL")
      }
      if (ownHome !== undefined) fs.rmSync(ownHome, { recursive: true, force: true })
      const results = parseReport(options.cwd, stdout, stderr)
      const byName = new Map(results.map((result) => [result.name, result]))
      resolve({
        exitCode,
        signal,
        timedOut,
        output,
        stdout,
        stderr,
        jobs: results,
        failed: results.filter((result) => result.status === "fail"),
        job: (name) => {
          const result = byName.get(name)
          if (result === undefined) throw new Error(`job ${JSON.stringify(name)} did not run; the output:\n${output}`)
          return result
        }
      })
    })
  })
}
