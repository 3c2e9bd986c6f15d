import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either, Option } from "effect"
import { parseRun } from "../src/Cli.js"
import { readCommandLine } from "../src/CommandLine.js"
import { parseStatusArgs } from "../src/StatusArgs.js"
import { addChange, makeWorkspace, spool } from "./support.js"

/** How the full decode reads `argv`: a plain status request (only --status, --json, one change), something else, or a mistake. */
const fullDecode = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const request = readCommandLine(argv)
    if (Either.isLeft(request)) return "mistake" as const
    if (request.right._tag !== "Run") return "other" as const
    const parsed = yield* Effect.either(parseRun(request.right.command, request.right.args))
    if (Either.isLeft(parsed)) return "mistake" as const
    const baseline = yield* parseRun(request.right.command, ["--status"])
    const args = parsed.right
    const { status, json, changes, change, ...rest } = args
    const { status: _s, json: _j, changes: _cs, change: _c, ...plain } = baseline
    // Anything else given makes it another request, for the full command.
    if (!status || changes.length > 1 || JSON.stringify(rest) !== JSON.stringify(plain)) return "other" as const
    return { change: Option.getOrNull(change), json }
  })

/** Command lines about status, plain and not: every spelling of the three options, in any order, with the mistakes people make. */
const corpus: ReadonlyArray<ReadonlyArray<string>> = (() => {
  const lines: Array<Array<string>> = []
  const changes = [[], ["--change", "002"], ["-c", "002-01"], ["--change=002-01_x"], ["--change", "a", "--change", "b"], ["--change"], ["-c", "--json"]]
  for (const command of ["ralph", "loop", "status"]) {
    for (const statusFlags of [[], ["--status"], ["--status", "--status"]]) {
      for (const jsonFlags of [[], ["--json"]]) {
        for (const change of changes) {
          lines.push([command, ...statusFlags, ...jsonFlags, ...change], [command, ...change, ...jsonFlags, ...statusFlags])
        }
      }
    }
  }
  for (const extra of [["--module", "002"], ["-m", "002"], ["--clear-context"], ["--list"], ["prompt words"], ["--help"], ["--no-interactive"], ["--", "--status"], ["--verbose"]]) {
    lines.push(["ralph", "--status", ...extra], ["ralph", "--status", "-c", "002", ...extra])
  }
  return lines
})()

describe("the --status shortcut", () => {
  it("takes only plain status requests", () => {
    expect(parseStatusArgs(["ralph", "--status"])).toEqual({ change: null, json: false })
    expect(parseStatusArgs(["loop", "--json", "--status", "-c", "002"])).toEqual({ change: "002", json: true })
    expect(parseStatusArgs(["ralph", "--status", "--change=002-01_x"])).toEqual({ change: "002-01_x", json: false })
    for (const argv of [
      ["ralph"],
      ["ralph", "--json"],
      ["status", "--status"],
      ["ralph", "--status", "--status"],
      ["ralph", "--status", "--change"],
      ["ralph", "--status", "--change", "--json"],
      ["ralph", "--status", "--change", "a", "--change", "b"],
      ["ralph", "--status", "--module", "002"],
      ["ralph", "--status", "--clear-context"],
      ["ralph", "--status", "prompt words"],
      ["ralph", "--status", "--help"]
    ]) expect(parseStatusArgs(argv), argv.join(" ")).toBeNull()
  })

  it.effect("reads every status command line as the full decode does: a plain one the same, any other left to it", () =>
    Effect.gen(function*() {
      let plain = 0
      for (const argv of corpus) {
        const fast = parseStatusArgs(argv)
        const full = yield* fullDecode(argv)
        if (typeof full === "object") plain++
        expect(fast, argv.join(" ")).toEqual(typeof full === "object" ? full : null)
      }
      // The corpus holds plain requests and others alike.
      expect(plain).toBeGreaterThan(20)
      expect(corpus.length - plain).toBeGreaterThan(20)
    }).pipe(Effect.provide(NodeContext.layer)))

  it("prints exactly what the full command line prints, answers and errors alike", async () => {
    const root = makeWorkspace()
    await spool(["ralph", "x", "--change", "001-01", "--harness", "command", "--harness-command", "node -e 0", "--max-iterations", "2", "--no-interactive"], { cwd: root })
    // `--module` sends the same request through the full parser.
    for (const [shortcut, full] of [
      [["ralph", "--status", "--change", "001-01"], ["ralph", "--status", "--change", "001-01", "--module", "001"]],
      [["ralph", "--status", "--json", "-c", "001-01"], ["ralph", "--status", "--json", "-c", "001-01", "-m", "001"]],
      [["ralph", "--status", "--change", "009"], ["ralph", "--status", "--change", "009", "--module", "009"]]
    ] as const) {
      const a = await spool(shortcut, { cwd: root })
      const b = await spool(full, { cwd: root })
      expect([a.code, a.stdout, a.stderr]).toEqual([b.code, b.stdout, b.stderr])
    }
    const statusOnly = await spool(["ralph", "--status"], { cwd: root })
    expect(statusOnly.code).toBe(0)
    expect(statusOnly.stdout).toContain("iteration: 2 of at most 2 (at least 1)")
    // Every loop of the repository, without a change: `--no-interactive` sends it through the full parser.
    addChange(root, "001-02_second")
    await spool(["ralph", "x", "--change", "001-02", "--harness", "command", "--harness-command", "node -e 0", "--max-iterations", "1", "--no-interactive"], { cwd: root })
    for (const args of [["ralph", "--status"], ["ralph", "--status", "--json"]]) {
      const a = await spool(args, { cwd: root })
      const b = await spool([...args, "--no-interactive"], { cwd: root })
      expect([a.code, a.stdout, a.stderr]).toEqual([b.code, b.stdout, b.stderr])
    }
    expect((await spool(["ralph", "--status"], { cwd: root })).stdout).toMatch(/^001-02_second {2,}max-iterations {2,}1 of 1 /m)
  })
})
