import type { Task, TaskList, TaskStatus } from "../prompt/Tasks.js"

/**
 * A task line as `openspec` (1.13) reads one: a list item (`-`, `*`, `+`, `1.`, `1)`), indented or
 * not, with a box holding at most one marker (`[ ]`, `[x]`, `[]`, `[~]`, `[ x ]`) and not followed by
 * `(` or `[` (a link). Only `x` or `X` is done. Every line counts, inside a code block too: OpenSpec
 * counts them so, and its `list`, `status` and `archive` are what a person checks the change with.
 */
const TASK_LINE = /^\s*(?:[-*+]|\d{1,9}[.)])\s*\[(?:\s*([^\]\s]?)\s*\](?![([])|\s+\])\s*(.*)/
const NUMBERED = /^(\d+(?:\.\d+)*)[.:)]?[ \t](.*)/s

/** OpenSpec counts a task done or not; spool keeps the in-progress markers it knows, which OpenSpec counts as not done too. */
const statusOf = (marker: string): TaskStatus =>
  marker === "x" || marker === "X" ? "complete" : marker === "~" || marker === ">" || marker === "/" ? "in-progress" : "pending"

/** Parses an OpenSpec change's `tasks.md` as `openspec list` and `openspec instructions apply` count it; never throws. */
export const parseOpenSpecTasks = (text: string | null): TaskList => {
  if (text === null) return { tasks: [] }
  const tasks: Array<Task> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const match = TASK_LINE.exec(lines[i]!)
    if (match === null) continue
    const description = match[2]!.trim()
    const number = NUMBERED.exec(description)
    const status = statusOf(match[1] ?? "")
    tasks.push(
      number === null
        ? { id: `line ${i + 1}`, description, status, line: i + 1 }
        : { id: number[1]!, description: number[2]!.trim(), status, line: i + 1 }
    )
  }
  return { tasks }
}
