import { HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import { type Cause, Duration, Effect, Schedule } from "effect"
import { describeCheck, shown } from "../domain/CheckResult.js"
import { oneLine } from "../text/Text.js"
import { CheckRunner } from "../verify/CheckRunner.js"
import type { Notice } from "./Notice.js"

/** Where notices go: a shell command (`--notify`) or a URL that takes a POST (`--webhook`). */
export type NotifyTarget =
  | { readonly _tag: "Command"; readonly command: string }
  | { readonly _tag: "Webhook"; readonly url: string }

/** How long a notifier may run, or a webhook take to answer one try, before it is given up. */
export const NOTIFY_TIMEOUT_MS = 10_000

/** Tries of a webhook in all; between them a wait that doubles from the first. */
export const WEBHOOK_TRIES = 3
export const WEBHOOK_FIRST_WAIT_MS = 1_000

/**
 * How messages name a target. A webhook's URL is a secret (its path carries the token): it is named
 * by its place among the webhooks (`index`, from 0) and its host only.
 */
export const targetName = (target: NotifyTarget, index: number): string => {
  if (target._tag === "Command") return `--notify ${shown(target.command)}`
  let host = "?"
  try {
    host = new URL(target.url).host
  } catch {
    // A URL that does not parse was refused at the edge; its name stays a number.
  }
  return `webhook ${index + 1} (${host})`
}

/** Each target's name, in order: a webhook numbered among the webhooks alone, whatever notifiers come before it. */
export const targetNames = (targets: ReadonlyArray<NotifyTarget>): ReadonlyArray<string> =>
  targets.map((target, i) => targetName(target, targets.slice(0, i).filter((before) => before._tag === target._tag).length))

/** The failure of one delivery, in words that never hold the URL. */
const hidden = (url: string, text: string) => {
  const withoutUrl = text.split(url).join("<webhook>")
  try {
    const { pathname, search } = new URL(url)
    return [pathname, search].filter((part) => part.length > 1).reduce((out, part) => out.split(part).join("/…"), withoutUrl)
  } catch {
    return withoutUrl
  }
}

/**
 * Runs a notifier (`sh -c`, in its own process group) with the notice on its stdin and
 * `SPOOL_EVENT` and `SPOOL_CHANGE` in its environment. Null when it exited 0, else why not.
 */
export const tellCommand = (command: string, notice: Notice, cwd: string) =>
  Effect.gen(function*() {
    const checks = yield* CheckRunner
    const ran = yield* checks.run({
      command,
      cwd,
      timeoutMs: NOTIFY_TIMEOUT_MS,
      env: { SPOOL_EVENT: notice.event, SPOOL_CHANGE: notice.change ?? "" },
      stdin: `${JSON.stringify(notice)}\n`
    })
    if (ran.passed) return null
    if (ran.timedOut) return `still running after ${NOTIFY_TIMEOUT_MS / 1000}s, so it was stopped with its process group`
    const said = ran.output.trim().split("\n").at(-1) ?? ""
    return `${describeCheck(ran)}${said === "" ? "" : `: ${oneLine(said, 160)}`}`
  })

/** Why one try of a webhook failed, in words. */
const tryFailure = (error: HttpClientError.HttpClientError | Cause.TimeoutException): string => {
  if (error._tag === "TimeoutException") return `no answer within ${NOTIFY_TIMEOUT_MS / 1000}s`
  if (error._tag === "ResponseError") return `answered ${error.response.status}`
  // Node's fetch fails with "fetch failed", the system's reason (ECONNREFUSED, ...) in its cause.
  const cause = error.cause as { readonly message?: string; readonly cause?: { readonly code?: string; readonly message?: string } } | undefined
  const why = cause?.cause?.code ?? cause?.cause?.message ?? cause?.message ?? error.reason
  return `could not be reached (${oneLine(String(why), 120)})`
}

/**
 * POSTs the notice to `url` as JSON, trying up to `WEBHOOK_TRIES` times with a doubling wait
 * between. Null when it answered 2xx, else why the last try failed; never the URL.
 */
export const tellWebhook = (url: string, notice: Notice) =>
  Effect.gen(function*() {
    // A webhook is a third party's: no span of the request (its attributes hold the URL), so no trace headers either.
    const client = HttpClient.filterStatusOk(yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
    const request = HttpClientRequest.post(url).pipe(HttpClientRequest.bodyUnsafeJson(notice))
    const once = client.execute(request).pipe(
      // What it answered is read to its end, so that the connection is free again.
      Effect.flatMap((response) => Effect.ignore(response.text)),
      Effect.timeout(Duration.millis(NOTIFY_TIMEOUT_MS)),
      Effect.mapError(tryFailure)
    )
    return yield* once.pipe(
      Effect.retry({ schedule: Schedule.exponential(Duration.millis(WEBHOOK_FIRST_WAIT_MS)), times: WEBHOOK_TRIES - 1 }),
      Effect.as(null),
      Effect.catchAll((why) => Effect.succeed(hidden(url, `${WEBHOOK_TRIES} tries failed (the last: ${why}); given up`)))
    )
  })
