import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Ref, Stream, TestClock } from "effect"
import { type CheckRequest, CheckRunner } from "../src/verify/CheckRunner.js"
import { ContextStore } from "../src/state/ContextStore.js"
import type { IterationRecord, LoopOptions, SandboxNote } from "../src/domain/Domain.js"
import { ErrorJournal } from "../src/state/ErrorJournal.js"
import { type GitSnapshot, GitError, GitSummary } from "../src/git/GitSummary.js"
import { HarnessEvent, type HarnessRequest, HarnessService, outputOf, scriptedRun } from "../src/harness/HarnessService.js"
import { HistoryStore } from "../src/state/HistoryStore.js"
import type { SpendGuard } from "../src/guards/Guards.js"
import { type IterationContext, listPaths, runIteration } from "../src/loop/Iteration.js"
import type { JournalEntry } from "../src/state/JournalEntry.js"
import { formatBanner, formatSummary } from "../src/loop/LoopFormat.js"
import { LoopReporter } from "../src/output/LoopReporter.js"
import { PromptBuilder, renderPrompt } from "../src/prompt/PromptBuilder.js"
import { parseTasks } from "../src/prompt/Tasks.js"
import { ReviewGit } from "../src/review/ReviewGit.js"
import { changeId, done, options, runWith } from "./loopFixture.js"

type Events = ReadonlyArray<HarnessEvent> | Stream.Stream<HarnessEvent>

/** A GitSummary like `GitSummary.layerTest(test)`, with some of its operations replaced. */
const gitWith = (
  test: Parameters<typeof GitSummary.layerTest>[0],
  replace: (git: GitSummary["Type"]) => Partial<GitSummary["Type"]>
) => Layer.effect(GitSummary, Effect.map(GitSummary, (git) => ({ ...git, ...replace(git) }))).pipe(Layer.provide(GitSummary.layerTest(test)))

/**
 * Runs one iteration (number `iteration`, default 1) against in-memory stores, a harness that
 * plays `events` and fake inputs: `tasks` are what tasks.md holds at each read (the last one stays).
 */
const iterate = (
  events: (request: HarnessRequest) => Events,
  setup: {
    readonly options?: Partial<LoopOptions>
    readonly git?: Layer.Layer<GitSummary>
    readonly tasks?: ReadonlyArray<string>
    readonly documents?: ReadonlyArray<string>
    readonly notes?: ReadonlyArray<string>
    readonly journaled?: ReadonlyArray<JournalEntry>
    readonly lastSnapshot?: GitSnapshot | null
    readonly ownerWork?: ReadonlyArray<string>
    readonly uncommitted?: ReadonlyArray<string>
    readonly loopStartedAt?: number
    readonly iteration?: number
    readonly checks?: Layer.Layer<CheckRunner>
    /** Builds the prompts (the real builder unless given). */
    readonly prompts?: Layer.Layer<PromptBuilder>
    /** Stops the agent with a spend cap once it succeeds. */
    readonly stopWhen?: Effect.Effect<SpendGuard>
    /** Receives every record the iteration appends to the history. */
    readonly appended?: Array<IterationRecord>
    /** The run's walls (`--sandbox`); none unless given. */
    readonly sandbox?: SandboxNote
  } = {}
) =>
  Effect.gen(function*() {
    const prompts: Array<string> = []
    const output: Array<string> = []
    const logged: Array<string> = []
    const harness = Layer.succeed(HarnessService, {
      name: "test",
      reports: { cost: true, tokens: true },
      preflight: Effect.void,
      run: (request) =>
        Stream.suspend(() => {
          prompts.push(request.prompt)
          const answer = events(request)
          return Array.isArray(answer) ? Stream.fromIterable(answer) : (answer as Stream.Stream<HarnessEvent>)
        })
    })
    const history = Layer.effect(
      HistoryStore,
      Effect.map(HistoryStore, (store) => ({
        ...store,
        openLog: (id: typeof changeId, run: string, iteration: number) =>
          Effect.map(store.openLog(id, run, iteration), (log) => ({ ...log, write: (text: string | Uint8Array) => Effect.sync(() => void logged.push(String(text))) })),
        append: (id: typeof changeId, record: IterationRecord) => Effect.zipRight(Effect.sync(() => void setup.appended?.push(record)), store.append(id, record))
      }))
    ).pipe(Layer.provideMerge(HistoryStore.layerMemory))
    const layer = Layer.mergeAll(
      harness,
      setup.git ?? GitSummary.layerTest(),
      setup.prompts ?? PromptBuilder.layer,
      LoopReporter.layerTest(output),
      setup.checks ?? CheckRunner.layerTest(() => ({ exitCode: 0, signal: null, timedOut: false, durationMs: 0, output: "" })),
      ContextStore.layerMemory,
      ErrorJournal.layerMemory,
      history
    )
    const tasksRead = yield* Ref.make(0)
    const taskTexts = setup.tasks ?? []
    const ctx: IterationContext = {
      input: {
        change: { id: changeId, moduleId: null, dir: "/repo/.spool/changes/x", proposalPath: "proposal.md", tasksPath: "tasks.md", modulePath: null },
        userPrompt: "Build it.",
        options: options(setup.options),
        cwd: "/repo",
        pid: 42,
        redact: (text) => text,
        ...(setup.sandbox === undefined ? {} : { sandbox: setup.sandbox })
      },
      runId: "run-1",
      loopStartedAt: setup.loopStartedAt ?? 0,
      inputs: {
        readDocument: (path) => Effect.succeed(`# ${path}\n`),
        readTasks: Effect.map(Ref.getAndUpdate(tasksRead, (n) => n + 1), (n) =>
          parseTasks(taskTexts.length === 0 ? null : taskTexts[Math.min(n, taskTexts.length - 1)]!)),
        readQuoted: Effect.succeed([]),
        otherDocuments: Effect.succeed(setup.documents ?? []),
        gitOrWarn: (effect, fallback) => Effect.catchAll(effect, () => Effect.succeed(fallback))
      },
      runStart: yield* Ref.make<GitSnapshot | null>(null),
      lastSnapshot: yield* Ref.make(setup.lastSnapshot ?? null),
      journaled: yield* Ref.make(setup.journaled ?? []),
      ownerWork: yield* Ref.make<ReadonlySet<string>>(new Set(setup.ownerWork ?? [])),
      uncommitted: yield* Ref.make(setup.uncommitted ?? []),
      setIteration: () => Effect.void
    }
    const watch = {
      onStart: Effect.void,
      onUsage: () => Effect.void,
      stopWhen: setup.stopWhen ?? Effect.never,
      waitForLimit: () => Effect.dieMessage("no reviewer here")
    }
    return yield* Effect.gen(function*() {
      const agent = { id: "test", harness: "test", model: null, service: yield* HarnessService }
      const result = yield* runIteration(ctx, setup.iteration ?? 1, setup.notes ?? [], [], watch, agent)
      const journal = yield* (yield* ErrorJournal).read(changeId)
      return {
        result,
        record: result.record,
        prompt: prompts[0]!,
        output: output.join(""),
        logged: logged.join(""),
        journal,
        lastSnapshot: yield* Ref.get(ctx.lastSnapshot),
        ownerWork: [...(yield* Ref.get(ctx.ownerWork))],
        uncommitted: yield* Ref.get(ctx.uncommitted)
      }
    }).pipe(Effect.provide(layer))
  })

const change = (files: ReadonlyArray<string>) => ({ changedFiles: files.length, files, insertions: 1, deletions: 0 })
const agentSays = (text: string, exitCode: number | null = 0, signal: string | null = null) => [
  HarnessEvent.AgentText({ text }),
  HarnessEvent.Exited({ exitCode, signal })
]

describe("listPaths", () => {
  it("lists up to five paths, then says how many more", () => {
    assert.strictEqual(listPaths(["a", "b", "c", "d", "e"]), "a, b, c, d, e")
    assert.strictEqual(listPaths(["a", "b", "c", "d", "e", "f", "g"]), "a, b, c, d, e and 2 more")
    assert.strictEqual(listPaths(["a", "b", "c"], 2), "a, b and 1 more")
  })
})

describe("one iteration", () => {
  it.effect("tells the next prompt why a claim was set aside: the signal, the exit code, or what the agent reported", () =>
    Effect.gen(function*() {
      const tail = "so the claim was set aside. Fix the failure, check that everything passes, and only then claim completion again."
      const killed = yield* iterate(() => agentSays(done, null, "SIGTERM"))
      assert.deepStrictEqual(killed.result.notes, [
        `In iteration 1 you printed the completion promise, but the run failed (it was killed by SIGTERM), ${tail}`
      ])
      const exited = yield* iterate(() => agentSays(done, 3), { iteration: 4 })
      assert.deepStrictEqual(exited.result.notes, [`In iteration 4 you printed the completion promise, but the run failed (exit code 3), ${tail}`])
      const reported = yield* iterate(() => [
        HarnessEvent.AgentText({ text: done }),
        HarnessEvent.Failed({ message: "quota gone" }),
        HarnessEvent.Exited({ exitCode: 0, signal: null })
      ])
      assert.deepStrictEqual(reported.result.notes, [
        `In iteration 1 you printed the completion promise, but the run failed (the agent reported: quota gone), ${tail}`
      ])
      assert.strictEqual(reported.record.outcome, "failed")
      assert.strictEqual(reported.result.facts.failure, "quota gone")
      // A failed run without a claim has nothing to set aside.
      const plain = yield* iterate(() => agentSays("broken\n", 1))
      assert.deepStrictEqual(plain.result.notes, [])
    }))

  it.effect("sets aside the claim of an agent that went silent past the inactivity timeout", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(
        iterate(() => Stream.concat(Stream.make(HarnessEvent.AgentText({ text: done })), Stream.never), { options: { inactivityTimeoutMs: 60_000 } })
      )
      yield* TestClock.adjust("2 minutes")
      const { record, result } = yield* Fiber.join(fiber)
      assert.strictEqual(record.outcome, "timeout")
      assert.deepStrictEqual(result.notes, [
        "In iteration 1 you printed the completion promise, but the run failed (it timed out), so the claim was set aside. " +
        "Fix the failure, check that everything passes, and only then claim completion again."
      ])
    }))

  it.effect("tells the agent exactly how a claim looks when its promise was not taken", () =>
    Effect.gen(function*() {
      const { result } = yield* iterate(() => agentSays("done <promise>COMPLETE</promise> I think\n"), { iteration: 2 })
      assert.strictEqual(result.notes.length, 1)
      assert.match(
        result.notes[0]!,
        /^In iteration 2 your completion promise was not accepted: "done <promise>COMPLETE<\/promise> I think" \(.+\)\. When, and only when, everything is done, print <promise>COMPLETE<\/promise> alone on its own line, after a sentence that says the work is complete; a promise inside a sentence, deferred, quoted or in code is not a claim\.$/
      )
    }))

  it.effect("names at most 30 other documents of the change, then how many more there are", () =>
    Effect.gen(function*() {
      const paths = (n: number) => Array.from({ length: n }, (_, i) => `.spool/changes/x/d${String(i + 1).padStart(2, "0")}.md`)
      const header = "## Other documents of the change\n\nRead these as well: a change's design and acceptance criteria (its spec deltas) are in them.\n"
      const thirty = yield* iterate(() => scriptedRun(done), { documents: paths(30) })
      assert.isTrue(thirty.prompt.endsWith(`${header}${paths(30).map((p) => `- ${p}`).join("\n")}\n`))
      assert.notInclude(thirty.prompt, "more under")
      const more = yield* iterate(() => scriptedRun(done), { documents: paths(32) })
      assert.include(more.prompt, `${header}${paths(30).map((p) => `- ${p}`).join("\n")}\n- and 2 more under .spool/changes/${changeId}/\n`)
      assert.notInclude(more.prompt, "d31.md")
      const none = yield* iterate(() => scriptedRun(done))
      assert.notInclude(none.prompt, "Other documents")
    }))

  it.effect("shows each note from the loop on its own line, and the checks only when there are some", () =>
    Effect.gen(function*() {
      const { prompt } = yield* iterate(() => scriptedRun(done), { notes: ["first note", "second note"] })
      assert.include(prompt, "## Notes from the loop\n\n- first note\n- second note\n")
      assert.notInclude(prompt, "How your claim is checked")
      const checked = yield* iterate(() => scriptedRun(done), { options: { verify: ["pnpm test"] } })
      assert.include(checked.prompt, "## How your claim is checked")
    }))

  it.effect("asks git for recent commits only when --history-count is above 0 and there is a repository", () =>
    Effect.gen(function*() {
      const commits = [{ hash: "h0", subject: "first", author: "Ada", date: "2026-11-01T10:00:00Z" }]
      const calls: Array<{ count: number; includeMerges: boolean }> = []
      const none = yield* iterate(() => scriptedRun(done), { options: { historyCount: 0 }, git: GitSummary.layerTest({ commits, historyCalls: calls }) })
      assert.deepStrictEqual(calls, [])
      assert.notInclude(none.prompt, "Recent commits")
      const noRepo = yield* iterate(() => scriptedRun(done), {
        git: gitWith({ commits, historyCalls: calls }, () => ({ repository: false }))
      })
      assert.deepStrictEqual(calls, [])
      assert.notInclude(noRepo.prompt, "Recent commits")
      const some = yield* iterate(() => scriptedRun(done), { options: { historyCount: 1 }, git: GitSummary.layerTest({ commits, historyCalls: calls }) })
      assert.deepStrictEqual(calls, [{ count: 1, includeMerges: false }])
      assert.include(some.prompt, "## Recent commits")
    }))

  it.effect("takes a promise the agent repeats from the previous errors as a claim, and an echo of the notes as an echo", () =>
    Effect.gen(function*() {
      const entry: JournalEntry = {
        timestamp: "2026-11-01T10:00:00.000Z",
        run: "run-0",
        iteration: 1,
        exitCode: 1,
        signal: null,
        timedOut: false,
        error: null,
        taskId: null,
        taskDescription: null,
        stderr: "",
        stdout: done,
        check: null
      }
      const repeated = yield* iterate(() => scriptedRun(done), { journaled: [entry], options: { historyCount: 0 }, iteration: 2 })
      assert.include(repeated.prompt, "## Previous errors")
      assert.strictEqual(repeated.record.outcome, "complete")
      const echo = "Everything is finished.\n<promise>COMPLETE</promise>"
      const echoed = yield* iterate(() => scriptedRun(`${echo}\n`), { journaled: [entry], notes: [`A note quoting a claim:\n${echo}`], iteration: 2 })
      assert.deepStrictEqual(echoed.record.promises.map((p) => [p.accepted, p.reason]), [[false, "echo of the prompt"]])
      assert.strictEqual(echoed.record.outcome, "continue")
    }))

  it.effect("recognises an agent echoing the prompt it was sent as an echo, however the prompt builder renders it", () =>
    Effect.gen(function*() {
      const failure: JournalEntry = {
        timestamp: "2026-11-01T10:00:00.000Z",
        run: "run-0",
        iteration: 1,
        exitCode: 1,
        signal: null,
        timedOut: false,
        error: null,
        taskId: null,
        taskDescription: null,
        stderr: "Error: 2 tests failed\n",
        stdout: "",
        check: null
      }
      // A builder of its own: a worked example of a claim heads its prompts, which the module's renderPrompt never writes.
      const example = "An iteration that finished the work ends like this:\nEverything is finished.\n<promise>COMPLETE</promise>"
      const prompts = Layer.succeed(PromptBuilder, { build: (input) => `${example}\n\n${renderPrompt(input)}` })
      const echoed = yield* iterate((request) => scriptedRun(request.prompt), { journaled: [failure], prompts, iteration: 2 })
      assert.isTrue(echoed.prompt.startsWith(example))
      assert.include(echoed.prompt, "## Previous errors")
      assert.isFalse(echoed.record.completionDetected)
      assert.isTrue(echoed.record.promises.length > 0)
      assert.deepStrictEqual(echoed.record.promises.filter((p) => p.reason === "echo of the prompt").map((p) => p.text), echoed.record.promises.map((p) => p.text))
      assert.strictEqual(echoed.record.outcome, "continue")
    }))

  it.effect("records an iteration of a sandboxed run as sandboxed, and says nothing of walls a run had not", () =>
    Effect.gen(function*() {
      const walls = { runtime: "sandbox-runtime", hosts: ["api.example.test"], denyRead: [], passEnv: [] }
      const walled = yield* iterate(() => agentSays("edited src/a.ts\n"), { sandbox: walls })
      assert.strictEqual(walled.record.sandboxed, true)
      const open = yield* iterate(() => agentSays("edited src/a.ts\n"))
      assert.notProperty(open.record, "sandboxed")
    }))

  it.effect("shows the elapsed time of the loop in the banner, and records how long the iteration took", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(100_000)
      const { output, record } = yield* iterate(
        () => Stream.concat(Stream.fromEffect(Effect.as(TestClock.adjust("5 seconds"), outputOf("stdout", "working\n", true))), Stream.make(HarnessEvent.Exited({ exitCode: 0, signal: null }))),
        { loopStartedAt: 35_000, iteration: 3 }
      )
      assert.include(output, "=== spool ralph: iteration 3/5 (elapsed 1m05s) ===")
      assert.strictEqual(record.durationMs, 5_000)
      assert.strictEqual(record.startedAt, "1970-01-01T00:01:40.000Z")
    }))

  it.effect("commits with a message naming the change and iteration, only when there is something to commit", () =>
    Effect.gen(function*() {
      const messages: Array<string> = []
      const git = gitWith({ changes: [change(["a.ts"])] }, (g) => ({
        commit: (message, paths) => Effect.zipRight(Effect.sync(() => void messages.push(message)), g.commit(message, paths))
      }))
      const made = yield* iterate(() => scriptedRun("working\n"), { git, iteration: 2 })
      assert.deepStrictEqual(messages, [`spool ralph: ${changeId} iteration 2`])
      assert.strictEqual(made.record.commit, "c0ffee1")
      const idle = yield* iterate(() => scriptedRun("working\n"), {
        git: gitWith({}, (g) => ({ commit: (message, paths) => Effect.zipRight(Effect.sync(() => void messages.push(message)), g.commit(message, paths)) }))
      })
      assert.deepStrictEqual(messages.length, 1)
      assert.strictEqual(idle.record.commit, null)
    }))

  it.effect("warns of the owner's files an iteration committed, by name and number, but not of the loop's own files", () =>
    Effect.gen(function*() {
      const one = yield* iterate(() => scriptedRun("working\n"), {
        git: GitSummary.layerTest({ changes: [change(["README.md", "src/a.ts"])] }),
        ownerWork: ["README.md", "notes.txt"],
        iteration: 2
      })
      assert.deepStrictEqual(one.record.warnings, [
        "committed README.md with iteration 2: the agent edited a file that already held uncommitted changes from before the loop started, so those changes are in this commit too"
      ])
      assert.deepStrictEqual(one.ownerWork, ["notes.txt"])
      const two = yield* iterate(() => scriptedRun("working\n"), {
        git: GitSummary.layerTest({ changes: [change(["README.md", "b.ts", ".spool/changes/x/tasks.md"])] }),
        ownerWork: ["README.md", "b.ts", ".spool/changes/x/tasks.md"]
      })
      assert.deepStrictEqual(two.record.warnings, [
        "committed README.md, b.ts with iteration 1: the agent edited files that already held uncommitted changes from before the loop started, so those changes are in this commit too"
      ])
      assert.deepStrictEqual(two.ownerWork, [])
      const own = yield* iterate(() => scriptedRun("working\n"), {
        git: GitSummary.layerTest({ changes: [change([".spool/changes/x/tasks.md"])] }),
        ownerWork: [".spool/changes/x/tasks.md", "README.md"]
      })
      assert.deepStrictEqual(own.record.warnings, [])
      assert.deepStrictEqual(own.ownerWork, ["README.md"])
    }))

  it.effect("keeps the owner's files as theirs when git had nothing to commit", () =>
    Effect.gen(function*() {
      const { record, ownerWork } = yield* iterate(() => scriptedRun("working\n"), {
        git: gitWith({ changes: [change(["README.md"])] }, () => ({ commit: () => Effect.succeed(null) })),
        ownerWork: ["README.md"]
      })
      assert.deepStrictEqual(record.warnings, [])
      assert.strictEqual(record.commit, null)
      assert.deepStrictEqual(ownerWork, ["README.md"])
    }))

  it.effect("counts ticked tasks, a claim and a commit as progress, and no change as none", () =>
    Effect.gen(function*() {
      const ticked = yield* iterate(() => scriptedRun("working\n"), { tasks: ["- [ ] 1.1 a\n- [ ] 1.2 b\n", "- [x] 1.1 a\n- [ ] 1.2 b\n"] })
      assert.strictEqual(ticked.result.facts.progress, true)
      // Open tasks are worth a warning only when the agent claims completion.
      assert.deepStrictEqual(ticked.record.warnings, [])
      const same = yield* iterate(() => scriptedRun("working\n"), { tasks: ["- [x] 1.1 a\n- [ ] 1.2 b\n"] })
      assert.strictEqual(same.result.facts.progress, false)
      const claimed = yield* iterate(() => scriptedRun(done, 1))
      assert.strictEqual(claimed.result.facts.progress, true)
      // A commit of what an earlier iteration left uncommitted is progress, though nothing changed now.
      const committed = yield* iterate(() => scriptedRun("working\n"), { uncommitted: ["a.ts"] })
      assert.strictEqual(committed.record.commit, "c0ffee1")
      assert.deepStrictEqual(committed.uncommitted, [])
      assert.strictEqual(committed.result.facts.progress, true)
      const changed = yield* iterate(() => scriptedRun("working\n"), { options: { commit: false }, git: GitSummary.layerTest({ changes: [change(["a.ts"])] }) })
      assert.strictEqual(changed.result.facts.progress, true)
      const unknown = yield* iterate(() => scriptedRun("working\n"), {
        git: gitWith({}, () => ({ changesSince: () => Effect.fail(new GitError({ operation: "diff", detail: "broken" })) }))
      })
      assert.strictEqual(unknown.result.facts.progress, null)
      assert.strictEqual(unknown.record.git, null)
      assert.strictEqual(unknown.lastSnapshot, null)
    }))

  it.effect("names a failed run's failure by the last line it printed on stderr", () =>
    Effect.gen(function*() {
      const { result } = yield* iterate(() => [
        outputOf("stderr", "first line\nsecond line\n  Error: the last one  \n\n"),
        HarnessEvent.Exited({ exitCode: 1, signal: null })
      ])
      assert.strictEqual(result.facts.failure, "Error: the last one")
      const silent = yield* iterate(() => scriptedRun("", 1))
      assert.strictEqual(silent.result.facts.failure, null)
    }))

  it.effect("does not count an agent cut short by a usage limit or a spend cap as failed, and sets its claim aside as cut short", () =>
    Effect.gen(function*() {
      const limited = yield* iterate(() => [
        HarnessEvent.AgentText({ text: done }),
        HarnessEvent.Limited({ message: "429 rate limited", resetAt: null, retryAfterMs: 1000, resets: true }),
        HarnessEvent.Exited({ exitCode: 1, signal: null })
      ])
      assert.strictEqual(limited.record.outcome, "limited")
      assert.strictEqual(limited.record.error, "429 rate limited")
      assert.deepStrictEqual(limited.record.promises.map((p) => [p.accepted, p.reason]), [[false, "the run was cut short"]])
      assert.isFalse(limited.record.completionDetected)
      assert.strictEqual(limited.result.facts.failure, null)
      assert.deepStrictEqual(limited.result.notes, [])
      assert.deepStrictEqual(limited.journal, [])
    }))

  it.effect("journals a failed run with its output and the task it was on", () =>
    Effect.gen(function*() {
      const { journal } = yield* iterate(() => [outputOf("stdout", "out\n", true), outputOf("stderr", "err\n"), HarnessEvent.Exited({ exitCode: 2, signal: null })], {
        tasks: ["- [x] 1.1 a\n- [ ] 1.2 Write docs\n"]
      })
      assert.strictEqual(journal.length, 1)
      assert.deepInclude(journal[0]!, { exitCode: 2, taskId: "1.2", taskDescription: "Write docs", stdout: "out\n", stderr: "err\n" })
    }))

  it.effect("prints the banner, the agent's output ended on a new line, and the summary, and nothing else for a plain run", () =>
    Effect.gen(function*() {
      const { output, record } = yield* iterate(() => [outputOf("stdout", "working", true), HarnessEvent.Exited({ exitCode: 0, signal: null })])
      assert.strictEqual(output, `${formatBanner(1, 5, 0)}\nworking\n${formatSummary(record)}\n`)
      const ended = yield* iterate(() => [outputOf("stdout", "working\n", true), HarnessEvent.Exited({ exitCode: 0, signal: null })])
      assert.strictEqual(ended.output, `${formatBanner(1, 5, 0)}\nworking\n${formatSummary(ended.record)}\n`)
    }))

  it.effect("writes the prompt to the iteration's log before the agent's output", () =>
    Effect.gen(function*() {
      const { logged, prompt } = yield* iterate(() => scriptedRun("working\n"), { iteration: 2 })
      assert.isTrue(logged.startsWith(`=== prompt (iteration 2) ===\n${prompt}\n=== output ===\n`))
    }))

  it.effect("says how many tasks are open when --require-tasks refuses a claim, and warns of them otherwise", () =>
    Effect.gen(function*() {
      const refused = yield* iterate(() => scriptedRun(done), { options: { requireTasks: true }, tasks: ["- [ ] 1.1 Write code\n- [ ] 1.2 Write docs\n"] })
      assert.strictEqual(refused.record.outcome, "continue")
      assert.include(refused.output, "completion refused: tasks.md still has 2 open tasks (--require-tasks)\n")
      assert.deepStrictEqual(refused.result.notes, [
        "In iteration 1 your completion claim was refused: tasks.md still has 2 open tasks (the first: 1.1 Write code). " +
        "Finish them, or mark them done or shelved in tasks.md, before you claim completion."
      ])
      const one = yield* iterate(() => scriptedRun(done), { tasks: ["- [x] 1.1 a\n- [ ] 1.2 b\n"] })
      assert.strictEqual(one.record.outcome, "complete")
      assert.deepStrictEqual(one.record.warnings, ["the agent claims completion, but tasks.md still has 1 open task"])
      const two = yield* iterate(() => scriptedRun(done), { tasks: ["- [ ] 1.1 a\n- [ ] 1.2 b\n"] })
      assert.deepStrictEqual(two.record.warnings, ["the agent claims completion, but tasks.md still has 2 open tasks"])
      // The tasks read after the agent ran count, not those it started with.
      const closed = yield* iterate(() => scriptedRun(done), { options: { requireTasks: true }, tasks: ["- [ ] 1.1 a\n", "- [x] 1.1 a\n"] })
      assert.strictEqual(closed.record.outcome, "complete")
      assert.deepStrictEqual(closed.record.warnings, [])
    }))

  it.effect("runs no checks and records none for a claim without --verify", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const { output, record } = yield* iterate(() => scriptedRun(done), {
        checks: CheckRunner.layerTest(() => ({ exitCode: 0, signal: null, timedOut: false, durationMs: 0, output: "" }), requests)
      })
      assert.strictEqual(record.outcome, "complete")
      assert.deepStrictEqual(requests, [])
      assert.isFalse("verify" in record)
      assert.notInclude(output, "checking the claim")
    }))

  it.effect("starts the checks on a new line, once, and takes the work tree after them as the next iteration's start", () =>
    Effect.gen(function*() {
      const git = gitWith({ changes: [change(["a.ts"])] }, () => ({ snapshot: Effect.succeed({ tree: "after-checks" }) }))
      const { lastSnapshot, output, record } = yield* iterate(
        () => [outputOf("stdout", "All done.\n<promise>COMPLETE</promise>", true), HarnessEvent.Exited({ exitCode: 0, signal: null })],
        { options: { verify: ["pnpm test"] }, git, lastSnapshot: { tree: "before" } }
      )
      assert.strictEqual(record.outcome, "complete")
      assert.deepStrictEqual(record.verify?.map((c) => [c.command, c.passed]), [["pnpm test", true]])
      assert.strictEqual(output, `${formatBanner(1, 5, 0)}\nAll done.\n<promise>COMPLETE</promise>\nchecking the claim: pnpm test\n${formatSummary(record)}\n`)
      assert.deepStrictEqual(lastSnapshot, { tree: "after-checks" })
      const atLineStart = yield* iterate(() => scriptedRun("All done.\n<promise>COMPLETE</promise>\n"), { options: { verify: ["pnpm test"] } })
      assert.strictEqual(
        atLineStart.output,
        `${formatBanner(1, 5, 0)}\nAll done.\n<promise>COMPLETE</promise>\nchecking the claim: pnpm test\n${formatSummary(atLineStart.record)}\n`
      )
      // Without checks, the work tree the agent left is the next start.
      const unchecked = yield* iterate(() => scriptedRun(done), { git, lastSnapshot: { tree: "before" } })
      assert.deepStrictEqual(unchecked.lastSnapshot, { tree: "test-tree" })
      // When git could not say what changed, the next iteration takes its own snapshot.
      const blind = yield* iterate(() => scriptedRun(done), {
        options: { verify: ["pnpm test"] },
        git: gitWith({}, () => ({ changesSince: () => Effect.fail(new GitError({ operation: "diff", detail: "broken" })) }))
      })
      assert.strictEqual(blind.lastSnapshot, null)
    }))

  it.effect("measures the agent's work from where the last iteration left the work tree, or from a snapshot when there is none", () =>
    Effect.gen(function*() {
      const seen: Array<GitSnapshot | null> = []
      const git = gitWith({}, (g) => ({
        snapshot: Effect.succeed({ tree: "now" }),
        changesSince: (before) => Effect.zipRight(Effect.sync(() => void seen.push(before)), g.changesSince(before))
      }))
      yield* iterate(() => scriptedRun("working\n"), { git, lastSnapshot: { tree: "left" } })
      yield* iterate(() => scriptedRun("working\n"), { git })
      assert.deepStrictEqual(seen, [{ tree: "left" }, { tree: "now" }])
    }))

  it.effect("journals a claim the checks rejected with the check's output, not the agent's", () =>
    Effect.gen(function*() {
      const checks = CheckRunner.layerTest(() => ({ exitCode: 1, signal: null, timedOut: false, durationMs: 0, output: "1 test failed\n" }))
      const { journal, record, result } = yield* iterate(
        () => [outputOf("stderr", "agent noise\n"), outputOf("stdout", done, true), HarnessEvent.Exited({ exitCode: 0, signal: null })],
        { options: { verify: ["pnpm test"] }, checks }
      )
      assert.strictEqual(record.outcome, "failed")
      assert.strictEqual(result.facts.failure, "verify failed: pnpm test (exit 1)")
      assert.strictEqual(journal.length, 1)
      assert.strictEqual(journal[0]!.stderr, "")
      assert.strictEqual(journal[0]!.stdout, "")
      assert.deepStrictEqual(journal[0]!.check, { command: "pnpm test", result: "exit 1, 0ms", output: "1 test failed\n" })
    }))

  it.effect("records a claim the checks rejected as a set-aside claim is: not detected, its promise not accepted and why, its checks kept", () =>
    Effect.gen(function*() {
      const checks = CheckRunner.layerTest(() => ({ exitCode: 1, signal: null, timedOut: false, durationMs: 4_200, output: "1 test failed\n" }))
      const rejected = yield* iterate(() => agentSays(done), { options: { verify: ["pnpm test"] }, checks })
      const setAside = yield* iterate(() => agentSays(done, 1))
      const { record } = rejected
      assert.deepStrictEqual([record.outcome, record.completionDetected], ["failed", false])
      assert.deepStrictEqual(record.promises.map((p) => [p.accepted, p.reason]), [[false, "verify failed: pnpm test (exit 1)"]])
      assert.deepStrictEqual(record.verify, [{ command: "pnpm test", exitCode: 1, signal: null, timedOut: false, durationMs: 4_200, passed: false }])
      assert.include(formatSummary(record), "| promise rejected: verify failed: pnpm test (exit 1, 4.2s) |")
      // Both are failures to the failure breaker, and the claim made is progress to the stall breaker.
      assert.deepStrictEqual([setAside.record.outcome, setAside.record.completionDetected], ["failed", false])
      assert.deepStrictEqual(setAside.record.promises.map((p) => [p.accepted, p.reason]), [[false, "the run failed"]])
      assert.deepStrictEqual([rejected.result.facts.outcome, rejected.result.facts.progress], [setAside.result.facts.outcome, setAside.result.facts.progress])
      assert.deepStrictEqual([rejected.result.facts.progress, rejected.result.facts.failure], [true, "verify failed: pnpm test (exit 1)"])
    }))

  it.effect("records an iteration whose check was interrupted as interrupted, keeping its commit, and passes the interruption on", () =>
    Effect.gen(function*() {
      const appended: Array<IterationRecord> = []
      const exit = yield* Effect.exit(iterate(() => scriptedRun(done), {
        options: { verify: ["pnpm test"] },
        git: GitSummary.layerTest({ changes: [change(["a.ts"])] }),
        checks: CheckRunner.layerTest(() => Effect.interrupt),
        appended
      }))
      assert.isTrue(Exit.isInterrupted(exit))
      assert.deepStrictEqual(appended.map((r) => [r.outcome, r.commit]), [["interrupted", "c0ffee1"]])
    }))

  it.effect("records an agent interrupted while it works as interrupted, with nothing journaled", () =>
    Effect.gen(function*() {
      const appended: Array<IterationRecord> = []
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(iterate(
        () => Stream.concat(Stream.fromEffect(Effect.as(Deferred.succeed(started, undefined), HarnessEvent.AgentText({ text: done }))), Stream.never),
        { appended }
      ))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(appended.map((r) => [r.outcome, r.completionDetected]), [["interrupted", false]])
    }))

  it.effect("records an agent a spend cap stopped as stopped, not failed, setting its claim aside", () =>
    Effect.gen(function*() {
      const reached = yield* Deferred.make<void>()
      const { journal, record, result } = yield* iterate(
        () => Stream.concat(Stream.make(HarnessEvent.AgentText({ text: done })), Stream.concat(Stream.fromEffect(Deferred.succeed(reached, undefined)).pipe(Stream.drain), Stream.never)),
        { stopWhen: Effect.as(Deferred.await(reached), "max-cost" as const) }
      )
      assert.strictEqual(record.outcome, "stopped")
      assert.strictEqual(result.stoppedBy, "max-cost")
      assert.deepStrictEqual(record.promises.map((p) => [p.accepted, p.reason]), [[false, "the run was cut short"]])
      assert.strictEqual(result.facts.failure, null)
      assert.deepStrictEqual(result.notes, [])
      assert.deepStrictEqual(journal, [])
    }))

  it.effect("counts a run that timed out or was killed by a signal as failed, whatever exit code was reported", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(iterate(
        () => Stream.concat(Stream.fromIterable(agentSays(done, 0)), Stream.never),
        { options: { inactivityTimeoutMs: 60_000 } }
      ))
      yield* TestClock.adjust("2 minutes")
      const timedOut = yield* Fiber.join(fiber)
      assert.deepStrictEqual([timedOut.record.outcome, timedOut.record.completionDetected], ["timeout", false])
      const killed = yield* iterate(() => agentSays(done, 0, "SIGTERM"))
      assert.deepStrictEqual([killed.record.outcome, killed.record.completionDetected], ["failed", false])
    }))
})

describe("a run whose claims are reviewed", () => {
  const asksChanges = (round: number) => `Read the diff.\n<verdict>changes</verdict>\n- handle the empty name (round ${round})\n`

  it.effect("stops after --max-reviews rejections, quoting the last review and sending a person to look", () =>
    Effect.gen(function*() {
      let round = 0
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 9 }, undefined, {
        reviewers: [{ id: "claude", script: () => scriptedRun(asksChanges(++round)) }],
        maxReviews: 2
      })
      const message = "stopped: the review turned the claim down 2 times (--max-reviews 2); " +
        "the last: review by claude: changes asked: - handle the empty name (round 2); a person should look (spool ralph --status)"
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations, r.message] as const), Exit.succeed(["review-rejected", 2, message] as const))
      assert.include(seen.output, message)
    }))

  it.effect("has every review read the run's whole work, from the work tree the run started with", () =>
    Effect.gen(function*() {
      let made = 0
      const git = gitWith({}, (g) => ({
        snapshot: Effect.succeed({ tree: "at-start" }),
        changesSince: (before) => Effect.map(g.changesSince(before), (change) => change === null ? null : { ...change, after: { tree: `after-${++made}` } })
      }))
      const diffs: Array<string> = []
      const reviewGit = Layer.effect(ReviewGit, Effect.map(ReviewGit, (review) => ({
        ...review,
        diff: (from: GitSnapshot, to: GitSnapshot) => Effect.zipRight(Effect.sync(() => void diffs.push(`${from.tree}..${to.tree}`)), review.diff(from, to))
      }))).pipe(Layer.provide(ReviewGit.layerTest()))
      let round = 0
      const seen = yield* runWith(() => scriptedRun(done), { maxIterations: 9 }, git, {
        reviewers: [{ id: "claude", script: () => scriptedRun(++round < 3 ? asksChanges(round) : "Fine.\n<verdict>approve</verdict>\n") }],
        reviewGit
      })
      assert.deepStrictEqual(Exit.map(seen.exit, (r) => [r.status, r.iterations] as const), Exit.succeed(["complete", 3] as const))
      assert.deepStrictEqual(diffs, ["at-start..after-1", "at-start..after-2", "at-start..after-3"])
    }))
})
