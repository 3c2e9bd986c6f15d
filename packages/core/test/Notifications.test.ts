import { HttpClient, HttpClientError, HttpClientResponse } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, TestClock } from "effect"
import { ChangeId, type LoopState } from "../src/domain/Domain.js"
import { LoopEvent, LoopEvents } from "../src/live/LoopEvents.js"
import { type NotifyTarget, targetName, tellWebhook, WEBHOOK_TRIES } from "../src/notify/Delivery.js"
import type { Notice, NoticeDraft } from "../src/notify/Notice.js"
import { makeTeller, type NotifyFailure, type NotifySettings, tellingOf } from "../src/notify/Notifications.js"
import { makeRedactor } from "../src/output/Redact.js"
import { type CheckRequest, CheckRunner } from "../src/verify/CheckRunner.js"

const changeId = ChangeId.make("002-01_add-ralph-loop")
const SECRET_URL = "https://hooks.example.com/services/T000/B000/s3cr3tT0k3n"

const state = (status: LoopState["status"], patch: Partial<LoopState> = {}): LoopState => ({
  changeId,
  run: "r1",
  status,
  iteration: 2,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-27T10:00:00.000Z",
  updatedAt: "2026-11-27T10:05:00.000Z",
  pid: 1,
  stopReason: status === "running" ? null : "complete",
  stopMessage: status === "running" ? null : `ended ${status}`,
  resumeAt: null,
  guards: null,
  ...patch
})

const draft = (patch: Partial<NoticeDraft> = {}): NoticeDraft => ({
  event: "complete",
  change: changeId,
  run: "r1",
  iteration: 4,
  maxIterations: 20,
  outcome: "complete",
  message: "complete: the promise was accepted at iteration 4",
  costUsd: null,
  tokens: null,
  branch: null,
  commit: null,
  resumeAt: null,
  ...patch
})

/** An HTTP client answering each request with the next of `statuses` (the last one again once they run out), recording what it was sent. */
const scriptedClient = (statuses: ReadonlyArray<number | "unreachable">, sent: Array<{ url: string; body: unknown }>) =>
  Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request) =>
      Effect.gen(function*() {
        const body = request.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(request.body.body)) : null
        sent.push({ url: request.url, body })
        const status = statuses[Math.min(sent.length - 1, statuses.length - 1)]!
        if (status === "unreachable") {
          return yield* new HttpClientError.RequestError({ request, reason: "Transport", cause: new Error(`connect ECONNREFUSED for ${request.url}`) })
        }
        return HttpClientResponse.fromWeb(request, new Response(status === 204 ? null : "ok", { status }))
      })
    )
  )

const settings = (targets: ReadonlyArray<NotifyTarget>, patch: Partial<NotifySettings> = {}): NotifySettings => ({
  targets,
  on: ["complete", "failed", "sweep-ended"],
  cwd: "/repo",
  redact: makeRedactor({ API_TOKEN: "tok-123456789" }),
  ...patch
})

const hooks = (failures: Array<NotifyFailure>) => ({
  tasksOf: () => Effect.succeed({ done: 3, shelved: 0, total: 7 }),
  failed: (failure: NotifyFailure) => Effect.sync(() => void failures.push(failure))
})

describe("telling a notice", () => {
  it.effect("a notifier gets the notice on stdin as one JSON line, the event and change in its environment, from the repository's root", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const failures: Array<NotifyFailure> = []
      const tell = yield* makeTeller(settings([{ _tag: "Command", command: "./notify.sh" }]), hooks(failures)).pipe(
        Effect.provide(Layer.merge(CheckRunner.layerTest(() => ({ exitCode: 0, signal: null, timedOut: false, durationMs: 5, output: "" }), requests), scriptedClient([200], [])))
      )
      yield* tell(draft({ message: "done with tok-123456789 in hand" }))
      assert.lengthOf(requests, 1)
      const request = requests[0]!
      assert.strictEqual(request.command, "./notify.sh")
      assert.strictEqual(request.cwd, "/repo")
      assert.strictEqual(request.timeoutMs, 10_000)
      assert.deepStrictEqual(request.env, { SPOOL_EVENT: "complete", SPOOL_CHANGE: "002-01_add-ralph-loop" })
      assert.isTrue(request.stdin!.endsWith("}\n"))
      const notice = JSON.parse(request.stdin!) as Notice
      assert.deepStrictEqual(notice.tasks, { done: 3, shelved: 0, total: 7 })
      assert.strictEqual(notice.time, "1970-01-01T00:00:00.000Z")
      // Secrets are redacted in what is told, as in the agent's output.
      assert.strictEqual(notice.message, "done with [REDACTED] in hand")
      assert.strictEqual(notice.text, "spool: 002-01_add-ralph-loop complete at iteration 4 of 20 (tasks 3/7): done with [REDACTED] in hand")
      assert.strictEqual(notice.content, notice.text)
      assert.deepStrictEqual(failures, [])
    }))

  it.effect("only the events asked for are told, and nothing without a target", () =>
    Effect.gen(function*() {
      const requests: Array<CheckRequest> = []
      const runner = CheckRunner.layerTest(() => ({ exitCode: 0, signal: null, timedOut: false, durationMs: 5, output: "" }), requests)
      const layer = Layer.merge(runner, scriptedClient([200], []))
      const tell = yield* makeTeller(settings([{ _tag: "Command", command: "n" }]), hooks([])).pipe(Effect.provide(layer))
      yield* tell(draft({ event: "verify-failed" }))
      yield* tell(draft({ event: "usage-limit" }))
      assert.lengthOf(requests, 0)
      yield* tell(draft({ event: "failed" }))
      assert.lengthOf(requests, 1)
      // With no target, nothing is even read for the notice (its change's tasks).
      let read = 0
      const none = yield* makeTeller(settings([]), { ...hooks([]), tasksOf: () => Effect.sync(() => (read++, null)) }).pipe(Effect.provide(layer))
      yield* none(draft())
      assert.lengthOf(requests, 1)
      assert.strictEqual(read, 0)
    }))

  it.effect("a notifier that fails or hangs is one failure each, and the next target is still told", () =>
    Effect.gen(function*() {
      const failures: Array<NotifyFailure> = []
      const sent: Array<{ url: string; body: unknown }> = []
      const runner = CheckRunner.layerTest((request) =>
        request.command === "hang"
          ? { exitCode: null, signal: "SIGTERM", timedOut: true, durationMs: 10_000, output: "" }
          : { exitCode: 3, signal: null, timedOut: false, durationMs: 5, output: "starting\nno route to the chat server\n" }
      )
      const tell = yield* makeTeller(
        settings([{ _tag: "Command", command: "hang" }, { _tag: "Command", command: "broken" }, { _tag: "Webhook", url: SECRET_URL }]),
        hooks(failures)
      ).pipe(Effect.provide(Layer.merge(runner, scriptedClient([200], sent))))
      yield* tell(draft())
      assert.deepStrictEqual(failures.map((f) => [f.target, f.why]), [
        ["--notify hang", "still running after 10s, so it was stopped with its process group"],
        ["--notify broken", "exit 3, 5ms: no route to the chat server"]
      ])
      assert.lengthOf(sent, 1)
    }))

  it.effect("a webhook's failure names it by its place among the webhooks alone, whatever notifiers come before it", () =>
    Effect.gen(function*() {
      const failures: Array<NotifyFailure> = []
      const runner = CheckRunner.layerTest(() => ({ exitCode: 0, signal: null, timedOut: false, durationMs: 5, output: "" }))
      const tell = yield* makeTeller(
        settings([
          { _tag: "Command", command: "first" },
          { _tag: "Webhook", url: SECRET_URL },
          { _tag: "Command", command: "second" },
          { _tag: "Webhook", url: "https://chat.example.org/hooks/abc" }
        ]),
        hooks(failures)
      ).pipe(Effect.provide(Layer.merge(runner, scriptedClient([500], []))))
      const fiber = yield* Effect.fork(tell(draft()))
      yield* TestClock.adjust("6 seconds")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(failures.map((f) => f.target), ["webhook 1 (hooks.example.com)", "webhook 2 (chat.example.org)"])
    }))

  it.effect("the targets are told side by side: two webhooks that keep failing are both given up within one webhook's tries, failures said in the targets' order", () =>
    Effect.gen(function*() {
      const failures: Array<NotifyFailure> = []
      const sent: Array<{ url: string; body: unknown }> = []
      const runner = CheckRunner.layerTest(() => ({ exitCode: 1, signal: null, timedOut: false, durationMs: 5, output: "" }))
      const tell = yield* makeTeller(
        settings([{ _tag: "Webhook", url: SECRET_URL }, { _tag: "Command", command: "broken" }, { _tag: "Webhook", url: "https://chat.example.org/hooks/abc" }]),
        hooks(failures)
      ).pipe(Effect.provide(Layer.merge(runner, scriptedClient([500], sent))))
      const fiber = yield* Effect.fork(tell(draft()))
      // One webhook's tries: at once, after 1 s, and 2 s after that.
      yield* TestClock.adjust("3 seconds")
      assert.lengthOf(sent, 6)
      assert.isNotNull(fiber.unsafePoll())
      assert.deepStrictEqual(failures.map((f) => f.target), ["webhook 1 (hooks.example.com)", "--notify broken", "webhook 2 (chat.example.org)"])
    }))

  it.effect("a notifier's failure says its last line, or only how it ended when it said nothing; a sweep's notice has an empty SPOOL_CHANGE", () =>
    Effect.gen(function*() {
      const failures: Array<NotifyFailure> = []
      const requests: Array<CheckRequest> = []
      const runner = CheckRunner.layerTest(
        (request) => ({ exitCode: 1, signal: null, timedOut: false, durationMs: 7, output: request.command === "quiet" ? "  \n" : "one\ntwo\nthree\n" }),
        requests
      )
      const tell = yield* makeTeller(
        settings([{ _tag: "Command", command: "quiet" }, { _tag: "Command", command: "talkative" }]),
        hooks(failures)
      ).pipe(Effect.provide(Layer.merge(runner, scriptedClient([200], []))))
      yield* tell(draft({ event: "sweep-ended", change: null }))
      assert.deepStrictEqual(failures.map((f) => f.why), ["exit 1, 7ms", "exit 1, 7ms: three"])
      assert.deepStrictEqual(requests.map((r) => r.env), [{ SPOOL_EVENT: "sweep-ended", SPOOL_CHANGE: "" }, { SPOOL_EVENT: "sweep-ended", SPOOL_CHANGE: "" }])
    }))
})

describe("a webhook", () => {
  it.effect("gets the notice as its JSON body, and a failed try is tried again after a wait: 500, then 200 is told", () =>
    Effect.gen(function*() {
      const sent: Array<{ url: string; body: unknown }> = []
      const notice = { ...draft(), tasks: null, time: "t", text: "line", content: "line" } satisfies Notice
      const fiber = yield* Effect.fork(tellWebhook(SECRET_URL, notice).pipe(Effect.provide(scriptedClient([500, 200], sent))))
      yield* TestClock.adjust("1 second")
      assert.isNull(yield* Fiber.join(fiber))
      assert.lengthOf(sent, 2)
      assert.strictEqual(sent[0]!.url, SECRET_URL)
      assert.deepStrictEqual(sent[1]!.body, notice)
    }))

  it.effect(`is given up after ${WEBHOOK_TRIES} tries, waiting twice as long each time, saying why without the URL`, () =>
    Effect.gen(function*() {
      const sent: Array<{ url: string; body: unknown }> = []
      const notice = { ...draft(), tasks: null, time: "t", text: "line", content: "line" } satisfies Notice
      const fiber = yield* Effect.fork(tellWebhook(SECRET_URL, notice).pipe(Effect.provide(scriptedClient([500, 502, "unreachable"], sent))))
      yield* TestClock.adjust("999 millis")
      assert.lengthOf(sent, 1)
      yield* TestClock.adjust("1 millis")
      assert.lengthOf(sent, 2)
      yield* TestClock.adjust("1999 millis")
      assert.lengthOf(sent, 2)
      yield* TestClock.adjust("1 millis")
      const why = yield* Fiber.join(fiber)
      assert.lengthOf(sent, 3)
      assert.strictEqual(why, "3 tries failed (the last: could not be reached (connect ECONNREFUSED for <webhook>)); given up")
    }))

  it.effect("that keeps answering an error status says the last one", () =>
    Effect.gen(function*() {
      const notice = { ...draft(), tasks: null, time: "t", text: "line", content: "line" } satisfies Notice
      const fiber = yield* Effect.fork(tellWebhook(SECRET_URL, notice).pipe(Effect.provide(scriptedClient([500, 502, 404], []))))
      yield* TestClock.adjust("3 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "3 tries failed (the last: answered 404); given up")
    }))

  it.effect("a try that gets no answer is given up after 10 s", () =>
    Effect.gen(function*() {
      const hang = Layer.succeed(HttpClient.HttpClient, HttpClient.make(() => Effect.never))
      const notice = { ...draft(), tasks: null, time: "t", text: "line", content: "line" } satisfies Notice
      const fiber = yield* Effect.fork(tellWebhook(SECRET_URL, notice).pipe(Effect.provide(hang)))
      yield* TestClock.adjust("10 seconds")
      yield* TestClock.adjust("1 second")
      yield* TestClock.adjust("10 seconds")
      yield* TestClock.adjust("2 seconds")
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* Fiber.join(fiber), "3 tries failed (the last: no answer within 10s); given up")
    }))

  it.effect("that cannot be reached says the system's reason, and never its path or query, even where the error names them alone", () =>
    Effect.gen(function*() {
      const notice = { ...draft(), tasks: null, time: "t", text: "line", content: "line" } satisfies Notice
      /** What three tries of `url` say when every try fails with `cause`. */
      const failing = (url: string, cause: Error) =>
        Effect.gen(function*() {
          const client = HttpClient.make((request) => new HttpClientError.RequestError({ request, reason: "Transport", cause }))
          const fiber = yield* Effect.fork(tellWebhook(url, notice).pipe(Effect.provide(Layer.succeed(HttpClient.HttpClient, client))))
          yield* TestClock.adjust("3 seconds")
          return yield* Fiber.join(fiber)
        })
      // As Node's fetch fails: "fetch failed", with the system's error (a code and a message) as its cause.
      const refused = Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:443"), { code: "ECONNREFUSED" }) })
      assert.strictEqual(yield* failing(SECRET_URL, refused), "3 tries failed (the last: could not be reached (ECONNREFUSED)); given up")
      // A path or a query named apart from the URL is hidden; a bare "/" is no secret and stays.
      assert.strictEqual(
        yield* failing(SECRET_URL, new Error("POST /services/T000/B000/s3cr3tT0k3n: socket hang up")),
        "3 tries failed (the last: could not be reached (POST /…: socket hang up)); given up"
      )
      assert.strictEqual(
        yield* failing("http://127.0.0.1:9/?token=s3cr3t", new Error("POST /?token=s3cr3t: socket hang up")),
        "3 tries failed (the last: could not be reached (POST //…: socket hang up)); given up"
      )
    }))

  it.effect("is sent no tracing headers (traceparent, b3), which would tell a third party of spool's own spans", () =>
    Effect.gen(function*() {
      const headers: Array<Record<string, string>> = []
      const client = HttpClient.make((request) =>
        Effect.sync(() => {
          headers.push({ ...request.headers })
          return HttpClientResponse.fromWeb(request, new Response("ok", { status: 200 }))
        })
      )
      const notice = { ...draft(), tasks: null, time: "t", text: "line", content: "line" } satisfies Notice
      assert.isNull(yield* tellWebhook(SECRET_URL, notice).pipe(Effect.provide(Layer.succeed(HttpClient.HttpClient, client))))
      // The body's own headers, and nothing else.
      assert.deepStrictEqual(headers.map((sent) => Object.keys(sent).sort()), [["content-length", "content-type"]])
    }))

  it("is named by its place and host, never by its path", () => {
    assert.strictEqual(targetName({ _tag: "Webhook", url: "not a url" }, 2), "webhook 3 (?)")
    assert.strictEqual(targetName({ _tag: "Webhook", url: SECRET_URL }, 1), "webhook 2 (hooks.example.com)")
    assert.strictEqual(targetName({ _tag: "Webhook", url: "https://user:pw@chat.example.org:8443/x" }, 0), "webhook 1 (chat.example.org:8443)")
    assert.strictEqual(targetName({ _tag: "Command", command: "notify-send 'spool'\n--urgency low" }, 0), "--notify notify-send 'spool' --urgency low")
  })
})

describe("telling of what loops do", () => {
  const follow = <A, E>(effect: Effect.Effect<A, E, LoopEvents>, after: ReadonlyArray<NoticeDraft> = [], hold?: Deferred.Deferred<void>) =>
    Effect.gen(function*() {
      const told: Array<string> = []
      const tell = (notice: NoticeDraft) =>
        Effect.zipRight(hold === undefined ? Effect.void : Deferred.await(hold), Effect.sync(() => void told.push(`${notice.event} ${notice.change ?? "-"}`)))
      const exit = yield* Effect.exit(tellingOf(tell, effect, Effect.succeed(after)))
      return { told, exit }
    }).pipe(Effect.provide(LoopEvents.layer))

  const publish = (event: LoopEvent) => Effect.flatMap(LoopEvents, (events) => events.publish(event))

  it.effect("tells each loop's endings in order, then what comes after; a loop's own states are told apart", () =>
    Effect.gen(function*() {
      const other = ChangeId.make("002-02_other")
      const { told } = yield* follow(
        Effect.gen(function*() {
          yield* publish(LoopEvent.StateChanged({ changeId, state: state("running") }))
          yield* publish(LoopEvent.StateChanged({ changeId: other, state: state("running", { changeId: other }) }))
          yield* publish(LoopEvent.StateChanged({ changeId: other, state: state("failed", { changeId: other, stopReason: "failures" }) }))
          yield* publish(LoopEvent.StateChanged({ changeId, state: state("complete") }))
          return "done"
        }),
        [draft({ event: "sweep-ended", change: null })]
      )
      assert.deepStrictEqual(told, ["failed 002-02_other", "complete 002-01_add-ralph-loop", "sweep-ended -"])
    }))

  it.effect("a slow notice holds up no loop; every notice is told before the command ends", () =>
    Effect.gen(function*() {
      const hold = yield* Deferred.make<void>()
      const loopDone = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(follow(
        Effect.gen(function*() {
          yield* publish(LoopEvent.StateChanged({ changeId, state: state("waiting", { resumeAt: "2026-11-27T11:00:00.000Z" }) }))
          yield* publish(LoopEvent.StateChanged({ changeId, state: state("complete") }))
          yield* Deferred.succeed(loopDone, undefined)
        }),
        [],
        hold
      ))
      // The loop ran on to its end while the first notice was still being told.
      yield* Deferred.await(loopDone)
      assert.isNull(fiber.unsafePoll())
      yield* Deferred.succeed(hold, undefined)
      const { told } = yield* Fiber.join(fiber)
      assert.deepStrictEqual(told, ["usage-limit 002-01_add-ralph-loop", "complete 002-01_add-ralph-loop"])
    }))

  it.effect("a command that fails or is interrupted still tells what its loops did, and ends as it ended", () =>
    Effect.gen(function*() {
      const failed = yield* follow(
        Effect.zipRight(publish(LoopEvent.StateChanged({ changeId, state: state("failed", { stopReason: "error" }) })), Effect.fail("boom" as const))
      )
      assert.deepStrictEqual(failed.told, ["failed 002-01_add-ralph-loop"])
      assert.deepStrictEqual(failed.exit._tag, "Failure")
      const interrupted = yield* follow(
        Effect.zipRight(publish(LoopEvent.StateChanged({ changeId, state: state("interrupted", { stopReason: "interrupted" }) })), Effect.interrupt)
      )
      assert.deepStrictEqual(interrupted.told, ["interrupted 002-01_add-ralph-loop"])
      assert.isTrue(interrupted.exit._tag === "Failure")
    }))
})

describe("a real notifier process", () => {
  it.live("reads the notice on its stdin", () =>
    Effect.gen(function*() {
      const checks = yield* CheckRunner
      const ran = yield* checks.run({ command: "read line; echo \"got: $line ($SPOOL_EVENT)\"", cwd: process.cwd(), timeoutMs: 10_000, env: { SPOOL_EVENT: "complete" }, stdin: "{\"event\":\"complete\"}\n" })
      assert.isTrue(ran.passed)
      assert.strictEqual(ran.output.trim(), "got: {\"event\":\"complete\"} (complete)")
      // One that does not read it is not failed for that.
      const ignoring = yield* checks.run({ command: "exit 0", cwd: process.cwd(), timeoutMs: 10_000, env: {}, stdin: "x".repeat(1 << 20) })
      assert.isTrue(ignoring.passed)
    }).pipe(Effect.provide(CheckRunner.layer), Effect.provide(NodeContext.layer)))
})
