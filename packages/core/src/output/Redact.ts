/** What replaces a secret in anything spool writes. */
export const REDACTED = "[REDACTED]"

/**
 * Where a secret may be in bytes: a byte sequence found by a native search, and a check of the
 * bytes around a find (`at`: where it starts) that rules most false finds out at once. Each
 * needle starts with a byte that is rare in ordinary output, so the search skips most of it.
 */
export interface SecretAnchor {
  readonly needle: Uint8Array
  /** The secret may go on past the end of the anchor's line (a PEM block, a token after `Bearer` and a line break). */
  readonly multiline?: boolean
  /** Found by its first two bytes with the pair scanner, in this bucket (0 to 7); otherwise by a native search. */
  readonly bucket?: number
  /** False when the bytes around `at` cannot be part of a secret; bytes outside `bytes` are unknown (true). */
  readonly check?: (bytes: Uint8Array, at: number) => boolean
}

/** True when `bytes` holds `expected` at `at`, or that part of it lies outside `bytes`. */
const holds = (bytes: Uint8Array, at: number, expected: Uint8Array | Set<number>, length = 1) => {
  if (expected instanceof Set) return at < 0 || at >= bytes.length || expected.has(bytes[at]!)
  for (let i = 0; i < length; i++) {
    const index = at + i
    if (index >= 0 && index < bytes.length && bytes[index] !== expected[i]) return false
  }
  return true
}

const encoded = (text: string) => new TextEncoder().encode(text)

/** The names, shapes and anchors of secrets, made for each redactor (one a loop). */
const makeShapes = () => {
  const secretName = /(_KEY|_TOKEN|_SECRET)$|PASSWORD|^(API_?KEY|TOKEN|SECRET)$/i

  // Shapes of well-known credentials, whatever variable (if any) they came from: one alternation, so
  // the text is scanned once rather than once a shape (it runs over every line an agent prints).
  const secretShapes = new RegExp(
    [
      /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/,
      /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/,
      /\bgh[pousr]_[A-Za-z0-9]{20,}/,
      /\bgithub_pat_[A-Za-z0-9_]{20,}/,
      /\bglpat-[A-Za-z0-9_-]{20,}/,
      /\bxox[abprs]-[A-Za-z0-9-]{10,}/,
      /\bAKIA[0-9A-Z]{16}\b/,
      /\bAIza[0-9A-Za-z_-]{35}\b/,
      /\b(?<scheme>Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/
    ].map((shape) => `(?:${shape.source})`).join("|"),
    "g"
  )

  /**
   * A piece of every shape above, looked for with `includes` first: text holding none of them (most
   * of what an agent prints) is not run through the pattern at all.
   */
  // Stryker disable next-line StringLiteral: every text includes "", so such a mark only lets more text on to the pattern (speed)
  const SHAPE_MARKS = ["-", "_", "AKIA", "AIza", "Bearer", "Basic"]

  const byteOf = (char: string) => char.charCodeAt(0)
  const anyOf = (chars: string) => new Set([...chars].map(byteOf))
  const GITHUB_KIND = anyOf("pousr")
  const SLACK_KIND = anyOf("abprs")
  const GITHUB = encoded("github")
  const GH = encoded("gh")
  /** `ghp_`, `gho_`, ... around the kind letter and underscore found at `at`. */
  const githubToken = (bytes: Uint8Array, at: number) => holds(bytes, at - 2, GH, 2) && holds(bytes, at, GITHUB_KIND)
  const S = anyOf("s")
  const DASH = anyOf("-")

  const KE = encoded("KE")
  const A = anyOf("A")
  const G = anyOf("g")
  const X = anyOf("x")

  /**
   * Every shape of `secretShapes` holds one of these (the check aside, each is a necessary part of
   * its shape). They are found by their first two bytes (`bucket`: the pair scanner's bucket), each
   * pair chosen to be rare in ordinary output; pairs in one bucket share their nibbles' tables, so
   * a bucket holds pairs alike.
   */
  const SHAPE_ANCHORS: ReadonlyArray<SecretAnchor> = [
    // -----BEGIN ... PRIVATE KEY-----
    { needle: encoded("Y-----"), check: (bytes, at) => holds(bytes, at - 2, KE, 2), multiline: true, bucket: 0 },
    // sk-...
    { needle: encoded("k-"), check: (bytes, at) => holds(bytes, at - 1, S), bucket: 1 },
    // ghp_ ghr_ ghs_ ghu_ ..., gho_ ...
    ...["p_", "r_", "s_", "u_"].map((needle) => ({ needle: encoded(needle), check: githubToken, bucket: 2 })),
    { needle: encoded("o_"), check: githubToken, bucket: 3 },
    // github_pat_...
    { needle: encoded("_pat_"), check: (bytes, at) => holds(bytes, at - 6, GITHUB, GITHUB.length), bucket: 4 },
    // glpat-...
    { needle: encoded("lpat-"), check: (bytes, at) => holds(bytes, at - 1, G), bucket: 5 },
    // xoxb- ...
    { needle: encoded("xo"), check: (bytes, at) => holds(bytes, at + 2, X) && holds(bytes, at + 3, SLACK_KIND) && holds(bytes, at + 4, DASH), bucket: 6 },
    { needle: encoded("AKIA"), bucket: 7 },
    { needle: encoded("Iza"), check: (bytes, at) => holds(bytes, at - 1, A), bucket: 7 },
    { needle: encoded("Bearer"), multiline: true, bucket: 7 },
    { needle: encoded("Basic"), multiline: true, bucket: 7 }
  ]

  return { secretName, secretShapes, SHAPE_MARKS, SHAPE_ANCHORS }
}

/** A secret starts on its anchor's line, at most this many bytes before it (`-----BEGIN ... PRIVATE KEY-----`). */
export const ANCHOR_LEAD = 256
/** A secret ends on its anchor's line (unless `multiline`), and within this many bytes after it (a PEM key is a few KiB). */
export const ANCHOR_REACH = 16 * 1024

// Stryker disable all: which 4 bytes of a value's first line its anchor is, and so how fast the
// search for it runs, is all this decides; any 4 bytes of that line, checked against the whole line
// around a find, find every copy of the value.
/** How common a byte is in what agents print (lower: rarer): a search for a rare first byte skips more. */
const commonness = (byte: number) =>
  byte >= 0x41 && byte <= 0x5a ? 1 : byte >= 0x30 && byte <= 0x39 ? 3 : "zqxjkvbwyfgpm".includes(String.fromCharCode(byte)) ? 2 : 5

/** Where in `line` (its first 64 bytes) the rarest 4 bytes start. */
const rarestLead = (line: Uint8Array) => {
  let lead = 0
  for (let i = 1; i <= Math.min(64, line.length - 4); i++) {
    if (commonness(line[i]!) < commonness(line[lead]!)) lead = i
  }
  return lead
}
// Stryker restore all

/**
 * The anchor of an environment variable's secret value: 4 bytes of its first line starting at a
 * rare byte (within its first 64 bytes), checked against the whole first line around a find. A
 * value of several lines (a PEM key in a variable) may go on past that line.
 */
const valueAnchor = (value: string): SecretAnchor => {
  const firstLine = encoded(value.split(/\r?\n/, 1)[0]!)
  const lead = rarestLead(firstLine)
  return {
    needle: firstLine.subarray(lead, lead + Math.min(4, firstLine.length)),
    multiline: firstLine.length < encoded(value).length,
    check: (bytes, at) => holds(bytes, at - lead, firstLine, firstLine.length)
  }
}

/**
 * Replaces secrets in text. `anchors`: what every secret it replaces holds, for finding them in
 * bytes without decoding (absent: any text may hold one).
 */
export interface Redactor {
  (text: string): string
  readonly anchors?: ReadonlyArray<SecretAnchor>
}

/**
 * A function that replaces secrets in text: the values of environment variables whose names look
 * like secrets (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`), and common key shapes.
 */
export const makeRedactor = (env: Readonly<Record<string, string | undefined>>): Redactor => {
  const { secretName, secretShapes, SHAPE_MARKS, SHAPE_ANCHORS } = makeShapes()
  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const values = Object.entries(env)
    .filter(([name, value]) => secretName.test(name) && value !== undefined && value.trim().length >= 6)
    .map(([, value]) => value!.trim())
    .sort((a, b) => b.length - a.length)
  const byValue = values.length === 0 ? null : new RegExp(values.map(escapeRegExp).join("|"), "g")
  const redact = (text: string) => {
    const hasValue = values.some((value) => text.includes(value))
    if (!hasValue && !SHAPE_MARKS.some((mark) => text.includes(mark))) return text
    const out = hasValue && byValue !== null ? text.replace(byValue, REDACTED) : text
    return out.replace(secretShapes, (...args) => {
      const groups = args[args.length - 1] as { readonly scheme?: string }
      return groups.scheme === undefined ? REDACTED : `${groups.scheme} ${REDACTED}`
    })
  }
  return Object.assign(redact, { anchors: [...SHAPE_ANCHORS, ...values.map(valueAnchor)] })
}
