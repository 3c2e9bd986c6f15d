/**
 * Buffers for batches of agent output, reused: an agent printing hundreds of MiB would otherwise
 * leave as many MiB of dead buffers for the garbage collector, which gives them back late. The
 * reader of a process takes a buffer, fills it and hands it on as a batch; whoever consumes the
 * batch last gives it back once nothing refers to its bytes any more (the iteration log, after
 * writing them). A batch never given back is simply collected: giving back is never required,
 * only a saving. A consumer that keeps bytes of a batch past its own handling copies them.
 */

/** The size of every pooled buffer. */
export const BATCH_BYTES = 4 * 1024 * 1024
/** Spare buffers kept at most; more are left to the collector. */
const MAX_SPARE = 4

const spare: Array<Uint8Array> = []
/** Buffers handed out and not yet given back. */
const lent = new WeakSet<ArrayBufferLike>()

/** A buffer of `BATCH_BYTES` to fill, reused when one was given back. */
export const take = (): Uint8Array => {
  const buffer = spare.pop() ?? new Uint8Array(BATCH_BYTES)
  lent.add(buffer.buffer)
  return buffer
}

/** Gives back the buffer `bytes` is part of, if it was taken here and is still out; anything else is ignored. */
export const give = (bytes: Uint8Array): void => {
  if (!lent.has(bytes.buffer)) return
  lent.delete(bytes.buffer)
  if (spare.length < MAX_SPARE) spare.push(new Uint8Array(bytes.buffer, 0, BATCH_BYTES))
}
