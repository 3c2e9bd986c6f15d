import { FileSystem } from "@effect/platform"
import { Effect, Option } from "effect"
import { HarnessError } from "./HarnessService.js"

/** Finds a program the way a shell would: a path with a `/` as given, otherwise the first match on PATH. */
export const resolveProgram = (program: string, pathEnv: string | undefined, harness: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const candidates = program.includes("/")
      ? [program]
      : (pathEnv ?? "").split(":").filter((dir) => dir !== "").map((dir) => `${dir}/${program}`)
    for (const candidate of candidates) {
      const info = yield* fs.stat(candidate).pipe(Effect.option)
      if (Option.isSome(info) && info.value.type === "File") {
        if ((info.value.mode & 0o111) === 0) {
          return yield* new HarnessError({ harness, reason: "NotExecutable", detail: `'${candidate}' is not executable (chmod +x it)` })
        }
        return candidate
      }
    }
    return yield* new HarnessError({ harness, reason: "NotFound", detail: `'${program}' was not found${program.includes("/") ? "" : " on PATH"}` })
  })

/** Where an agent's program is looked for, and what to say when it is missing. */
export interface AgentProgram {
  readonly harness: string
  /** The program's name on PATH (`opencode`). */
  readonly program: string
  /** The environment variable that may name it instead (`SPOOL_OPENCODE_BIN`). */
  readonly envVar: string
  /** The variable's value, or null when it is not set. */
  readonly binary: string | null
  readonly pathEnv: string | undefined
  /** How to install it, e.g. "install it with `npm install -g opencode-ai`". */
  readonly install: string
}

/** Finds an agent's program (the variable's path, else PATH); when it is missing, says how to install it. */
export const resolveAgent = (agent: AgentProgram) =>
  resolveProgram(agent.binary ?? agent.program, agent.pathEnv, agent.harness).pipe(
    Effect.catchTag("HarnessError", (error) => {
      if (error.reason !== "NotFound") return Effect.fail(error)
      const hint = `${agent.install}, or set ${agent.envVar} to its path`
      return Effect.fail(
        new HarnessError({
          harness: agent.harness,
          reason: "NotFound",
          detail: agent.binary === null
            ? `'${agent.program}' was not found on PATH; ${hint}`
            : `${agent.envVar} is '${agent.binary}', which does not exist; ${hint}`
        })
      )
    })
  )
