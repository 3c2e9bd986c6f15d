/** A `--verify` check that rejected the iteration's claim: the command, how it ended (`exit 1, 4.2s`), its output (head and tail). */
export interface JournalCheck {
  readonly command: string
  readonly result: string
  readonly output: string
}

/** One failed iteration in `errors.md`. */
export interface JournalEntry {
  /** ISO 8601. */
  readonly timestamp: string
  readonly run: string
  readonly iteration: number
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  /** The failure the agent itself reported (e.g. an API error), one line; null when it said none. */
  readonly error: string | null
  readonly taskId: string | null
  readonly taskDescription: string | null
  readonly stderr: string
  readonly stdout: string
  /** Set when the agent's run went well but a check rejected its claim. */
  readonly check?: JournalCheck | null
}

/** The line that starts every entry. */
export const ENTRY_DELIMITER = "<!-- spool:error-entry -->"

const describeExit = (entry: Pick<JournalEntry, "exitCode" | "signal" | "timedOut">) =>
  entry.timedOut ? "timed out" : entry.signal !== null ? `signal ${entry.signal}` : `code ${entry.exitCode}`

/** A fence longer than any run of backticks in the text, so the block always closes where it should. */
const fenceFor = (text: string) => {
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length))
  return "`".repeat(Math.max(3, longest + 1))
}

const block = (label: string, text: string) => {
  const fence = fenceFor(text)
  return `### ${label}\n\n${fence}text\n${text.endsWith("\n") ? text : `${text}\n`}${fence}\n`
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

const describeFailure = (entry: JournalEntry) =>
  entry.check == null ? describeExit(entry) : `verify failed: ${oneLine(entry.check.command)}, ${entry.check.result}`

export const formatEntry = (entry: JournalEntry): string => {
  const parts = [
    `${ENTRY_DELIMITER}\n## Iteration ${entry.iteration} failed (${describeFailure(entry)})\n`,
    [
      `- time: ${entry.timestamp}`,
      `- run: ${entry.run}`,
      `- iteration: ${entry.iteration}`,
      `- exit: ${describeExit(entry)}`,
      ...(entry.error === null ? [] : [`- error: ${oneLine(entry.error)}`]),
      // The result first: it holds no ': ', the command may.
      ...(entry.check == null ? [] : [`- check: ${entry.check.result}: ${oneLine(entry.check.command)}`]),
      `- task: ${entry.taskId === null ? "none" : oneLine(entry.taskId)}`,
      `- description: ${entry.taskDescription === null ? "none" : oneLine(entry.taskDescription)}`
    ].join("\n") + "\n"
  ]
  if (entry.stderr !== "") parts.push(block("stderr", entry.stderr))
  if (entry.stdout !== "") parts.push(block("stdout", entry.stdout))
  if (entry.check != null && entry.check.output !== "") parts.push(block("check output", entry.check.output))
  return `${parts.join("\n")}\n`
}

const field = (fields: Map<string, string>, key: string) => {
  const value = fields.get(key)
  return value === undefined || value === "none" ? null : value
}

/** Reads `errors.md` back; text that is not a well-formed entry is skipped. */
export const parseEntries = (text: string): Array<JournalEntry> => {
  const entries: Array<JournalEntry> = []
  const lines = text.split("\n")
  let i = 0
  while (i < lines.length) {
    if (lines[i] !== ENTRY_DELIMITER) {
      i++
      continue
    }
    i++
    const fields = new Map<string, string>()
    const blocks = new Map<string, string>()
    while (i < lines.length && lines[i] !== ENTRY_DELIMITER) {
      const line = lines[i]!
      const kv = /^- (\w+): (.*)$/.exec(line)
      const heading = /^### (stderr|stdout|check output)$/.exec(line)
      if (kv !== null && blocks.size === 0) {
        fields.set(kv[1]!, kv[2]!)
        i++
      } else if (heading !== null) {
        i++
        while (i < lines.length && lines[i] === "") i++
        // Stryker disable next-line StringLiteral: past the end, any text that is not a fence line reads the same: no block
        const fence = /^(`{3,})text$/.exec(lines[i] ?? "")?.[1]
        if (fence === undefined) continue
        const start = ++i
        while (i < lines.length && lines[i] !== fence) i++
        blocks.set(heading[1]!, lines.slice(start, i).join("\n") + "\n")
        i++
      } else {
        i++
      }
    }
    const exit = fields.get("exit") ?? ""
    const iteration = Number(fields.get("iteration"))
    if (!fields.has("time") || !fields.has("run") || !Number.isInteger(iteration)) continue
    const check = /^(.*?): (.*)$/.exec(fields.get("check") ?? "")
    const code = /^code (-?\d+)$/.exec(exit)
    entries.push({
      timestamp: fields.get("time")!,
      run: fields.get("run")!,
      iteration,
      exitCode: code === null ? null : Number(code[1]),
      signal: /^signal (\S+)$/.exec(exit)?.[1] ?? null,
      timedOut: exit === "timed out",
      error: field(fields, "error"),
      taskId: field(fields, "task"),
      taskDescription: field(fields, "description"),
      stderr: blocks.get("stderr") ?? "",
      stdout: blocks.get("stdout") ?? "",
      ...(check === null ? {} : { check: { command: check[2]!, result: check[1]!, output: blocks.get("check output") ?? "" } })
    })
  }
  return entries
}

/** An entry cut down to `budget` characters of output for a prompt: the end of each stream says most. */
export const trimEntryForPrompt = (entry: JournalEntry, budget: number): JournalEntry => {
  const keepEnd = (text: string, n: number) =>
    text.length <= n ? text : `[... ${text.length - n} characters cut ...]\n${text.slice(text.length - n)}`
  const half = Math.floor(budget / 2)
  // With no stdout it is the whole budget; with no stderr the budget given it is not used.
  const stderrBudget = Math.max(half, budget - entry.stdout.length)
  if (entry.check != null) return { ...entry, check: { ...entry.check, output: keepEnd(entry.check.output, budget) } }
  return {
    ...entry,
    stderr: keepEnd(entry.stderr, stderrBudget),
    stdout: keepEnd(entry.stdout, Math.max(0, budget - Math.min(entry.stderr.length, stderrBudget)))
  }
}

/** Characters of output each entry may bring into a prompt. */
export const PROMPT_ENTRY_BUDGET = 2000

/** The body of the prompt's `Previous errors` section, or null when there are none. */
export const previousErrorsSection = (entries: ReadonlyArray<JournalEntry>, budget = PROMPT_ENTRY_BUDGET): string | null => {
  if (entries.length === 0) return null
  const parts = [
    "Earlier iterations failed as recorded below (newest last). Find the cause of each, fix it or avoid it, and do not repeat it."
  ]
  for (const original of entries) {
    const entry = trimEntryForPrompt(original, budget)
    const task = entry.taskId === null ? "" : `, task ${entry.taskId}${entry.taskDescription === null ? "" : `: ${entry.taskDescription}`}`
    const lines = [`### Run ${entry.run}, iteration ${entry.iteration}: ${describeFailure(entry)}${task}`]
    if (entry.error !== null) lines.push(`error: ${entry.error}`)
    if (entry.check != null) {
      lines.push(`The claim of completion was rejected: \`${oneLine(entry.check.command)}\` did not pass (${entry.check.result}).`)
      const output = entry.check.output.trimEnd()
      lines.push(output === "" ? "It printed nothing." : `Its output:\n${fenceFor(output)}\n${output}\n${fenceFor(output)}`)
    }
    if (entry.stderr !== "") lines.push(`stderr:\n${fenceFor(entry.stderr)}\n${entry.stderr.trimEnd()}\n${fenceFor(entry.stderr)}`)
    if (entry.stdout !== "") lines.push(`stdout:\n${fenceFor(entry.stdout)}\n${entry.stdout.trimEnd()}\n${fenceFor(entry.stdout)}`)
    parts.push(lines.join("\n"))
  }
  return parts.join("\n\n")
}
