/** What replaces a secret in anything spool writes. */
export const REDACTED = "[REDACTED]"

const secretName = /(_KEY|_TOKEN|_SECRET)$|PASSWORD|^(API_?KEY|TOKEN|SECRET)$/i

// Shapes of well-known credentials, whatever variable (if any) they came from.
const secretShapes: ReadonlyArray<RegExp> = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/g
]

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
    let out = byValue === null ? text : text.replace(byValue, REDACTED)
    for (const shape of secretShapes) {
      out = out.replace(shape, (_match, scheme?: string) =>
        typeof scheme === "string" && /^(Bearer|Basic)$/.test(scheme) ? `${scheme} ${REDACTED}` : REDACTED)
    }
    return out
  }
}
