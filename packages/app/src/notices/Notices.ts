import { FetchHttpClient } from "@effect/platform"
import {
  CheckRunner,
  type ChangeId,
  DEFAULT_NOTICE_EVENTS,
  keepFailure,
  loadStatus,
  makeRedactor,
  type NoticeDraft,
  type NoticeEvent,
  type NotifySettings,
  type NotifyTarget,
  makeTeller,
  taskCounts,
  tasksDone,
  tellingOf
} from "@spool/core"
import { Effect, Layer } from "effect"
import { type Env, Invocation } from "../host/Invocation.js"
import { Reports } from "../report/Reports.js"
import { requestError } from "../RequestError.js"

/**
 * A webhook as given: a URL, or `$NAME`, the environment variable holding it (so that a settings
 * file in the repository need not hold the secret). Never echoed: a URL is a secret.
 */
const webhookUrl = (given: string, env: Env, place: number) =>
  Effect.gen(function*() {
    const named = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(given.trim())
    const url = named === null ? given.trim() : env[named[1]!]?.trim() ?? ""
    if (named !== null && url === "") {
      return yield* requestError(`--webhook $${named[1]}: the environment variable ${named[1]} is not set; export it with the webhook's URL`, "webhook")
    }
    let parsed: URL | null = null
    try {
      parsed = new URL(url)
    } catch {
      // Said below, without the value.
    }
    if (parsed === null || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
      return yield* requestError(
        `--webhook (the ${place === 0 ? "first" : `number ${place + 1}`}) must be an http:// or https:// URL; the value is not shown, as a webhook's URL is a secret`,
        "webhook"
      )
    }
    return url
  })

/** Who is to be told of what: commands (run with `sh -c`), webhooks (URLs, or `$NAME`), the events (null: the default ones). */
export interface NoticeRequest {
  readonly commands: ReadonlyArray<string>
  readonly webhooks: ReadonlyArray<string>
  readonly on: ReadonlyArray<NoticeEvent> | null
}

/** Nobody is told of anything. */
export const noNotices: NoticeRequest = { commands: [], webhooks: [], on: null }

/** Who is told of what, from the request: null when nobody is. Every mistake is a request error before anything runs. */
export const notifySettings = (request: NoticeRequest, root: string) =>
  Effect.gen(function*() {
    const { env } = yield* Invocation
    const urls = yield* Effect.forEach(request.webhooks, (given, place) => webhookUrl(given, env, place))
    const targets: Array<NotifyTarget> = [
      ...request.commands.map((command): NotifyTarget => ({ _tag: "Command", command })),
      ...urls.map((url): NotifyTarget => ({ _tag: "Webhook", url }))
    ]
    if (targets.length === 0) {
      if (request.on !== null) return yield* requestError("--notify-on goes with --notify or --webhook: spool ralph --webhook \"$SLACK_WEBHOOK_URL\" --notify-on complete,failed", "notify-on")
      return null
    }
    return { targets, on: request.on ?? DEFAULT_NOTICE_EVENTS, cwd: root, redact: makeRedactor(secretEnv(env, urls)) } satisfies NotifySettings
  })

/**
 * The environment with the webhooks' URLs in it under names the redactor treats as secrets: an
 * agent that prints one (read from this process, or from where it was kept) has it hidden as a key.
 */
export const secretEnv = (env: Env, urls: ReadonlyArray<string>): Env =>
  urls.length === 0 ? env : { ...env, ...Object.fromEntries(urls.map((url, i) => [`SPOOL_WEBHOOK_${i + 1}_TOKEN`, url])) }

/** A change's tasks as the notice tells them: done (complete or shelved), shelved, and in all. */
const tasksOf = (changeId: string) =>
  Effect.map(loadStatus(changeId as ChangeId), ({ tasks }) => (tasks.tasks.length === 0 ? null : tasksDone(taskCounts(tasks)))).pipe(
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
    const reports = yield* Reports
    const tell = yield* makeTeller(settings, {
      tasksOf,
      failed: (failure) =>
        Effect.zipRight(
          reports.warn(`${failure.notice.change === null ? "" : `${failure.notice.change}: `}the ${failure.notice.event} notice to ${failure.target} failed: ${failure.why}`),
          failure.notice.change === null ? Effect.void : keepFailure(failure.notice.change as ChangeId, failure)
        )
    }).pipe(Effect.provide(Layer.merge(CheckRunner.layer, FetchHttpClient.layer)))
    return yield* tellingOf(tell, effect, after)
  })
