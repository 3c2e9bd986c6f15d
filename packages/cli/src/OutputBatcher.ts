import type { Error as PlatformError } from "@effect/platform"
import { ByteBatches } from "@spool/core"
import { Chunk, Effect, Option, Stream } from "effect"
import type { Readable } from "node:stream"
import { systemError } from "./CommandError.js"

/** A batch is handed over once it fills a pooled buffer (`ByteBatches`), or after `BATCH_WAIT_MS` otherwise. */
const BATCH_BYTES = ByteBatches.BATCH_BYTES
const BATCH_WAIT_MS = 4
/** Reading pauses while this much waits to be taken: memory stays bounded when the consumer is slower. */
const MAX_QUEUED = 4 * BATCH_BYTES

/**
 * Gathers reads into batches and hands them to a stream: a chunk costs the stream once per batch,
 * not once per read. Reads are copied into a buffer of `ByteBatches` (a read's own buffer may be
 * reused at once); each batch is the part of it filled since the last one.
 */
export const makeBatcher = (method: string, pause: () => void, resume: () => void, close: () => void) => {
  let queue: Array<Uint8Array> = []
  let queued = 0
  let filling: Uint8Array | null = null
  let filled = 0
  let ended = false
  let paused = false
  let failure: PlatformError.PlatformError | null = null
  let wake: (() => void) | null = null
  let timer: ReturnType<typeof setTimeout> | null = null
  const notify = () => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    const resumeTake = wake
    wake = null
    resumeTake?.()
  }
  // Where the next batch starts in the buffer being filled.
  let shared = 0
  /** Hands on what was filled since the last batch, as a window of the buffer (no copy). */
  const sealFilling = () => {
    if (filling === null || filled === shared) return
    queue.push(ByteBatches.share(filling.subarray(shared, filled)))
    shared = filled
    if (filled < filling.length) return
    ByteBatches.seal(filling)
    filling = null
    filled = 0
    shared = 0
  }
  /** Takes one read (`bytes` may be reused by the reader as soon as this returns); false: pause reading. */
  const push = (bytes: Uint8Array): boolean => {
    let from = 0
    while (from < bytes.length) {
      if (filling === null) filling = ByteBatches.take()
      const taken = Math.min(filling.length - filled, bytes.length - from)
      filling.set(from === 0 && taken === bytes.length ? bytes : bytes.subarray(from, from + taken), filled)
      filled += taken
      from += taken
      queued += taken
      if (filled === filling.length) sealFilling()
    }
    if (wake !== null) {
      if (queued >= BATCH_BYTES) notify()
      else timer ??= setTimeout(notify, BATCH_WAIT_MS)
    }
    if (queued < MAX_QUEUED) return true
    paused = true
    pause()
    return false
  }
  const end = () => {
    ended = true
    notify()
  }
  const fail = (error: Error) => {
    failure = systemError(method, error.message)
    notify()
  }
  const take = Effect.async<Chunk.Chunk<Uint8Array>, Option.Option<PlatformError.PlatformError>>((resumeTake) => {
    const give = () => {
      sealFilling()
      if (queue.length > 0) {
        const batch = queue
        queue = []
        queued = 0
        if (paused) {
          paused = false
          resume()
        }
        resumeTake(Effect.succeed(Chunk.unsafeFromArray(batch)))
      } else if (failure !== null) resumeTake(Effect.fail(Option.some(failure)))
      else if (ended) resumeTake(Effect.fail(Option.none()))
      else wake = give
    }
    if (queued >= BATCH_BYTES || ended || failure !== null || queued === 0) return give()
    // Some output is waiting: give the reader a moment to fill the batch.
    wake = give
    timer ??= setTimeout(notify, BATCH_WAIT_MS)
  })
  const stream = Stream.repeatEffectChunkOption(take).pipe(
    Stream.ensuring(Effect.sync(() => {
      wake = null
      if (timer !== null) clearTimeout(timer)
      close()
      if (filling !== null) ByteBatches.seal(filling)
      filling = null
    }))
  )
  return { push, end, fail, stream }
}

/**
 * A child's output read from a pipe, in batches (the fallback when no output channel can be made).
 */
export const batchedOutput = (readable: Readable, method: string): Stream.Stream<Uint8Array, PlatformError.PlatformError> =>
  Stream.suspend(() => {
    const batcher = makeBatcher(method, () => readable.pause(), () => readable.resume(), () => readable.destroy())
    readable.on("data", (data: Uint8Array) => void batcher.push(data))
    readable.on("end", batcher.end)
    readable.on("error", batcher.fail)
    return batcher.stream
  })
