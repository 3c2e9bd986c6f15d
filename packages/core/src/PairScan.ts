/**
 * Finds where byte pairs occur in a batch of bytes, for searches that must look at every byte of
 * an agent's output without decoding it (the secret anchors of the iteration log). Up to 8 buckets
 * of pairs are looked for at once, 16 positions at a time, by a small WebAssembly SIMD module
 * (`wasm/pairScan.wat`); where WebAssembly SIMD is missing, a plain loop does the same. A
 * position found may hold a pair that is in no bucket (the buckets are matched by nibbles): the
 * caller checks each one, as it checks the bytes around it anyway.
 */
import { PAIR_SCAN_WASM } from "./PairScanModule.js"

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
}

const wasm = (globalThis as { WebAssembly?: Wasm }).WebAssembly

const wasmModule: object | null = (() => {
  try {
    const binary = Uint8Array.from(atob(PAIR_SCAN_WASM), (char) => char.charCodeAt(0))
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
  const { memory, scan } = new wasm!.Instance(module).exports as Exports
  new Uint8Array(memory.buffer).set(tables, 0)
  let length = 0
  return {
    load: (bytes) => {
      const needed = DATA + bytes.length + SLACK
      if (memory.buffer.byteLength < needed) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / PAGE))
      new Uint8Array(memory.buffer).set(bytes, DATA)
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

/** Whether this runtime runs the SIMD module (else the loop is used). */
export const nativePairScan = wasmModule !== null
