import { CommandExecutor, FileSystem } from "@effect/platform"
import { Effect, Layer, Stream } from "effect"
import { type AgentProgram, resolveAgent } from "./AgentProgram.js"
import { runProcess } from "./HarnessProcess.js"
import { type HarnessError, type HarnessEvent, type HarnessRequest, HarnessService } from "./HarnessService.js"

/** What every agent harness is made from; each harness says what `model` and `allowAll` become for its agent. */
export interface AgentOptions {
  /** A model id passed on to the agent; null leaves the choice to the agent's own configuration. */
  readonly model: string | null
  /** Approve every tool call the agent would ask about. */
  readonly allowAll: boolean
  /** An explicit path to the agent's program (its `SPOOL_*_BIN`); null looks for it on PATH. */
  readonly binary: string | null
  readonly pathEnv: string | undefined
  /** Extra environment for the agent (tests point it at a fake model server). */
  readonly env?: Readonly<Record<string, string>>
}

/**
 * An agent command-line program described as data: where its program is, how one iteration's
 * command line looks, and how its output reads. `layer` turns a description into a harness.
 */
export interface AgentHarness {
  readonly program: AgentProgram
  readonly reports: HarnessService["Type"]["reports"]
  /** Checks beyond finding the program (e.g. a setting the agent would refuse), before the first iteration. */
  readonly check?: Effect.Effect<void, HarnessError>
  readonly args: (request: HarnessRequest) => ReadonlyArray<string>
  /** Extra environment for the agent (tests point it at a fake model server). */
  readonly env?: Readonly<Record<string, string>>
  /** A reader of one run's output: each raw event in, the events it means out; `now` reads the loop's clock. */
  readonly output: (request: HarnessRequest, now: () => number) => { readonly feed: (event: HarnessEvent) => Array<HarnessEvent> }
  /**
   * The agent goes on retrying a usage or rate limit by itself, for minutes or a whole reset: its
   * run ends at the first `Limited` its output reads (the agent and all it started are stopped), so
   * the loop's limit rules (wait, fall back) apply at once. The run then ends with no `Exited`.
   */
  readonly endsOnLimit?: boolean
}

/** The events of a run up to its first `Limited`, that one included. */
export const untilLimited = <E, R>(events: Stream.Stream<HarnessEvent, E, R>): Stream.Stream<HarnessEvent, E, R> =>
  Stream.takeUntil(events, (event) => event._tag === "Limited")

/** Runs each iteration as one process of the agent's program, the prompt on its stdin, in its own process group. */
export const layer = (agent: AgentHarness): Layer.Layer<
  HarnessService,
  never,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem
> =>
  Layer.effect(
    HarnessService,
    Effect.gen(function*() {
      const executor = yield* CommandExecutor.CommandExecutor
      const fs = yield* FileSystem.FileSystem
      const harness = agent.program.harness
      const resolve = resolveAgent(agent.program).pipe(Effect.provideService(FileSystem.FileSystem, fs))
      return {
        name: harness,
        reports: agent.reports,
        preflight: Effect.zipRight(resolve, agent.check ?? Effect.void),
        run: (request) =>
          Stream.unwrap(Effect.map(Effect.zip(resolve, Effect.clock), ([command, clock]) => {
            const output = agent.output(request, () => clock.unsafeCurrentTimeMillis())
            return runProcess(executor, {
              harness,
              command,
              args: agent.args(request),
              cwd: request.cwd,
              env: {
                ...agent.env,
                SPOOL_CHANGE: request.changeId,
                SPOOL_ITERATION: String(request.iteration)
              },
              stdin: request.prompt
            }).pipe(Stream.mapConcat(output.feed), (events) => agent.endsOnLimit === true ? untilLimited(events) : events)
          }))
      }
    })
  )
