/**
 * Buffers for batches of agent output, reused: an agent printing hundreds of MiB would otherwise
 * leave as many MiB of dead buffers for the garbage collector, which gives them back late. The
 * reader of a process takes a buffer and fills it, handing on each batch as a window of it
 * (`share`), and seals it once full; whoever consumes a batch last gives it back once nothing
 * refers to its bytes any more (the iteration log, after writing them). A sealed buffer whose
 * batches are all back is reused. A batch never given back is simply collected with its buffer:
 * giving back is never required, only a saving. A consumer that keeps bytes of a batch past its
 * own handling copies them.
 */

/** The size of every pooled buffer. */
export const BATCH_BYTES = 1024 * 1024
/** Spare buffers kept at most; more are left to the collector. */
const MAX_SPARE = 12

interface Lent {
  /** Batches of it handed out and not yet given back. */
  out: number
  /** Its filler is done with it. */
  sealed: boolean
}

const spare: Array<Uint8Array> = []
const lent = new WeakMap<ArrayBufferLike, Lent>()

const reuse = (buffer: ArrayBufferLike, state: Lent) => {
  if (!state.sealed || state.out > 0) return
  lent.delete(buffer)
  if (spare.length < MAX_SPARE) spare.push(new Uint8Array(buffer, 0, BATCH_BYTES))
}

/** A buffer of `BATCH_BYTES` to fill, reused when one came back. */
export const take = (): Uint8Array => {
  const buffer = spare.pop() ?? new Uint8Array(BATCH_BYTES)
  lent.set(buffer.buffer, { out: 0, sealed: false })
  return buffer
}

/** Hands on `window` (a part of a taken buffer) as a batch: the buffer is not reused before it is given back. */
export const share = (window: Uint8Array): Uint8Array => {
  const state = lent.get(window.buffer)
  if (state !== undefined) state.out++
  return window
}

/** Says the filler of `buffer` will write no more into it. */
export const seal = (buffer: Uint8Array): void => {
  const state = lent.get(buffer.buffer)
  if (state === undefined) return
  state.sealed = true
  reuse(buffer.buffer, state)
}

/** Gives back a batch handed on by `share`; anything else is ignored. */
export const give = (batch: Uint8Array): void => {
  const state = lent.get(batch.buffer)
  if (state === undefined || state.out === 0) return
  state.out--
  reuse(batch.buffer, state)
}
