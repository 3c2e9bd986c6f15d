import { CommandExecutor, FileSystem } from "@effect/platform"
import { Chunk, Effect, Layer, Option, Ref, Stream } from "effect"
import { type AgentProgram, resolveAgent } from "./AgentProgram.js"
import { runProcess } from "./HarnessProcess.js"
import { HarnessError, type HarnessEvent, type HarnessRequest, HarnessService } from "./HarnessService.js"

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

/** A reader of one run's output: each raw event in, the events it means out. */
export interface AgentReader {
  readonly feed: (event: HarnessEvent) => Array<HarnessEvent>
  /**
   * What the run's report file says (`AgentHarness.report`): its text, null when the agent wrote
   * none; read once the agent has exited, its events come before `Exited` (or, for a run cut at a
   * limit, once the agent has stopped, before the `Limited`).
   */
  readonly report?: (text: string | null) => Array<HarnessEvent>
  /**
   * The limit that ended the run (`endsOnLimit`), completed from the run's log (`AgentHarness.log`):
   * its text, null when the agent wrote none; read once the agent has stopped.
   */
  readonly limit?: (limited: Limited, log: string | null) => Limited
}

type Limited = Extract<HarnessEvent, { _tag: "Limited" }>

/**
 * A log the agent writes of each run, in a directory made for the run under `dir` and kept after it,
 * as the agent's own logs are. It is read for what the agent's output leaves out of a limit that
 * ends the run (copilot logs a 429's retry-after and prints it nowhere).
 */
export interface RunLog {
  readonly dir: string
  /** The arguments that have the agent log into `dir`, after those of `args`. */
  readonly args: (dir: string) => ReadonlyArray<string>
}

/**
 * A file the agent writes at the end of its run about what its output leaves out (its usage): each
 * run names one in a private directory made under `dir`, which the agent may write (inside spool's
 * sandbox too), and removed with it after the run.
 */
export interface RunReport {
  readonly dir: string
  /** The arguments that ask the agent for the file at `file`, after those of `args`. */
  readonly args: (file: string) => ReadonlyArray<string>
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
  readonly output: (request: HarnessRequest, now: () => number) => AgentReader
  /** A report file the agent writes of each run, read by the reader's `report`. */
  readonly report?: RunReport
  /** A log the agent writes of each run, read by the reader's `limit` when a limit ends the run. */
  readonly log?: RunLog
  /**
   * The agent goes on retrying a usage or rate limit by itself, for minutes or a whole reset: its
   * run ends at the first `Limited` its output reads (the agent and all it started are stopped), so
   * the loop's limit rules (wait, fall back) apply at once. The run then ends with no `Exited`: its
   * report, when the agent wrote one as it was stopped, and then the `Limited` (completed from its
   * log) come last.
   */
  readonly endsOnLimit?: boolean
}

/** The events of a run up to its first `Limited`, that one included. */
export const untilLimited = <E, R>(events: Stream.Stream<HarnessEvent, E, R>): Stream.Stream<HarnessEvent, E, R> =>
  Stream.takeUntil(events, (event) => event._tag === "Limited")

/**
 * The events of a run up to its first `Limited`, which is held until the agent has stopped (the
 * stream before it has ended); then `after` says what it comes with: the run's report, and the
 * limit completed from the agent's log.
 */
export const untilLimitedThen = <E, R>(
  events: Stream.Stream<HarnessEvent, E, R>,
  after: (limited: Limited) => Effect.Effect<ReadonlyArray<HarnessEvent>>
): Stream.Stream<HarnessEvent, E, R> =>
  Stream.unwrap(Effect.map(Ref.make<Limited | null>(null), (held) =>
    untilLimited(events).pipe(
      Stream.filterEffect((event) => event._tag === "Limited" ? Effect.as(Ref.set(held, event), false) : Effect.succeed(true)),
      Stream.concat(Stream.fromIterableEffect(Effect.flatMap(Ref.get(held), (limited) => limited === null ? Effect.succeed([]) : after(limited))))
    )
  ))

/** A directory for one run's log under `log.dir` (made when missing), kept after the run. */
const logDirectory = (fs: FileSystem.FileSystem, harness: string, log: RunLog) =>
  fs.makeDirectory(log.dir, { recursive: true }).pipe(
    Effect.zipRight(fs.makeTempDirectory({ directory: log.dir, prefix: "spool-run-" })),
    Effect.mapError((error) => new HarnessError({ harness, reason: "Io", detail: `its log cannot be kept in ${log.dir}: ${error.message}` }))
  )

/** The report's text, or null when the agent wrote none. */
const readReport = (fs: FileSystem.FileSystem, file: string): Effect.Effect<string | null> =>
  fs.readFileString(file).pipe(Effect.option, Effect.map(Option.getOrNull))

/** The text of every file the agent logged in `dir` (hidden ones, such as a lock, left out), or null when it has none. */
const readLog = (fs: FileSystem.FileSystem, dir: string): Effect.Effect<string | null> =>
  fs.readDirectory(dir).pipe(
    Effect.flatMap((names) => Effect.forEach(names.filter((name) => !name.startsWith(".")).sort(), (name) => fs.readFileString(`${dir}/${name}`))),
    Effect.map((texts) => texts.length === 0 ? null : texts.join("\n")),
    Effect.orElseSucceed(() => null)
  )

/** A private directory for one run's report under `report.dir` (made when missing), removed with the scope; the file's path in it. */
const reportFile = (fs: FileSystem.FileSystem, harness: string, report: RunReport) =>
  fs.makeDirectory(report.dir, { recursive: true }).pipe(
    Effect.zipRight(fs.makeTempDirectoryScoped({ directory: report.dir, prefix: "spool-run-" })),
    Effect.map((dir) => `${dir}/report.json`),
    Effect.mapError((error) => new HarnessError({ harness, reason: "Io", detail: `its report cannot be kept in ${report.dir}: ${error.message}` }))
  )

/** The run's output read, and at the agent's exit its report too: the report's events come before `Exited`, which stays last. */
const feedWithReport = <E, R>(
  events: Stream.Stream<HarnessEvent, E, R>,
  reader: Required<Pick<AgentReader, "feed" | "report">>,
  text: Effect.Effect<string | null>
): Stream.Stream<HarnessEvent, E, R> => {
  const feed = (chunk: Chunk.Chunk<HarnessEvent>) => Chunk.flatMap(chunk, (event) => Chunk.unsafeFromArray(reader.feed(event)))
  return Stream.mapChunksEffect(events, (chunk) => {
    if (!Chunk.some(chunk, (event) => event._tag === "Exited")) return Effect.succeed(feed(chunk))
    return Effect.map(text, (report) => {
      const fed = Chunk.toArray(feed(chunk))
      return Chunk.unsafeFromArray([...fed.slice(0, -1), ...reader.report(report), ...fed.slice(-1)])
    })
  })
}

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
          Stream.unwrapScoped(Effect.gen(function*() {
            const command = yield* resolve
            const clock = yield* Effect.clock
            const output = agent.output(request, () => clock.unsafeCurrentTimeMillis())
            const report = agent.report === undefined ? null : { ...agent.report, file: yield* reportFile(fs, harness, agent.report) }
            const log = agent.log === undefined ? null : { ...agent.log, path: yield* logDirectory(fs, harness, agent.log) }
            const events = runProcess(executor, {
              harness,
              command,
              args: [...agent.args(request), ...(log === null ? [] : log.args(log.path)), ...(report === null ? [] : report.args(report.file))],
              cwd: request.cwd,
              env: {
                ...agent.env,
                SPOOL_CHANGE: request.changeId,
                SPOOL_ITERATION: String(request.iteration)
              },
              stdin: request.prompt
            })
            const read = report === null || output.report === undefined
              ? Stream.mapConcat(events, output.feed)
              : feedWithReport(events, { feed: output.feed, report: output.report }, readReport(fs, report.file))
            if (agent.endsOnLimit !== true) return read
            // A run cut at a limit: what the agent wrote as it was stopped, its report and its log, is read then.
            const { limit: complete, report: reportOf } = output
            const reported = report === null || reportOf === undefined
              ? Effect.succeed([])
              : Effect.map(readReport(fs, report.file), reportOf)
            const completed = (limited: Limited) =>
              log === null || complete === undefined ? Effect.succeed(limited) : Effect.map(readLog(fs, log.path), (text) => complete(limited, text))
            return untilLimitedThen(read, (limited) => Effect.zipWith(reported, completed(limited), (events, last) => [...events, last]))
          }))
      }
    })
  )
