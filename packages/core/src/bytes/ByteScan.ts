/**
 * Searches that must look at every byte of an agent's output without decoding it, 16 positions at
 * a time, by a small WebAssembly SIMD module (`wasm/scan.wat`); where WebAssembly SIMD is missing,
 * a plain loop does the same.
 * - pairs: where byte pairs of up to 8 buckets occur (the secret anchors of the iteration log). A
 *   position found may hold a pair that is in no bucket (the buckets are matched by nibbles): the
 *   caller checks each one, as it checks the bytes around it anyway.
 * - quotes: where a JSON string may end (a `"` that no backslash escapes, give or take a run of
 *   backslashes the caller counts), skipping the escaped quotes of a long string at once.
 */
import { SCAN_WASM } from "./ScanModule.js"

export interface PairScanner {
  /** Makes `bytes` the batch that `find` searches (copied: the caller may reuse them). */
  readonly load: (bytes: Uint8Array) => void
  /** The first position at or after `from` in the loaded batch where a pair of a bucket may start; -1 if none. */
  readonly find: (from: number) => number
}

/** Where the batch goes in the module's memory (the tables take the first 64 bytes), and the room it needs after it. */
const DATA = 64
const SLACK = 80
const PAGE = 64 * 1024

/** What is used of the runtime's WebAssembly (core is typed for no particular runtime). */
interface Wasm {
  readonly validate: (bytes: Uint8Array) => boolean
  readonly Module: new(bytes: Uint8Array) => object
  readonly Instance: new(module: object) => { readonly exports: unknown }
}
interface Exports {
  readonly memory: { readonly buffer: ArrayBuffer; readonly grow: (pages: number) => number }
  readonly scan: (ptr: number, len: number, from: number) => number
  readonly quote: (ptr: number, len: number, from: number) => number
}

/** A fresh instance of the module whose memory holds `length` bytes at `DATA` (and the room around them). */
const instance = (module: object) => {
  const exports = new wasm!.Instance(module).exports as Exports
  return {
    exports,
    /** The module's memory, grown to hold `length` bytes at `DATA`. */
    room: (length: number) => {
      const needed = DATA + length + SLACK
      if (exports.memory.buffer.byteLength < needed) exports.memory.grow(Math.ceil((needed - exports.memory.buffer.byteLength) / PAGE))
      return new Uint8Array(exports.memory.buffer)
    }
  }
}

const wasm = (globalThis as { WebAssembly?: Wasm }).WebAssembly

const wasmModule: object | null = (() => {
  try {
    const binary = Uint8Array.from(atob(SCAN_WASM), (char) => char.charCodeAt(0))
    return wasm !== undefined && wasm.validate(binary) ? new wasm.Module(binary) : null
  } catch {
    return null
  }
})()

/** The nibble tables of `buckets` (at most 8): lo0, hi0, lo1, hi1. */
const tablesOf = (buckets: ReadonlyArray<ReadonlyArray<readonly [number, number]>>): Uint8Array => {
  if (buckets.length > 8) throw new Error("a pair scanner takes at most 8 buckets")
  const tables = new Uint8Array(64)
  buckets.forEach((pairs, bucket) => {
    for (const [first, second] of pairs) {
      tables[first & 15]! |= 1 << bucket
      tables[16 + (first >> 4)]! |= 1 << bucket
      tables[32 + (second & 15)]! |= 1 << bucket
      tables[48 + (second >> 4)]! |= 1 << bucket
    }
  })
  return tables
}

const wasmScanner = (module: object, tables: Uint8Array): PairScanner => {
  const { exports: { scan }, room } = instance(module)
  room(0).set(tables, 0)
  let length = 0
  return {
    load: (bytes) => {
      room(bytes.length).set(bytes, DATA)
      length = bytes.length
    },
    // A pair starts at most at the second-to-last byte.
    find: (from) => from >= length - 1 ? -1 : scan(DATA, length - 1, from)
  }
}

/** The same search, one position at a time. */
const loopScanner = (tables: Uint8Array): PairScanner => {
  let loaded = new Uint8Array(0)
  const bucketsOf = (byte: number, lo: number, hi: number) => tables[lo + (byte & 15)]! & tables[hi + (byte >> 4)]!
  return {
    load: (bytes) => {
      loaded = bytes.slice()
    },
    find: (from) => {
      for (let i = Math.max(0, from); i + 1 < loaded.length; i++) {
        if ((bucketsOf(loaded[i]!, 0, 16) & bucketsOf(loaded[i + 1]!, 32, 48)) !== 0) return i
      }
      return -1
    }
  }
}

/**
 * A scanner for `buckets` of pairs (at most 8 buckets; pairs put in one bucket match each other's
 * nibbles too, so a bucket should hold pairs alike). `native: false` takes the plain loop.
 */
export const makePairScanner = (
  buckets: ReadonlyArray<ReadonlyArray<readonly [number, number]>>,
  options: { readonly native?: boolean } = {}
): PairScanner => {
  const tables = tablesOf(buckets)
  return wasmModule !== null && options.native !== false ? wasmScanner(wasmModule, tables) : loopScanner(tables)
}

/** Whether this runtime runs the SIMD module (else the loops are used). */
export const nativeScan = wasmModule !== null

export interface QuoteScanner {
  /** Makes `bytes` the bytes that `find` searches (copied), `before` the (up to 2) bytes that came just before them. */
  readonly load: (bytes: Uint8Array, before: Uint8Array) => void
  /**
   * The first position at or after `from` holding a `"` that is not preceded by a backslash, or
   * is preceded by two (then the caller counts the run); -1 if none.
   */
  readonly find: (from: number) => number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

const wasmQuoteScanner = (module: object): QuoteScanner => {
  const { exports: { quote }, room } = instance(module)
  let length = 0
  return {
    load: (bytes, before) => {
      const memory = room(bytes.length)
      memory[DATA - 2] = before.length >= 2 ? before[before.length - 2]! : 0
      memory[DATA - 1] = before.length >= 1 ? before[before.length - 1]! : 0
      memory.set(bytes, DATA)
      length = bytes.length
    },
    find: (from) => from >= length ? -1 : quote(DATA, length, from)
  }
}

const loopQuoteScanner = (): QuoteScanner => {
  let loaded = new Uint8Array(0)
  let context = [0, 0]
  const at = (i: number) => i >= 0 ? loaded[i]! : context[2 + i]!
  return {
    load: (bytes, before) => {
      loaded = bytes.slice()
      context = [before.length >= 2 ? before[before.length - 2]! : 0, before.length >= 1 ? before[before.length - 1]! : 0]
    },
    find: (from) => {
      for (let i = Math.max(0, from); i < loaded.length; i++) {
        if (loaded[i] === QUOTE && (at(i - 1) !== BACKSLASH || at(i - 2) === BACKSLASH)) return i
      }
      return -1
    }
  }
}

/** A scanner for the ends of JSON strings; `native: false` takes the plain loop. */
export const makeQuoteScanner = (options: { readonly native?: boolean } = {}): QuoteScanner =>
  wasmModule !== null && options.native !== false ? wasmQuoteScanner(wasmModule) : loopQuoteScanner()
