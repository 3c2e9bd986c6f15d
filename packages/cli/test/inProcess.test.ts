import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, type Scope } from "effect"
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { main } from "../src/Cli.js"
import { exitCodeOf } from "../src/ExitCode.js"
import type { Failure } from "../src/Failure.js"
import * as Invocation from "@spool/app/host"
import * as ProcessExecutor from "../src/ProcessExecutor.js"
import * as TerminalReporter from "../src/TerminalReporter.js"
import { agentScript, baseEnv, git, makeWorkspace, scriptedAgent, stateDir } from "./support.js"

const change = "001-01_greeting-cli"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const node = (source: string) => `${process.execPath} -e "${source}"`

/**
 * `spool <args>` run in this process, as `bin.ts` runs it but on layers of the test's own: started
 * in `cwd` with an environment of its own, its stdout and stderr captured; the exit code as `bin.ts` decides it.
 */
const spool = (args: ReadonlyArray<string>, cwd: string) =>
  Effect.gen(function*() {
    const env = baseEnv()
    const terminal = TerminalReporter.capture(env)
    const outcome = yield* main(["node", "spool", ...args]).pipe(
      Effect.provide(Layer.mergeAll(Invocation.layerTest(cwd, { env }), terminal.layer, ProcessExecutor.layer(env))),
      Effect.provide(NodeContext.layer)
    )
    return { code: exitCodeOf(outcome), stdout: terminal.stdout(), stderr: terminal.stderr() }
  })

const linesOf = (text: string) => text.split("\n").filter((line) => line.trim() !== "")

describe("spool in process (captured terminal, an invocation of the test's own)", () => {
  it.live("runs the scripted agent to completion in the invocation's directory: exit 0", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const result = yield* spool(["ralph", "Do the tasks.", "--change", "001-01", ...harness(`node ${scriptedAgent}`)], root)
      expect(result.code, result.stderr).toBe(0)
      const lines = linesOf(result.stdout)
      expect(lines[0]).toMatch(/^=== spool ralph: iteration 1\/20 /)
      expect(lines).toContain("[agent] task 1.1 done")
      expect(lines.find((line) => line.startsWith("--- iteration 2:"))).toMatch(/exit 1 \|.*-> failed$/)
      expect(lines).toContain("complete: the promise was accepted at iteration 4")
      expect(existsSync(join(stateDir(root, change), "state.json"))).toBe(true)
    }))

  it.live("stops at --max-iterations without the promise: exit 3", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const result = yield* spool(["ralph", "x", "--change", "001-01", "--max-iterations", "2", ...harness(node("console.log('still working')"))], root)
      expect(result.code, result.stderr).toBe(3)
      const lines = linesOf(result.stdout)
      expect(lines.filter((line) => line === "still working")).toHaveLength(2)
      expect(lines.filter((line) => line.startsWith("=== spool ralph: iteration "))).toHaveLength(2)
      expect(lines[lines.length - 1]).toBe("stopped: --max-iterations (2) reached without the completion promise")
    }))

  it.live("a usage error: one spool: line naming the flags, nothing on stdout, exit 2", () =>
    Effect.gen(function*() {
      const root = makeWorkspace()
      const args = ["ralph", "x", "--change", "001-01", "--min-iterations", "5", "--max-iterations", "3", ...harness(node(""))]
      const result = yield* spool(args, root)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe("")
      expect(linesOf(result.stderr)).toEqual(["spool: --min-iterations (5) must not be above the maximum number of iterations (3)"])
      expect(existsSync(stateDir(root, change))).toBe(false)
    }))

  it.live("help goes to the captured stdout: exit 0", () =>
    Effect.gen(function*() {
      const result = yield* spool(["--version"], makeWorkspace({ git: false }))
      expect(result).toEqual({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/), stderr: "" })
    }))
})

/** What spool is started with to meet an error: its directory and its arguments. */
interface Given {
  readonly cwd: string
  readonly args: ReadonlyArray<string>
}

interface EdgeCase {
  readonly what: string
  readonly given: Effect.Effect<Given, never, Scope.Scope>
  readonly code: number
  /** The one `spool:` line, the last on stderr. */
  readonly line: (given: Given) => string | RegExp
}

const inWorkspace = (args: ReadonlyArray<string>, setup: (root: string) => void = () => {}) =>
  Effect.sync((): Given => {
    const cwd = makeWorkspace()
    setup(cwd)
    return { cwd, args }
  })
const lockOf = (root: string) => join(stateDir(root, change), "lock")
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A port something else listens on, for as long as the test runs. */
const portInUse = Effect.acquireRelease(
  Effect.async<ReturnType<typeof createServer>>((resume) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(Effect.map((server) => (server.address() as { readonly port: number }).port))

/** A way to meet each error `spool` can fail with: one with no case here does not compile. */
const edgeCases: { readonly [Tag in Failure["_tag"]]: EdgeCase } = {
  UsageError: {
    what: "--json without --status or --list",
    given: inWorkspace(["ralph", "--change", "001-01", "--json"]),
    code: 2,
    line: () => "spool: --json goes with --status or --list: spool ralph --list --json"
  },
  RequestError: {
    what: "a remote the repository does not have",
    given: inWorkspace(["ralph", "x", "--change", "001-01", "--remote", "upstream", ...harness(node(""))]),
    code: 2,
    line: () => "spool: --remote upstream: the repository has no remote of that name; add it with git remote add upstream <url>"
  },
  ChangeError: {
    what: "an unknown change",
    given: inWorkspace(["ralph", "x", "--change", "999", ...harness(node(""))]),
    code: 2,
    line: () => "spool: unknown change '999'; active changes: 001-01_greeting-cli"
  },
  WorkspaceNotFoundError: {
    what: "no tree of changes here or above",
    given: Effect.sync(() => ({ cwd: mkdtempSync(join(tmpdir(), "spool-nowhere-")), args: ["ralph", "x", "--change", "001-01", ...harness(node(""))] })),
    code: 2,
    line: ({ cwd }) =>
      `spool: no .spool/ directory (nor .ito/, openspec/ or .specify/) found in ${cwd} or any parent directory; run spool in your repository, ` +
      "or start one with: mkdir -p .spool/changes/001-01_my-change && echo '# My change' > .spool/changes/001-01_my-change/proposal.md"
  },
  LayoutError: {
    what: "two trees of changes and no --layout",
    given: inWorkspace(["ralph", "--list"], (root) => {
      mkdirSync(join(root, "openspec", "changes", "a"), { recursive: true })
      writeFileSync(join(root, "openspec", "changes", "a", "proposal.md"), "# a\n")
    }),
    code: 2,
    line: ({ cwd }) =>
      `spool: ${cwd} holds more than one tree of changes: .spool/ (spool), openspec/ (openspec); ` +
      `pick one with --layout spool|openspec, or set "layout" in the "ralph" section of .spool/config.json`
  },
  UnsupportedGuardError: {
    what: "--max-cost with a harness that reports no cost",
    given: inWorkspace(["ralph", "x", "--change", "001-01", "--max-cost", "5", ...harness(node(""))]),
    code: 2,
    line: () => "spool: --max-cost needs a harness that reports cost, and the command harness does not; drop --max-cost, or cap --max-tokens or --max-duration instead"
  },
  WorktreeError: {
    what: "--remove of a worktree that is not there",
    given: inWorkspace(["ralph", "--change", "001-01", "--worktree", "--remove"]),
    code: 2,
    line: ({ cwd }) => `spool: change ${change} has no worktree at ${join(cwd, ".spool", ".state", "worktrees", change)}; nothing to remove`
  },
  LockError: {
    what: "a live loop's lock on the change",
    given: inWorkspace(["ralph", "x", "--change", "001-01", ...harness(node(""))], (root) => {
      mkdirSync(stateDir(root, change), { recursive: true })
      // This test's process is alive, and not the invocation's (pid 1): its lock is another loop's.
      writeFileSync(lockOf(root), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: "2026-01-01T00:00:00.000Z" }))
    }),
    code: 73,
    line: ({ cwd }) =>
      `spool: a loop is already running on ${change} (pid ${process.pid} on ${hostname()}, since 2026-01-01T00:00:00.000Z); ` +
      `see spool ralph --status --change ${change} (if no loop runs, delete ${lockOf(cwd)})`
  },
  LockLostError: {
    what: "the loop's lock removed while it runs",
    given: Effect.sync(() => {
      const cwd = makeWorkspace()
      const agent = agentScript(`import { rmSync } from "node:fs"\nrmSync(${JSON.stringify(lockOf(cwd))}, { force: true })\nconsole.log("working")`)
      return { cwd, args: ["ralph", "x", "--change", "001-01", "--max-iterations", "3", ...harness(agent)] }
    }),
    code: 73,
    line: ({ cwd }) =>
      `spool: the loop on ${change} lost its lock (${lockOf(cwd)} was removed) and stopped, so that no two loops work on one change; ` +
      `see spool ralph --status --change ${change}, and start the loop again once no other runs on it`
  },
  StateError: {
    what: "a damaged state.json",
    given: inWorkspace(["ralph", "--status", "--change", "001-01"], (root) => {
      mkdirSync(stateDir(root, change), { recursive: true })
      writeFileSync(join(stateDir(root, change), "state.json"), "{not json")
    }),
    code: 1,
    line: ({ cwd }) => new RegExp(`^spool: ${escaped(join(stateDir(cwd, change), "state.json"))} is damaged: .* \\(fix or delete the file\\)$`)
  },
  HarnessError: {
    what: "an agent that cannot start",
    given: inWorkspace(["ralph", "x", "--change", "001-01", ...harness("/nonexistent/agent")]),
    code: 1,
    line: () => "spool: command harness cannot start: '/nonexistent/agent' was not found"
  },
  LoopFailedError: {
    what: "a failed iteration under --fail-fast",
    given: inWorkspace(["ralph", "x", "--change", "001-01", "--fail-fast", ...harness(node("process.exit(5)"))]),
    code: 1,
    line: () => "spool: iteration 1 failed (the harness exited with code 5) and --fail-fast is set; see spool ralph --status"
  },
  GitError: {
    what: "git failing on a damaged index as the worktree is made",
    given: inWorkspace(["ralph", "x", "--change", "001-01", "--worktree", ...harness(node(""))], (root) => {
      writeFileSync(join(root, ".git", "index"), "not an index")
    }),
    code: 1,
    line: () => /^spool: git worktree failed: `git [a-z-]+` exited with code 128: fatal: .*index/
  },
  RemoteError: {
    what: "a remote that cannot be reached",
    given: inWorkspace(["ralph", "x", "--change", "001-01", "--remote", "origin", ...harness(node(""))], (root) => {
      git(root, "remote", "add", "origin", "git://127.0.0.1:1/nowhere.git")
    }),
    code: 1,
    line: () =>
      new RegExp(
        `^spool: could not read the lease of ${change} on the remote origin: .*; check that it can be reached \\(git fetch origin\\), then run again with --resume$`
      )
  },
  DashboardError: {
    what: "--serve on a port in use",
    given: Effect.map(portInUse, (port) => ({ cwd: makeWorkspace(), args: ["ralph", "--serve", "--port", String(port)] })),
    code: 1,
    line: ({ args }) =>
      `spool: the dashboard cannot listen on 127.0.0.1:${args.at(-1)}: the port is in use; give another --port, or leave it out for a free one`
  }
}

describe("each error at the edge, in process: one spool: line, its exit code", () => {
  for (const [error, { what, given, code, line }] of Object.entries(edgeCases)) {
    it.scopedLive(`${error} (${what}): exit ${code}`, () =>
      Effect.gen(function*() {
        const start = yield* given
        const result = yield* spool(start.args, start.cwd)
        expect(result.code, result.stderr).toBe(code)
        const expected = line(start)
        const last = linesOf(result.stderr).at(-1)
        if (typeof expected === "string") expect(last).toBe(expected)
        else expect(last).toMatch(expected)
      }))
  }
})
