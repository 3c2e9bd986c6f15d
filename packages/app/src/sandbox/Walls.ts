import { Command, CommandExecutor, FileSystem } from "@effect/platform"
import {
  agentHosts,
  agentRules,
  agentStateDirs,
  CheckRunner,
  checkRules,
  HarnessService,
  type LoopAgent,
  LoopAgents,
  LoopReviewers,
  type SandboxNote,
  Sandbox,
  sandboxedExecutor,
  type SandboxPlace,
  type SandboxRules,
  type SandboxSettings,
  WORK_DIR,
  Workspace
} from "@spool/core"
import { GitReview } from "@spool/git"
import { SandboxRuntime } from "@spool/sandbox"
import { Effect, Layer } from "effect"
import { join } from "node:path"
import type { PreparedAgent } from "../agents/AgentList.js"
import { Invocation } from "../host/Invocation.js"
import type { WorkPlace } from "../place/WorkPlace.js"
import { Reports } from "../report/Reports.js"
import { RequestError } from "../RequestError.js"

/** The sandbox a run's loops share, with the person's additions; each agent brings what it needs. */
export interface Walls {
  readonly sandbox: Sandbox["Type"]
  readonly settings: SandboxSettings
}

/**
 * The sandbox, started for as long as the scope lasts. Where it cannot run (a part missing, no
 * user namespaces) this fails with one line naming what is missing and how to install it: a loop
 * asked to run sandboxed never runs without.
 */
export const openWalls = (settings: SandboxSettings) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(SandboxRuntime.layer).pipe(
      Effect.mapError((error) =>
        new RequestError({ message: `--sandbox cannot run here: ${error.message}`, option: "sandbox" })
      )
    )
    return { sandbox: yield* Effect.provide(Sandbox, context), settings } satisfies Walls
  })

/** `git rev-parse`'s absolute answers in `cwd`, or null outside a repository. */
const gitDirs = (cwd: string) =>
  Command.lines(Command.make("git", "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--git-dir").pipe(
    Command.workingDirectory(cwd)
  )).pipe(
    Effect.map((lines) => (lines.length >= 3 ? { top: lines[0]!, common: lines[1]!, own: lines[2]! } : null)),
    Effect.orElseSucceed(() => null)
  )

/**
 * Where a loop (or a check) at `cwd` works, as the walls see it, `treeRoot` being where that tree
 * holds `.spool/` when it is not the main one; its private temporary directory lasts as long as the scope.
 */
const placeAt = (cwd: string, treeRoot: string | null) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const workspace = yield* Workspace
    const git = yield* gitDirs(cwd)
    const roots = [workspace.root, ...(treeRoot === null ? [] : [treeRoot])]
    // spool's own files: made now where missing, so that the wall stands before anything is there.
    yield* workspace.ensureWorkDir.pipe(Effect.ignore)
    const spoolDirs = [...new Set(roots.flatMap((root) => [join(root, WORK_DIR), join(root, workspace.tree.ralphDir)]))]
    for (const dir of spoolDirs) yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.ignore)
    return {
      workTree: git?.top ?? cwd,
      gitCommonDir: git?.common ?? null,
      gitDir: git?.own ?? null,
      spoolDirs,
      tmpDir: yield* fs.makeTempDirectoryScoped({ prefix: "spool-sandbox-" }).pipe(
        Effect.mapError((error) => new RequestError({ message: `--sandbox: the loop's temporary directory cannot be made: ${error.message}`, option: "sandbox" }))
      ),
      home: (yield* Invocation).env.HOME ?? "/"
    } satisfies SandboxPlace
  })

/** A process runner that starts every process through `walls`' sandbox, inside `rules`. */
const through = (walls: Walls, rules: SandboxRules) =>
  Effect.map(CommandExecutor.CommandExecutor, (base) => Layer.succeed(CommandExecutor.CommandExecutor, sandboxedExecutor(base, walls.sandbox, rules)))

/** What a loop's agents and reviewers are, as prepared. */
export interface LoopCast {
  readonly agents: readonly [PreparedAgent, ...Array<PreparedAgent>]
  readonly rotate: boolean
  readonly reviewers: ReadonlyArray<PreparedAgent>
  readonly maxReviews: number
}

/** The agents and reviewers of a loop, each as the loop runs it, by `serviceOf`; the first agent is also the loop's `HarnessService`. */
const agentsLayer = <E, R>(cast: LoopCast, serviceOf: (agent: PreparedAgent) => Effect.Effect<HarnessService["Type"], E, R>) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const ready = (agent: PreparedAgent) =>
      Effect.map(serviceOf(agent), (service): LoopAgent => ({ id: agent.id, harness: agent.harness, model: agent.model, service }))
    const [first, ...rest] = yield* Effect.forEach(cast.agents, ready)
    const reviewers = yield* Effect.forEach(cast.reviewers, ready)
    return Layer.mergeAll(
      Layer.succeed(LoopAgents, { agents: [first!, ...rest], rotate: cast.rotate }),
      Layer.succeed(HarnessService, first!.service),
      Layer.succeed(LoopReviewers, { reviewers, maxReviews: cast.maxReviews })
    )
  }))

/** The agents of a loop, unwalled; its reviewers' work trees made anew in the temporary directory for each review. */
export const loopAgentsLayer = (cast: LoopCast, place: WorkPlace) =>
  Layer.merge(agentsLayer(cast, (agent) => Effect.provide(HarnessService, agent.layer)), GitReview.layer(place.cwd))

/**
 * The agents and the checks of the loop at `place`, each behind its walls (`agentRules` with that
 * agent's needs, `checkRules`): every process either starts through the sandbox, or not at all.
 */
export const walledLayers = (walls: Walls, cast: LoopCast, place: WorkPlace) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const { env } = yield* Invocation
    const at = yield* placeAt(place.cwd, place.worktree?.root ?? null)
    // Each agent's state directories, made where missing: the walls open only what exists, and an
    // agent's first run makes them, which a wall of its parent would refuse.
    const agents = [...cast.agents, ...cast.reviewers]
    for (const agent of agents) {
      for (const dir of agentStateDirs(agent.needs, at, env)) yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.ignore)
    }
    const checks = yield* through(walls, checkRules(walls.settings, at, env))
    // A reviewer works in a tree of its own, always made at the same place: it may write there (the
    // tests it runs), never in the loop's work tree, nor in git's objects and refs.
    const reviewDir = yield* fs.makeTempDirectoryScoped({ prefix: "spool-review-" }).pipe(
      Effect.mapError((error) => new RequestError({ message: `--sandbox: the reviewers' directory cannot be made: ${error.message}`, option: "sandbox" }))
    )
    const reviewTree = join(reviewDir, "tree")
    // The walls open only what exists: the directory the tree is made in, before any review.
    const reviewAt: SandboxPlace = { ...at, workTree: reviewDir, gitDir: null }
    const walled = yield* Effect.forEach(agents, (agent) =>
      Effect.map(
        through(walls, agentRules(agent.needs, walls.settings, cast.reviewers.includes(agent) ? reviewAt : at, env)),
        (executor) => ({ agent, executor })
      ))
    return Layer.mergeAll(
      agentsLayer(cast, (agent) =>
        Effect.provide(HarnessService, agent.layer.pipe(Layer.provide(walled.find((w) => w.agent === agent)!.executor)))),
      CheckRunner.layer.pipe(Layer.provide(checks)),
      GitReview.layer(place.cwd, reviewTree)
    )
  }))

/** The project's checks of a tree at `cwd` (a merged one) behind `walls`' walls for checks, for as long as the scope lasts. */
export const walledChecks = (walls: Walls, cwd: string) =>
  Effect.gen(function*() {
    const { env } = yield* Invocation
    const at = yield* placeAt(cwd, cwd)
    return yield* CheckRunner.pipe(Effect.provide(CheckRunner.layer.pipe(Layer.provide(yield* through(walls, checkRules(walls.settings, at, env))))))
  })

/** `effect` with the agents of the loop, and with walls, the agents and the checks of `place` behind them. */
export const withinWalls = (walls: Walls | null, cast: LoopCast, place: WorkPlace) =>
<A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | RequestError, R | Layer.Layer.Context<ReturnType<typeof walledLayers>>> =>
  walls === null ? Effect.provide(effect, loopAgentsLayer(cast, place)) : Effect.provide(effect, walledLayers(walls, cast, place))

/** What `--status` and the loop's state say of the walls: the runtime, the agents' hosts, the person's additions. */
export const sandboxNote = (walls: Walls, agents: ReadonlyArray<PreparedAgent>, env: Readonly<Record<string, string | undefined>>): SandboxNote => ({
  runtime: walls.sandbox.runtime,
  hosts: [...new Set(agents.flatMap((agent) => agentHosts(agent.needs, walls.settings, env)))],
  denyRead: walls.settings.denyRead,
  passEnv: walls.settings.passEnv
})

/**
 * Agents left to run unattended (a sweep, loops on a remote) with `--allow-all` and no walls: one
 * warning that names `--sandbox`.
 */
export const warnUnwalled = (request: { readonly agent: { readonly allowAll: boolean }; readonly sandbox: SandboxSettings | null }, what: string) =>
  request.agent.allowAll && request.sandbox === null
    ? Effect.flatMap(Reports, (reports) =>
      reports.warn(`${what} runs its agents with --allow-all and your rights: every file you can read, every host you can reach; --sandbox walls each one in`))
    : Effect.void
