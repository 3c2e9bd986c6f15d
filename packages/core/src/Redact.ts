/** What replaces a secret in anything spool writes. */
export const REDACTED = "[REDACTED]"

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
const SHAPE_MARKS = ["-", "_", "AKIA", "AIza", "Bearer", "Basic"]

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A function that replaces secrets in text: the values of environment variables whose names look
 * like secrets (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`), and common key shapes.
 */
export const makeRedactor = (env: Readonly<Record<string, string | undefined>>): (text: string) => string => {
  const values = Object.entries(env)
    .filter(([name, value]) => secretName.test(name) && value !== undefined && value.trim().length >= 6)
    .map(([, value]) => value!.trim())
    .sort((a, b) => b.length - a.length)
  const byValue = values.length === 0 ? null : new RegExp(values.map(escapeRegExp).join("|"), "g")
  return (text) => {
    const hasValue = values.some((value) => text.includes(value))
    if (!hasValue && !SHAPE_MARKS.some((mark) => text.includes(mark))) return text
    const out = hasValue && byValue !== null ? text.replace(byValue, REDACTED) : text
    return out.replace(secretShapes, (...args) => {
      const groups = args[args.length - 1] as { readonly scheme?: string }
      return groups.scheme === undefined ? REDACTED : `${groups.scheme} ${REDACTED}`
    })
  }
}
