/** A change's `tasks.md`, in either format spool repositories use. */
export type TaskStatus = "pending" | "in-progress" | "complete" | "shelved"

export interface Task {
  /** The task's number (`1.1`), or `line N` when it has none. */
  readonly id: string
  readonly description: string
  readonly status: TaskStatus
  readonly line: number
}

export interface TaskList {
  readonly tasks: ReadonlyArray<Task>
}

const markers: Record<string, TaskStatus> = {
  " ": "pending",
  "": "pending",
  x: "complete",
  X: "complete",
  "~": "in-progress",
  ">": "in-progress",
  "/": "in-progress",
  "-": "shelved"
}

// Each pattern matches in linear time: runs of spaces never compete with each other, and `s`
// lets the rest of a line hold any character (a lone "\r" included) without backtracking.
// `- [ ] 1.1 Do something`, `* [x] Done`, `- [~] 2 Partly`
const checkbox = /^[ \t]*[-*+][ \t]+\[(.?)\](.*)$/s
// `### Task 1.1: Name`
const heading = /^#{2,6}[ \t]+Task[ \t]+([\w.-]+)(.*)$/is
// `- **Status**: [x] complete`
const statusLine = /^[ \t]*(?:[-*+][ \t]*)?\*\*Status\*\*[ \t]*:?[ \t]*\[(.?)\]/i
const numbered = /^(\d+(?:\.\d+)*)[.:)]?[ \t](.*)$/s

const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, " ").trim()

const LIMIT = 5000

/**
 * Parses `tasks.md`; never throws: unknown lines are ignored, a missing or empty file has no tasks.
 * A file with `### Task` headings is read in that structured form only (its checkboxes are
 * sub-items such as acceptance criteria); otherwise its checkbox lines are the tasks.
 */
export const parseTasks = (text: string | null): TaskList => {
  if (text === null) return { tasks: [] }
  const tasks: Array<Task> = []
  const lines = text.split(/\r?\n/)
  const structured = lines.some((line) => heading.test(line.slice(0, 2000)))
  let pendingHeading: { id: string; description: string; line: number } | null = null
  for (let i = 0; i < lines.length && tasks.length < LIMIT; i++) {
    const line = lines[i]!.slice(0, 2000)
    const lineNumber = i + 1
    const head = heading.exec(line)
    if (head !== null) {
      if (pendingHeading !== null) tasks.push({ ...pendingHeading, status: "pending" })
      const id = head[1]!.replace(/[.-]+$/, "") || head[1]!
      const name = oneLine(head[2]!.replace(/^[ \t]*[:.-]?/, ""))
      pendingHeading = { id, description: name || `Task ${id}`, line: lineNumber }
      continue
    }
    if (structured) {
      const status = pendingHeading === null ? null : statusLine.exec(line)
      if (status !== null) {
        tasks.push({ ...pendingHeading!, status: markers[status[1]!] ?? "pending" })
        pendingHeading = null
      }
      continue
    }
    const box = checkbox.exec(line)
    if (box !== null) {
      const status = markers[box[1]!]
      if (status === undefined) continue
      const rest = oneLine(box[2]!)
      const number = numbered.exec(rest)
      tasks.push(
        number !== null
          ? { id: number[1]!, description: number[2]!.trim(), status, line: lineNumber }
          : { id: `line ${lineNumber}`, description: rest, status, line: lineNumber }
      )
    }
  }
  if (pendingHeading !== null) tasks.push({ ...pendingHeading, status: "pending" })
  return { tasks }
}

const isDone = (task: Task) => task.status === "complete" || task.status === "shelved"

/** The first task neither complete nor shelved. */
export const currentTask = (list: TaskList): Task | null => list.tasks.find((task) => !isDone(task)) ?? null

export const openTaskCount = (list: TaskList) => list.tasks.filter((task) => !isDone(task)).length

/** `3/7 complete` (with `, 1 shelved` when any are). */
export const formatProgress = (list: TaskList) => {
  const complete = list.tasks.filter((task) => task.status === "complete").length
  const shelved = list.tasks.filter((task) => task.status === "shelved").length
  return `${complete}/${list.tasks.length} complete${shelved > 0 ? `, ${shelved} shelved` : ""}`
}

/** The prompt's task section body, or null when the change has no tasks. */
export const taskSection = (list: TaskList): string | null => {
  if (list.tasks.length === 0) return null
  const current = currentTask(list)
  return [
    `Progress: ${formatProgress(list)} (from tasks.md; mark tasks there as you finish them).`,
    current === null
      ? "Every task is complete or shelved: check the work, then finish."
      : `Current task: ${current.id}: ${current.description}`
  ].join("\n")
}
