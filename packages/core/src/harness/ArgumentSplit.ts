/** Splits `program arg "quoted arg"` into argv, as a shell would for plain words and quotes, without running a shell; null on an unterminated quote. */
export const splitArgs = (text: string): Array<string> | null => {
  const args: Array<string> = []
  let current = ""
  let quote: "'" | "\"" | null = null
  let started = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (quote !== null) {
      if (ch === quote) quote = null
      else if (ch === "\\" && quote === "\"" && i + 1 < text.length) current += text[++i]
      else current += ch
    } else if (ch === "'" || ch === "\"") {
      quote = ch
      started = true
    } else if (ch === "\\" && i + 1 < text.length) {
      current += text[++i]
      started = true
    } else if (/\s/.test(ch)) {
      if (started) args.push(current)
      current = ""
      started = false
    } else {
      current += ch
      started = true
    }
  }
  if (quote !== null) return null
  if (started) args.push(current)
  return args
}
