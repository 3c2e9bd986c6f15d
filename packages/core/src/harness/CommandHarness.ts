import { CommandExecutor, FileSystem } from "@effect/platform"
import { Effect, Layer, Stream } from "effect"
import { resolveProgram } from "./AgentProgram.js"
import { runProcess } from "./HarnessProcess.js"
import { HarnessService } from "./HarnessService.js"

export interface CommandHarnessOptions {
  /** The agent's argv: program first. */
  readonly argv: readonly [string, ...Array<string>]
  readonly pathEnv: string | undefined
  /** `--model`, passed to the program as `SPOOL_MODEL`. */
  readonly model?: string | null
  /** `--allow-all`, passed to the program as `SPOOL_ALLOW_ALL=1`. */
  readonly allowAll?: boolean
}

/**
 * The generic harness: runs any program with the prompt on stdin, and the loop's settings in its
 * environment (`SPOOL_CHANGE`, `SPOOL_ITERATION`, `SPOOL_MODEL`, `SPOOL_ALLOW_ALL`). Its stdout is what the agent
 * says (searched for the promise); stderr is shown and logged but never searched.
 */
export const layer = (options: CommandHarnessOptions) =>
  Layer.effect(
    HarnessService,
    Effect.gen(function*() {
      const executor = yield* CommandExecutor.CommandExecutor
      const fs = yield* FileSystem.FileSystem
      const [program, ...args] = options.argv
      const resolve = resolveProgram(program, options.pathEnv, "command").pipe(
        Effect.provideService(FileSystem.FileSystem, fs)
      )
      return {
        name: "command",
        // A plain program reports no usage.
        reports: { cost: false, tokens: false },
        preflight: Effect.asVoid(resolve),
        run: (request) =>
          Stream.unwrap(Effect.map(resolve, (command) =>
            runProcess(executor, {
              harness: "command",
              command,
              args,
              cwd: request.cwd,
              env: {
                SPOOL_CHANGE: request.changeId,
                SPOOL_ITERATION: String(request.iteration),
                ...(options.model == null ? {} : { SPOOL_MODEL: options.model }),
                ...(options.allowAll === true ? { SPOOL_ALLOW_ALL: "1" } : {})
              },
              stdin: request.prompt,
              plain: true
            })
          ))
      }
    })
  )
