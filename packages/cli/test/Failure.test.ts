import {
  ChangeError,
  GitError,
  HarnessError,
  LayoutError,
  LockError,
  LockLostError,
  LoopFailedError,
  RemoteError,
  StateError,
  UnsupportedGuardError,
  WorkspaceNotFoundError,
  WorktreeError
} from "@spool/core"
import { RequestError } from "@spool/app"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Effect, Match, Schema } from "effect"
import type { run } from "../src/Cli.js"
import { describeFailure, type Failure, failures } from "../src/Failure.js"
import { DashboardError } from "../src/serve/DashboardServer.js"
import { UsageError } from "../src/UsageError.js"

const owner = { pid: 7, host: "here", startedAt: "2026-01-01T00:00:00Z" }

/** One error of every tag `Failure` holds, and the exit code README gives it. */
const everyFailure: ReadonlyArray<readonly [Failure, number]> = [
  [new UsageError({ message: "--max-iterations must be a positive whole number" }), 2],
  [new RequestError({ message: "--remote upstream: the repository has no remote of that name; add it with git remote add upstream <url>" }), 2],
  [new ChangeError({ reason: "NotFound", input: "999", candidates: ["001-01_a"] }), 2],
  [new WorkspaceNotFoundError({ cwd: "/nowhere", layout: "openspec" }), 2],
  [new LayoutError({ root: "/repo", found: ["spool", "openspec"] }), 2],
  [new UnsupportedGuardError({ flag: "--max-cost", harness: "command", what: "cost" }), 2],
  [new WorktreeError({ reason: "NotFound", changeId: "001-01_a", path: "/repo/wt", detail: "" }), 2],
  [new LockError({ changeId: "001-01_a", owner, path: "/repo/lock" }), 73],
  [new LockLostError({ changeId: "001-01_a", path: "/repo/lock", reason: "Removed", owner: null }), 73],
  [new StateError({ reason: "Decode", path: "/repo/state.json", detail: "not JSON" }), 1],
  [new HarnessError({ harness: "command", reason: "NotFound", detail: "'agent' was not found" }), 1],
  [new LoopFailedError({ iteration: 1, exitCode: 5, signal: null, error: null, outcome: "failed", failures: 1, failFast: true, sameError: null }), 1],
  [new GitError({ operation: "worktree", detail: "index file smaller than expected" }), 1],
  [new RemoteError({ remote: "origin", action: "fetch", detail: "connection refused" }), 1],
  [new DashboardError({ message: "the dashboard cannot listen on 127.0.0.1:4300: the port is in use" }), 1]
]

describe("describeFailure: each error at the edge, its line and its exit code", () => {
  it("covers every tag of Failure once", () => {
    expect(everyFailure.map(([error]) => error._tag).sort()).toEqual(Object.keys(failures).sort())
  })

  it.each(everyFailure.map(([error, code]) => [error._tag, code, error] as const))("%s exits %i, told by its own message", (_, code, error) => {
    expect(describeFailure(error)).toMatchObject({ exitCode: code, message: error.message })
  })

  it("tells only the first line of a message", () => {
    expect(describeFailure(new UsageError({ message: "first line\nsecond line" })).message).toBe("first line")
  })

  it("words an error without a message by what it is", () => {
    expect(describeFailure(new UsageError({ message: "" })).message).toBe("UsageError")
  })

  it("says where spool looked and how to start a first change when no tree is found", () => {
    expect(describeFailure(new WorkspaceNotFoundError({ cwd: "/nowhere" })).message).toBe(
      "no .spool/ directory (nor .ito/, openspec/ or .specify/) found in /nowhere or any parent directory; run spool in your repository, " +
        "or start one with: mkdir -p .spool/changes/001-01_my-change && echo '# My change' > .spool/changes/001-01_my-change/proposal.md"
    )
  })
})

/** An error no ending was written for. */
class UnmappedError extends Schema.TaggedError<UnmappedError>()("UnmappedError", { message: Schema.String }) {}

// What these tests claim is checked by the type checker (`pnpm typecheck`): each `@ts-expect-error`
// fails it if the line under it compiles.
describe("an error without an exit code is a compile error, not a silent exit 1", () => {
  it("everything `spool` can fail with is a Failure", () => {
    expectTypeOf<Effect.Effect.Error<ReturnType<typeof run>>>().toMatchTypeOf<Failure>()
    expectTypeOf<UnmappedError>().not.toMatchTypeOf<Failure>()
  })

  it("a program failing with an error Failure does not hold cannot be told at the edge", () => {
    const program = Effect.fail(new UnmappedError({ message: "x" })) as Effect.Effect<never, Failure | UnmappedError>
    // @ts-expect-error UnmappedError is no Failure: it has no exit code
    const told = program.pipe(Effect.catchAll((error) => Effect.succeed(describeFailure(error))))
    expectTypeOf(told).not.toBeAny()
  })

  it("an error added to Failure without its case in the table does not compile", () => {
    // @ts-expect-error the table has no case for UnmappedError
    const told = (error: Failure | UnmappedError) => Match.valueTags(error, failures)
    expectTypeOf(told).toBeFunction()
  })
})
