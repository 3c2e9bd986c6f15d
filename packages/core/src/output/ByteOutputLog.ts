import { concat } from "../bytes/ByteConcat.js"
import { indexOf, lastIndexOf } from "../bytes/ByteSearch.js"
import { makePairScanner } from "../bytes/ByteScan.js"
import { incompleteTail } from "../bytes/Utf8Tail.js"
import { ANCHOR_LEAD, ANCHOR_REACH, type SecretAnchor } from "./Redact.js"

interface Region {
  start: number
  /** Where it ends as far as known: the furthest end of the finds in it whose end is known. */
  floor: number
  /** A find in it ends at the first line break after this stream offset, once one comes (-1: none waits). */
  lineFrom: number
  /** ...or here, if no line break comes before. */
  cap: number
}

/** Where a region ends at the latest. */
const endOf = (region: Region) => region.lineFrom === -1 ? region.floor : Math.max(region.floor, region.cap)

/**
 * What the iteration log gets of one output stream, in bytes: the bytes as they came, except
 * around secrets. Each batch is searched, without decoding it, for the redactor's anchors (a byte
 * sequence every secret holds, found by a native search); only the bytes around a find
 * (`ANCHOR_LEAD` before it, `ANCHOR_REACH` after it) are decoded and run through the redactor.
 * The last bytes of each batch are held back until the next one is searched, so a secret split
 * across batches is still found whole. `push` returns what can be written now, in order.
 */
export const makeByteOutputLog = (
  redact: (text: string) => string,
  anchors: ReadonlyArray<SecretAnchor>
): { readonly push: (bytes: Uint8Array) => Array<Uint8Array | string>; readonly flush: () => Array<Uint8Array | string> } => {
  const longest = anchors.reduce((max, anchor) => Math.max(max, anchor.needle.length), 1)
  // Bytes not yet written, from stream offset `heldStart` to `heldEnd`.
  let held: Array<Uint8Array> = []
  let heldStart = 0
  let heldEnd = 0
  // The last bytes seen, for anchors split across two batches.
  let seam: Uint8Array = new Uint8Array(0)
  const regions: Array<Region> = []

  /**
   * The bytes around an anchor found at `at` in `bytes` (stream offset `offset`): from its line's
   * start (at most `ANCHOR_LEAD` back) to its line's end (or `ANCHOR_REACH` on, for a secret that
   * may span lines, or a line whose end has not come yet).
   */
  const addRegion = (bytes: Uint8Array, offset: number, at: number, anchor: SecretAnchor) => {
    // A line that began before `bytes` began: the lead alone bounds it.
    const newline = lastIndexOf(bytes, 10, at - 1)
    const start = Math.max(heldStart, newline === -1 ? 0 : offset + newline + 1, offset + at - ANCHOR_LEAD)
    const after = at + anchor.needle.length
    const lineEnd = anchor.multiline === true ? -1 : indexOf(bytes, 10, after)
    const region: Region = lineEnd !== -1
      ? { start, floor: offset + lineEnd + 1, lineFrom: -1, cap: 0 }
      : anchor.multiline === true
      ? { start, floor: offset + at + ANCHOR_REACH, lineFrom: -1, cap: 0 }
      : { start, floor: 0, lineFrom: offset + after, cap: offset + at + ANCHOR_REACH }
    // Finds come sorted by where they start; a region never reaches back past the one before it.
    const last = regions[regions.length - 1]
    if (last === undefined || region.start >= endOf(last)) return void regions.push(region)
    last.start = Math.min(last.start, region.start)
    last.floor = Math.max(last.floor, region.floor)
    // Finds waiting for their line's end wait for the same line: the later one reaches further (one
    // whose end is known, with -1 and 0, changes neither).
    last.lineFrom = Math.max(last.lineFrom, region.lineFrom)
    last.cap = Math.max(last.cap, region.cap)
  }

  /** Regions waiting for their line's end: `bytes` (at stream offset `offset`) may hold it. */
  const endLines = (bytes: Uint8Array, offset: number) => {
    for (const region of regions) {
      if (region.lineFrom === -1) continue
      const lineEnd = indexOf(bytes, 10, Math.max(0, region.lineFrom - offset))
      if (lineEnd === -1) continue
      region.floor = Math.max(region.floor, Math.min(region.cap, offset + lineEnd + 1))
      region.lineFrom = -1
    }
  }

  // Anchors with a bucket are found by their first two bytes, all at once; the others one by one.
  const paired = anchors.filter((anchor) => anchor.bucket !== undefined && anchor.needle.length >= 2)
  const searched = anchors.filter((anchor) => !paired.includes(anchor))
  const byPair = new Map<number, Array<SecretAnchor>>()
  for (const anchor of paired) {
    const key = (anchor.needle[0]! << 8) | anchor.needle[1]!
    byPair.set(key, [...(byPair.get(key) ?? []), anchor])
  }
  const buckets: Array<Array<readonly [number, number]>> = []
  for (const anchor of paired) (buckets[anchor.bucket!] ??= []).push([anchor.needle[0]!, anchor.needle[1]!])
  const scanner = paired.length === 0 ? null : makePairScanner(buckets.filter((bucket) => bucket !== undefined))

  /** Every anchor in `bytes` (at stream offset `offset`) that ends past `past`, in order. */
  const search = (bytes: Uint8Array, offset: number, past: number) => {
    const found: Array<{ at: number; anchor: SecretAnchor }> = []
    const consider = (anchor: SecretAnchor, at: number) => {
      if (at + anchor.needle.length > past && (anchor.check === undefined || anchor.check(bytes, at))) found.push({ at, anchor })
    }
    if (scanner !== null) {
      scanner.load(bytes)
      for (let at = scanner.find(0); at !== -1; at = scanner.find(at + 1)) {
        for (const anchor of byPair.get((bytes[at]! << 8) | bytes[at + 1]!) ?? []) {
          if (holds(bytes, at, anchor.needle)) consider(anchor, at)
        }
      }
    }
    for (const anchor of searched) {
      for (let at = indexOf(bytes, anchor.needle); at !== -1; at = indexOf(bytes, anchor.needle, at + 1)) consider(anchor, at)
    }
    for (const { at, anchor } of found.sort((a, b) => a.at - b.at)) addRegion(bytes, offset, at, anchor)
  }

  /** The held bytes from `start` to `end`, as pieces of the batches (no copy). */
  const slices = (start: number, end: number): Array<Uint8Array> => {
    const out: Array<Uint8Array> = []
    let offset = heldStart
    for (const chunk of held) {
      const from = Math.max(start, offset)
      const to = Math.min(end, offset + chunk.length)
      if (from < to) out.push(chunk.subarray(from - offset, to - offset))
      offset += chunk.length
      if (offset >= end) break
    }
    return out
  }

  const redacted = (start: number, end: number, out: Array<Uint8Array | string>) => {
    const bytes = concat(slices(start, end))
    // Whole characters only: a character cut at either end is written as it came.
    let from = 0
    while (from < bytes.length && (bytes[from]! & 0xc0) === 0x80) from++
    const to = bytes.length - incompleteTail(bytes)
    if (from > 0) out.push(bytes.subarray(0, from))
    const text = decoder.decode(bytes.subarray(from, to))
    const replaced = redact(text)
    out.push(replaced === text ? bytes.subarray(from, to) : replaced)
    if (to < bytes.length) out.push(bytes.subarray(to))
  }

  /** Writes out what no search to come can change: everything before `limit`, regions ending by then redacted. */
  const emit = (limit: number): Array<Uint8Array | string> => {
    const out: Array<Uint8Array | string> = []
    let cursor = heldStart
    while (regions.length > 0 && endOf(regions[0]!) <= limit) {
      const region = regions.shift()!
      for (const piece of slices(cursor, region.start)) out.push(piece)
      // Regions never overlap; were one to reach back past what was written, nothing is written twice.
      redacted(Math.max(cursor, region.start), endOf(region), out)
      cursor = endOf(region)
    }
    const until = Math.min(limit, regions[0]?.start ?? limit)
    if (until > cursor) {
      for (const piece of slices(cursor, until)) out.push(piece)
      cursor = until
    }
    // Let go of the batches written out.
    let offset = heldStart
    while (held.length > 0 && offset + held[0]!.length <= cursor) offset += held.shift()!.length
    if (held.length > 0 && cursor > offset) {
      held[0] = held[0]!.subarray(cursor - offset)
      offset = cursor
    }
    heldStart = offset
    return out
  }

  return {
    push: (bytes) => {
      if (bytes.length === 0) return []
      const offset = heldEnd
      held.push(bytes)
      heldEnd += bytes.length
      // Anchors that start in the last batch and end in this one.
      if (seam.length > 0) search(concat([seam, bytes.subarray(0, longest - 1)]), offset - seam.length, seam.length)
      // The lines found so far end before this batch is searched: a find on a later line is a region of its own.
      endLines(bytes, offset)
      search(bytes, offset, 0)
      const keep = Math.min(longest - 1, heldEnd)
      seam = concat(slices(heldEnd - keep, heldEnd))
      // A find in the next batch may reach back to its line's start, at most `ANCHOR_LEAD` bytes.
      const newline = lastIndexOf(bytes, 10)
      const out = emit(Math.max(newline === -1 ? 0 : offset + newline + 1, heldEnd - ANCHOR_LEAD - longest))
      // What is held is copied: the batch may be reused once what was returned is written.
      if (held.length > 0) held = [concat(held)]
      return out
    },
    flush: () => {
      // What has not come never will: a region ends with the output at the latest.
      for (const region of regions) {
        region.floor = Math.min(endOf(region), heldEnd)
        region.lineFrom = -1
      }
      const out = emit(heldEnd)
      held = []
      heldStart = heldEnd
      seam = new Uint8Array(0)
      return out
    }
  }
}

const decoder = new TextDecoder()

/**
 * Whether `bytes` holds all of `needle` at `at`. One cut by the end of `bytes` is found whole by the
 * search of the seam once the rest has come.
 */
const holds = (bytes: Uint8Array, at: number, needle: Uint8Array) => {
  for (let i = 0; i < needle.length; i++) if (bytes[at + i] !== needle[i]) return false
  return true
}
