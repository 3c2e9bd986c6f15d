import type { HttpClient } from "@effect/platform"
import { Clock, Deferred, Duration, Effect, Option, Queue, Ref } from "effect"
import { LoopEvents } from "../live/LoopEvents.js"
import type { Redactor } from "../output/Redact.js"
import type { CheckRunner } from "../verify/CheckRunner.js"
import { type NotifyTarget, targetNames, tellCommand, tellWebhook } from "./Delivery.js"
import { type Followed, type Notice, type NoticeDraft, type NoticeEvent, noticeLine, noticesOf, unfollowed } from "./Notice.js"

/** Who is told of what, and how what they are told is kept clean of secrets. */
export interface NotifySettings {
  readonly targets: ReadonlyArray<NotifyTarget>
  readonly on: ReadonlyArray<NoticeEvent>
  /** Where notifiers run: the repository's root. */
  readonly cwd: string
  /** Applied to every line told, as to the agent's output. */
  readonly redact: Redactor
}

/** One target that could not be told a notice. */
export interface NotifyFailure {
  readonly notice: Notice
  /** The target as messages name it (a webhook by its number and host, never its URL). */
  readonly target: string
  readonly why: string
}

/** What the teller asks of the command it runs in. */
export interface NotifyHooks<R> {
  /** A change's tasks, done and in all, when it is told of; null when it has none. */
  readonly tasksOf: (changeId: string) => Effect.Effect<Notice["tasks"], never, R>
  /** A target could not be told: said and kept where a person looks (stderr, `--status`). */
  readonly failed: (failure: NotifyFailure) => Effect.Effect<void, never, R>
}

/** The longest the end of a command waits for the notices still being told. */
export const DRAIN_LIMIT_MS = 120_000

/**
 * Tells every target of a notice that `settings.on` asks for, all of them at once; each target
 * that fails is reported to `hooks.failed`, in the targets' order, once all have been told. Never fails.
 */
export const makeTeller = <R>(settings: NotifySettings, hooks: NotifyHooks<R>) =>
  Effect.gen(function*() {
    const wanted = new Set(settings.on)
    const names = targetNames(settings.targets)
    const context = yield* Effect.context<R | CheckRunner | HttpClient.HttpClient>()
    return (draft: NoticeDraft): Effect.Effect<void> =>
      !wanted.has(draft.event) || settings.targets.length === 0 ? Effect.void : Effect.gen(function*() {
        const tasks = draft.change === null ? null : yield* hooks.tasksOf(draft.change)
        const time = new Date(yield* Clock.currentTimeMillis).toISOString()
        const told = { ...draft, message: settings.redact(draft.message), tasks, time }
        const line = settings.redact(noticeLine(told))
        const notice: Notice = { ...told, text: line, content: line }
        // Side by side, so that failing targets cost one target's tries and timeout, not their sum.
        const whys = yield* Effect.forEach(
          settings.targets,
          (target): Effect.Effect<string | null, never, CheckRunner | HttpClient.HttpClient> =>
            target._tag === "Command" ? tellCommand(target.command, notice, settings.cwd) : tellWebhook(target.url, notice),
          { concurrency: "unbounded" }
        )
        for (const [index, why] of whys.entries()) {
          if (why !== null) yield* hooks.failed({ notice, target: names[index]!, why: settings.redact(why) })
        }
      }).pipe(Effect.provide(context))
  })

/**
 * Runs `effect` while telling of what its loops do: every loop event is read as it is published
 * and the notices it gives are told in order, beside the loops (a slow notifier holds up no loop).
 * When `effect` ends, however it ends, the notices still to tell are told (for at most
 * `DRAIN_LIMIT_MS`), then those of `after` (a sweep's end).
 */
export const tellingOf = <A, E, R>(
  tell: (draft: NoticeDraft) => Effect.Effect<void>,
  effect: Effect.Effect<A, E, R>,
  after: Effect.Effect<ReadonlyArray<NoticeDraft>> = Effect.succeed([])
) =>
  Effect.scoped(Effect.gen(function*() {
    const events = yield* LoopEvents
    const inbox = yield* events.subscribe
    const ended = yield* Deferred.make<void>()
    const followed = yield* Ref.make<ReadonlyMap<string, Followed>>(new Map())
    const handle = (event: Parameters<typeof noticesOf>[1]) =>
      Effect.gen(function*() {
        const before = (yield* Ref.get(followed)).get(event.changeId) ?? unfollowed
        const { followed: after, notices } = noticesOf(before, event)
        yield* Ref.update(followed, (all) => new Map(all).set(event.changeId, after))
        for (const notice of notices) yield* tell(notice)
      })
    /** Reads the events until the command has ended and none is left. */
    const follow = Effect.gen(function*() {
      for (;;) {
        const waiting = yield* Queue.poll(inbox)
        if (Option.isSome(waiting)) {
          yield* handle(waiting.value)
          continue
        }
        if (yield* Deferred.isDone(ended)) return
        const next = yield* Effect.raceFirst(Effect.map(Queue.take(inbox), Option.some), Effect.as(Deferred.await(ended), Option.none()))
        if (Option.isSome(next)) yield* handle(next.value)
      }
    })
    const follower = yield* Effect.forkScoped(follow)
    return yield* effect.pipe(
      Effect.onExit(() =>
        Deferred.succeed(ended, undefined).pipe(
          Effect.zipRight(follower.await),
          Effect.zipRight(Effect.flatMap(after, (drafts) => Effect.forEach(drafts, tell))),
          Effect.timeout(Duration.millis(DRAIN_LIMIT_MS)),
          Effect.ignore
        )
      )
    )
  }))
