import { Command, CommandExecutor, FileSystem } from "@effect/platform"
import {
  agentHosts,
  agentRules,
  CheckRunner,
  checkRules,
  type HarnessService,
  type SandboxNote,
  Sandbox,
  type SandboxNeeds,
  sandboxedExecutor,
  type SandboxPlace,
  type SandboxSettings,
  WORK_DIR,
  Workspace
} from "@spool/core"
import { SandboxRuntime } from "@spool/sandbox"
import { Effect, Layer } from "effect"
import { join } from "node:path"
import { Invocation } from "../host/Invocation.js"
import type { WorkPlace } from "../place/WorkPlace.js"
import { RequestError } from "../RequestError.js"

/** The sandbox a run's loops share, with the person's additions and what its agent needs. */
export interface Walls {
  readonly sandbox: Sandbox["Type"]
  readonly settings: SandboxSettings
  readonly needs: SandboxNeeds
}

const INSTALL = "sudo apt-get install -y bubblewrap socat ripgrep"

/**
 * The sandbox, started for as long as the scope lasts. Where it cannot run (a part missing, no
 * user namespaces) this fails with one line naming what is missing and how to install it: a loop
 * asked to run sandboxed never runs without.
 */
export const openWalls = (settings: SandboxSettings, needs: SandboxNeeds) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(SandboxRuntime.layer).pipe(
      Effect.mapError((error) =>
        new RequestError({
          message: `--sandbox cannot run here: ${error.message}` +
            (process.platform === "linux" ? `; on Debian or Ubuntu: ${INSTALL}` : ""),
          option: "sandbox"
        })
      )
    )
    return { sandbox: yield* Effect.provide(Sandbox, context), settings, needs } satisfies Walls
  })

/** `git rev-parse`'s absolute answers in `cwd`, or null outside a repository. */
const gitDirs = (cwd: string) =>
  Command.lines(Command.make("git", "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--git-dir").pipe(
    Command.workingDirectory(cwd)
  )).pipe(
    Effect.map((lines) => (lines.length >= 3 ? { top: lines[0]!, common: lines[1]!, own: lines[2]! } : null)),
    Effect.orElseSucceed(() => null)
  )

/** Where the loop at `place` works, as the walls see it; its private temporary directory lasts as long as the scope. */
const placeOf = (place: WorkPlace) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const workspace = yield* Workspace
    const git = yield* gitDirs(place.cwd)
    const roots = [workspace.root, ...(place.worktree === null ? [] : [place.worktree.root])]
    // spool's own files: made now where missing, so that the wall stands before anything is there.
    yield* workspace.ensureWorkDir.pipe(Effect.ignore)
    const spoolDirs = [...new Set(roots.flatMap((root) => [join(root, WORK_DIR), join(root, workspace.tree.ralphDir)]))]
    for (const dir of spoolDirs) yield* fs.makeDirectory(dir, { recursive: true }).pipe(Effect.ignore)
    return {
      workTree: git?.top ?? place.cwd,
      gitCommonDir: git?.common ?? null,
      gitDir: git?.own ?? null,
      spoolDirs,
      tmpDir: yield* fs.makeTempDirectoryScoped({ prefix: "spool-sandbox-" }).pipe(
        Effect.mapError((error) => new RequestError({ message: `--sandbox: the loop's temporary directory cannot be made: ${error.message}`, option: "sandbox" }))
      ),
      home: (yield* Invocation).env.HOME ?? "/"
    } satisfies SandboxPlace
  })

/**
 * The agent and the checks of the loop at `place`, each behind its walls (`agentRules`,
 * `checkRules`): every process either starts through the sandbox, or not at all.
 */
export const walledLayers = (
  walls: Walls,
  harness: Layer.Layer<HarnessService, never, FileSystem.FileSystem | CommandExecutor.CommandExecutor>,
  place: WorkPlace
) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const base = yield* CommandExecutor.CommandExecutor
    const { env } = yield* Invocation
    const at = yield* placeOf(place)
    const through = (rules: Parameters<typeof sandboxedExecutor>[2]) =>
      Layer.succeed(CommandExecutor.CommandExecutor, sandboxedExecutor(base, walls.sandbox, rules))
    return Layer.merge(
      harness.pipe(Layer.provide(through(agentRules(walls.needs, walls.settings, at, env)))),
      CheckRunner.layer.pipe(Layer.provide(through(checkRules(walls.settings, at, env))))
    )
  }))

/** `effect` with the agent and the checks of `place` behind `walls`; as it is without walls. */
export const withinWalls = (
  walls: Walls | null,
  harness: Layer.Layer<HarnessService, never, FileSystem.FileSystem | CommandExecutor.CommandExecutor>,
  place: WorkPlace
) =>
<A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | RequestError, R | Layer.Layer.Context<ReturnType<typeof walledLayers>>> =>
  walls === null ? effect : Effect.provide(effect, walledLayers(walls, harness, place))

/** What `--status` and the loop's state say of the walls: the runtime, the agent's hosts, the person's additions. */
export const sandboxNote = (walls: Walls, env: Readonly<Record<string, string | undefined>>): SandboxNote => ({
  runtime: walls.sandbox.runtime,
  hosts: agentHosts(walls.needs, walls.settings, env),
  denyRead: walls.settings.denyRead,
  passEnv: walls.settings.passEnv
})
