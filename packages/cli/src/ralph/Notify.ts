import { FetchHttpClient } from "@effect/platform"
import {
  CheckRunner,
  type ChangeId,
  DEFAULT_NOTICE_EVENTS,
  isNoticeEvent,
  keepFailure,
  loadStatus,
  makeRedactor,
  NOTICE_EVENTS,
  type NoticeDraft,
  type NoticeEvent,
  type NotifySettings,
  type NotifyTarget,
  makeTeller,
  tellingOf
} from "@spool/core"
import { Effect, Layer, Option } from "effect"
import { type Env, Invocation } from "../Invocation.js"
import { closest } from "../Suggest.js"
import { TerminalReporter } from "../TerminalReporter.js"
import { UsageError } from "../UsageError.js"
import type { RalphArgs } from "./Options.js"

const usage = (message: string) => new UsageError({ message })

/**
 * A webhook as given: a URL, or `$NAME`, the environment variable holding it (so that a settings
 * file in the repository need not hold the secret). Never echoed: a URL is a secret.
 */
const webhookUrl = (given: string, env: Env, place: number) =>
  Effect.gen(function*() {
    const named = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(given.trim())
    const url = named === null ? given.trim() : env[named[1]!]?.trim() ?? ""
    if (named !== null && url === "") {
      return yield* usage(`--webhook $${named[1]}: the environment variable ${named[1]} is not set; export it with the webhook's URL`)
    }
    let parsed: URL | null = null
    try {
      parsed = new URL(url)
    } catch {
      // Said below, without the value.
    }
    if (parsed === null || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
      return yield* usage(
        `--webhook (the ${place === 0 ? "first" : `number ${place + 1}`}) must be an http:// or https:// URL; the value is not shown, as a webhook's URL is a secret`
      )
    }
    return url
  })

/** `--notify-on complete,failed`: the events, each known. */
const noticeEvents = (given: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isNone(given)) return DEFAULT_NOTICE_EVENTS
    const names = given.value.split(",").map((name) => name.trim()).filter((name) => name !== "")
    if (names.length === 0) return yield* usage(`--notify-on needs one or more events, e.g. --notify-on complete,failed; the events: ${NOTICE_EVENTS.join(", ")}`)
    const events: Array<NoticeEvent> = []
    for (const name of names) {
      if (!isNoticeEvent(name)) {
        const near = closest(name, NOTICE_EVENTS)
        return yield* usage(`--notify-on: unknown event '${name}'${near === null ? "" : `; did you mean '${near}'?`}; the events: ${NOTICE_EVENTS.join(", ")}`)
      }
      if (!events.includes(name)) events.push(name)
    }
    return events
  })

/** Who is told of what, from the command line: null when nobody is. Every mistake is a usage error before anything runs. */
export const notifySettings = (args: RalphArgs, root: string) =>
  Effect.gen(function*() {
    const { env } = yield* Invocation
    const urls = yield* Effect.forEach(args.webhook, (given, place) => webhookUrl(given, env, place))
    const on = yield* noticeEvents(args.notifyOn)
    const targets: Array<NotifyTarget> = [
      ...args.notify.map((command): NotifyTarget => ({ _tag: "Command", command })),
      ...urls.map((url): NotifyTarget => ({ _tag: "Webhook", url }))
    ]
    if (targets.length === 0) {
      if (Option.isSome(args.notifyOn)) return yield* usage("--notify-on goes with --notify or --webhook: spool ralph --webhook \"$SLACK_WEBHOOK_URL\" --notify-on complete,failed")
      return null
    }
    return { targets, on, cwd: root, redact: makeRedactor(secretEnv(env, urls)) } satisfies NotifySettings
  })

/**
 * The environment with the webhooks' URLs in it under names the redactor treats as secrets: an
 * agent that prints one (read from this process, or from where it was kept) has it hidden as a key.
 */
export const secretEnv = (env: Env, urls: ReadonlyArray<string>): Env =>
  urls.length === 0 ? env : { ...env, ...Object.fromEntries(urls.map((url, i) => [`SPOOL_WEBHOOK_${i + 1}_TOKEN`, url])) }

/** A change's tasks as the notice tells them: complete, and in all. */
const tasksOf = (changeId: string) =>
  Effect.map(loadStatus(changeId as ChangeId), ({ tasks }) =>
    tasks.tasks.length === 0 ? null : { done: tasks.tasks.filter((task) => task.status === "complete").length, total: tasks.tasks.length }).pipe(
      Effect.orElseSucceed(() => null)
    )

/**
 * Runs `effect` telling `settings`' targets of what its loops do (and, at its end, of `after`):
 * a target that cannot be told is one warning line, kept for `--status`; the loops' course and
 * the exit code are not touched. Without settings, `effect` runs as it is.
 */
export const withNotices = <A, E, R>(
  settings: NotifySettings | null,
  effect: Effect.Effect<A, E, R>,
  after: Effect.Effect<ReadonlyArray<NoticeDraft>> = Effect.succeed([])
) =>
  settings === null ? effect : Effect.gen(function*() {
    const terminal = yield* TerminalReporter
    const tell = yield* makeTeller(settings, {
      tasksOf,
      failed: (failure) =>
        Effect.zipRight(
          Effect.sync(() =>
            terminal.warn(`${failure.notice.change === null ? "" : `${failure.notice.change}: `}the ${failure.notice.event} notice to ${failure.target} failed: ${failure.why}`)
          ),
          failure.notice.change === null ? Effect.void : keepFailure(failure.notice.change as ChangeId, failure)
        )
    }).pipe(Effect.provide(Layer.merge(CheckRunner.layer, FetchHttpClient.layer)))
    return yield* tellingOf(tell, effect, after)
  })
