import { CliConfig, CommandDescriptor, HelpDoc, ValidationError } from "@effect/cli"
import { Effect, Either, Option } from "effect"
import { readCommandLine } from "./CommandLine.js"
import { type CommandSpec, version } from "./Commands.js"
import { completionScript } from "./Completions.js"
import { handler, loop, ralph } from "./commands/ralph.js"
import { Outcome } from "./ExitCode.js"
import { describeFailure } from "./Failure.js"
import { commandHelp, rootHelp } from "./Help.js"
import { Invocation } from "@spool/app/host"
import { withTarget } from "./ralph/Options.js"
import { applySettings, readSettings, SettingsOrigin } from "./ralph/Settings.js"
import { locate } from "./ralph/WorktreeLocation.js"
import { TerminalReporter } from "./TerminalReporter.js"
import { UsageError } from "./UsageError.js"

const runnable = { ralph, loop } as const

// spool has checked the command line already: the parser only converts it, to the letter.
const config = CliConfig.make({ isCaseSensitive: true, autoCorrectLimit: 0 })

const print = (text: string) => Effect.as(Effect.flatMap(TerminalReporter, (terminal) => terminal.print(text)), Outcome.Done())
const stdoutPalette = Effect.map(TerminalReporter, (terminal) => terminal.stdoutPalette)

const firstLine = (error: ValidationError.ValidationError) =>
  HelpDoc.toAnsiText(error.error).replace(/\x1b\[[0-9;]*m/g, "").split("\n").find((line) => line.trim() !== "")?.trim()

/** A checked command line of `ralph` or `loop` (`--name value ... -- operands`), as @effect/cli reads it. */
export const parseRun = (command: CommandSpec, args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const target = runnable[command.name as keyof typeof runnable]
    const directive = yield* CommandDescriptor.parse(target.descriptor, [command.name, ...args], config).pipe(
      Effect.mapError((error) => new UsageError({ message: `${firstLine(error) ?? "the command line cannot be read"} (see spool ${command.name} --help)` }))
    )
    if (directive._tag === "BuiltIn" || directive.leftover.length > 0) {
      return yield* new UsageError({ message: `the command line cannot be read (see spool ${command.name} --help)` })
    }
    return withTarget(directive.value)
  })

/**
 * `spool <argv>`: help, version and completion scripts answered here, commands parsed by @effect/cli and
 * run. It ends with how it ended (`exitCodeOf` makes that the exit code), or fails with what went wrong.
 */
export const run = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const request = readCommandLine(argv.slice(2))
    if (Either.isLeft(request)) return yield* request.left
    switch (request.right._tag) {
      case "RootHelp":
        return yield* print(rootHelp(yield* stdoutPalette))
      case "CommandHelp":
        return yield* print(commandHelp(request.right.command, yield* stdoutPalette))
      case "Version":
        return yield* print(version)
      case "Completions":
        return yield* print(completionScript(request.right.shell).trimEnd())
      case "Run": {
        const { args, command, given } = request.right
        const parsed = yield* parseRun(command, args)
        // The repository's settings, checked before anything runs; the command line wins option by option.
        const settings = applySettings(
          parsed,
          given,
          yield* readSettings(locate((yield* Invocation).cwd).workspaceCwd, Option.getOrNull(parsed.layout))
        )
        return yield* handler(withTarget(settings.args)).pipe(
          Effect.provideService(SettingsOrigin, settings.source),
          Effect.catchTags({
            UsageError: (error) => Effect.fail(settings.blame(error)),
            RequestError: (error) => Effect.fail(settings.blame(error))
          })
        )
      }
    }
  })

/**
 * `spool <argv>` to its end: a failure is told in one `spool:` line; how it ended is the result, for
 * `exitCodeOf`. `describeFailure` takes only a `Failure`: an error `run` can fail with that has no
 * ending there is a compile error here.
 */
export const main = (argv: ReadonlyArray<string>) =>
  run(argv).pipe(
    Effect.catchAll((error) =>
      Effect.flatMap(TerminalReporter, (terminal) =>
        Effect.sync(() => {
          const failure = describeFailure(error)
          terminal.error(failure.message)
          return failure.outcome
        }))
    )
  )
