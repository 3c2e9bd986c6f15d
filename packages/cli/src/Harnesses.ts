import { CommandHarness, splitArgs } from "@spool/core"
import { ClaudeHarness } from "@spool/harness-claude"
import { CodexHarness } from "@spool/harness-codex"
import { GeminiHarness } from "@spool/harness-gemini"
import { OpencodeHarness } from "@spool/harness-opencode"
import { PiHarness } from "@spool/harness-pi"
import { Effect } from "effect"
import { UsageError } from "./UsageError.js"

export interface HarnessSettings {
  readonly model: string | null
  readonly allowAll: boolean
  readonly harnessCommand: string | null
}

/** What every agent harness takes: the settings, the program named by `variable` (else PATH). */
const agentOptions = (settings: HarnessSettings, variable: string) => ({
  model: settings.model,
  allowAll: settings.allowAll,
  binary: process.env[variable]?.trim() || null,
  pathEnv: process.env.PATH
})

/** The harnesses `--harness` can name, each described by how its layer is made from the settings. */
export const harnesses = {
  opencode: (settings: HarnessSettings) =>
    Effect.succeed(OpencodeHarness.layer(agentOptions(settings, "SPOOL_OPENCODE_BIN"))),
  claude: (settings: HarnessSettings) =>
    Effect.succeed(ClaudeHarness.layer({
      ...agentOptions(settings, "SPOOL_CLAUDE_BIN"),
      runsAsRoot: process.getuid?.() === 0,
      isSandbox: process.env.IS_SANDBOX
    })),
  codex: (settings: HarnessSettings) =>
    Effect.succeed(CodexHarness.layer(agentOptions(settings, "SPOOL_CODEX_BIN"))),
  gemini: (settings: HarnessSettings) =>
    Effect.succeed(GeminiHarness.layer(agentOptions(settings, "SPOOL_GEMINI_BIN"))),
  pi: (settings: HarnessSettings) =>
    Effect.succeed(PiHarness.layer(agentOptions(settings, "SPOOL_PI_BIN"))),
  command: (settings: HarnessSettings) =>
    Effect.gen(function*() {
      if (settings.harnessCommand === null || settings.harnessCommand.trim() === "") {
        return yield* new UsageError({
          message: "--harness command needs --harness-command \"<program> <args>\" naming the agent to run"
        })
      }
      const argv = splitArgs(settings.harnessCommand)
      if (argv === null || argv.length === 0) {
        return yield* new UsageError({ message: "--harness-command has an unterminated quote; close it and try again" })
      }
      const [program, ...args] = argv
      return CommandHarness.layer({
        argv: [program!, ...args],
        pathEnv: process.env.PATH,
        model: settings.model,
        allowAll: settings.allowAll
      })
    })
} as const

export type HarnessName = keyof typeof harnesses
export const harnessNames = Object.keys(harnesses) as ReadonlyArray<HarnessName>

export const harnessLayer = (name: string, settings: HarnessSettings) =>
  Object.hasOwn(harnesses, name)
    ? harnesses[name as HarnessName](settings)
    : Effect.fail(new UsageError({ message: `unknown harness '${name}'; known harnesses: ${harnessNames.join(", ")}` }))
