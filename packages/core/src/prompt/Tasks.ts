/** A change's `tasks.md`, in either format spool repositories use. */
import { doneTasks, formatTaskProgress, type TaskCounts } from "../text/Figures.js"

export type TaskStatus = "pending" | "in-progress" | "complete" | "shelved"

export interface Task {
  /** The task's number (`1.1`), or `line N` when it has none. */
  readonly id: string
  readonly description: string
  readonly status: TaskStatus
  readonly line: number
  /** spec-kit's phase heading the task sits under (`Phase 2: Foundational`). */
  readonly phase?: string
  /** spec-kit's `[P]`: the task may run in parallel with the others of its phase. */
  readonly parallel?: boolean
  /** spec-kit's user story (`US1`). */
  readonly story?: string
}

export interface TaskList {
  readonly tasks: ReadonlyArray<Task>
}

const LIMIT = 5000

/**
 * The rules of both formats. Made for each parse rather than once per module: a handful of
 * patterns cost nothing next to reading the file, and each rule is then exercised, and can be
 * changed under test, by just the tests that parse with it.
 */
const makeRules = () => {
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

  const words: Record<string, TaskStatus> = {
    pending: "pending",
    todo: "pending",
    "in-progress": "in-progress",
    complete: "complete",
    completed: "complete",
    done: "complete",
    shelved: "shelved",
    discarded: "shelved",
    "out-of-scope": "shelved",
    skipped: "shelved",
    cancelled: "shelved",
    canceled: "shelved"
  }

  // Each pattern matches in linear time: runs of spaces never compete with each other, and `s`
  // lets the rest of a line (`.*`, to its end) hold any character, a lone "\r" included, without backtracking.
  // A box is `[x]`, or `\[x\]` as markdown formatters escape it.
  // `- [ ] 1.1 Do something`, `* [x] Done`, `- \[x\] 2 Formatted`
  const checkbox = /^[ \t]*[-*+][ \t]+(?:\[(.?)\]|\\\[(.?)\\\])(.*)/s
  // `### Task 1.1: Name`: the number is taken whole (the lookahead makes it atomic) and must end there.
  const heading = /^(#{2,6})[ \t]+Task[ \t]+(?=(\d+(?:\.\d+)*))\2\.?(?![\w.])(.*)/is
  // Any heading: one of the same or a higher level ends a task's section.
  const anyHeading = /^(#{1,6})(?:[ \t]|$)/
  // `- **Status**: [x] complete`, `- **Status**: \[x\] completed (note)`, `**Status:** done`
  const statusLine = /^[ \t]*(?:[-*+][ \t]*)?\*\*Status(?:\*\*[ \t]*:?|:\*\*)[ \t]*(?:\[(.?)\]|\\\[(.?)\\\])?[ \t]*(.*)/is
  const statusWord = /^(in[-_ ]progress|out[-_ ]of[-_ ]scope|completed|complete|done|pending|todo|shelved|discarded|skipped|cancell?ed)(?![\w-])/i
  const numbered = /^(?:Task[ \t]+)?(\d+(?:\.\d+)*)[.:)]?[ \t](.*)/is
  // A fenced code block opens with three or more backticks (no backtick after them) or tildes.
  const fenceOpen = /^[ \t]*(`{3,}(?=[^`]*$)|~{3,})/
  const fenceClose = /^[ \t]*(`{3,}|~{3,})[ \t]*$/

  const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, " ").trim()

  const LINE = 2000

  /** A status line's status: its word when it has a known one (as spool's own tools read it), else its box. */
  const statusOf = (line: string): TaskStatus | null => {
    const status = statusLine.exec(line)
    if (status === null) return null
    const word = statusWord.exec(status[3]!)
    if (word !== null) return words[word[1]!.toLowerCase().replace(/[_ ]/g, "-")]!
    const marker = status[1] ?? status[2]
    return marker === undefined ? null : markers[marker] ?? "pending"
  }

  /** The lines outside fenced code blocks (examples, never tasks), each cut to its first 2000 characters. */
  const proseLines = (text: string): Array<readonly [line: string, number: number]> => {
    const lines = text.split(/\r?\n/)
    const prose: Array<readonly [string, number]> = []
    let fence: string | null = null
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.slice(0, LINE)
      if (fence !== null) {
        const close = fenceClose.exec(line)
        if (close !== null && close[1]![0] === fence[0] && close[1]!.length >= fence.length) fence = null
        continue
      }
      const open = fenceOpen.exec(line)
      if (open !== null) fence = open[1]!
      else prose.push([line, i + 1])
    }
    return prose
  }

  const checkboxTask = (line: string, lineNumber: number): Task | null => {
    const box = checkbox.exec(line)
    if (box === null) return null
    const status = markers[box[1] ?? box[2]!]
    if (status === undefined) return null
    const rest = oneLine(box[3]!)
    const number = numbered.exec(rest)
    return number !== null
      ? { id: number[1]!, description: number[2]!.trim(), status, line: lineNumber }
      : { id: `line ${lineNumber}`, description: rest, status, line: lineNumber }
  }

  return { heading, anyHeading, statusOf, proseLines, checkboxTask, oneLine }
}

/**
 * Parses `tasks.md`; never throws: unknown lines are ignored, a missing or empty file has no tasks.
 * Only `Task <number>` headings are tasks (a legend, a checkpoint are not), and nothing inside a
 * fenced code block is. A file with such headings is read in that structured form: each task's
 * status is its last `**Status**:` line before the next task heading or a heading of its level or
 * above, its checkboxes are sub-items. A file whose task headings have no status lines but which has
 * checkboxes keeps its status in those, so its checkbox lines are the tasks, as in a plain list.
 */
export const parseTasks = (text: string | null): TaskList => {
  if (text === null) return { tasks: [] }
  const { heading, anyHeading, statusOf, proseLines, checkboxTask, oneLine } = makeRules()
  const lines = proseLines(text)
  let headings = false
  let statuses = false
  let boxes = false
  for (const [line, lineNumber] of lines) {
    headings ||= heading.test(line)
    statuses ||= statusOf(line) !== null
    boxes ||= checkboxTask(line, lineNumber) !== null
  }
  const tasks: Array<Task> = []
  if (!headings || (!statuses && boxes)) {
    for (const [line, lineNumber] of lines) {
      if (tasks.length >= LIMIT) break
      const task = checkboxTask(line, lineNumber)
      if (task !== null) tasks.push(task)
    }
    return { tasks }
  }
  let open: { id: string; description: string; line: number; level: number; status: TaskStatus } | null = null
  const close = () => {
    if (open !== null && tasks.length < LIMIT) tasks.push({ id: open.id, description: open.description, status: open.status, line: open.line })
    open = null
  }
  for (const [line, lineNumber] of lines) {
    const level = anyHeading.exec(line)?.[1]!.length
    if (level !== undefined) {
      const head = heading.exec(line)
      if (open !== null && (head !== null || level <= open.level)) close()
      if (head === null) continue
      const id = head[2]!
      const name = oneLine(head[3]!).replace(/^[:.-]/, "").trim()
      open = { id, description: name || `Task ${id}`, line: lineNumber, level, status: "pending" }
      continue
    }
    if (open === null) continue
    const status = statusOf(line)
    if (status !== null) open.status = status
  }
  close()
  return { tasks }
}

const isDone = (task: Task) => task.status === "complete" || task.status === "shelved"

/** The first task neither complete nor shelved. */
export const currentTask = (list: TaskList): Task | null => list.tasks.find((task) => !isDone(task)) ?? null

/** The tasks counted, once for every view: complete, shelved, and all of them. */
export const taskCounts = (list: TaskList): TaskCounts => ({
  complete: list.tasks.filter((task) => task.status === "complete").length,
  shelved: list.tasks.filter((task) => task.status === "shelved").length,
  total: list.tasks.length
})

/** The tasks neither complete nor shelved. */
export const openTaskCount = (list: TaskList) => {
  const counts = taskCounts(list)
  return counts.total - doneTasks(counts)
}

/** `3/7 complete` (with `, 1 shelved` when any are). */
export const formatProgress = (list: TaskList) => formatTaskProgress(taskCounts(list))

/** `T012 [P] [US1]`: a task's id with spec-kit's markers, as its tasks.md writes them. */
export const taskLabel = (task: Task) => `${task.id}${task.parallel === true ? " [P]" : ""}${task.story === undefined ? "" : ` [${task.story}]`}`

/** `Phase 2: Foundational: 1/6 complete`: the progress of the current task's phase, when the tasks have phases. */
const phaseProgress = (list: TaskList, phase: string) => {
  const tasks = list.tasks.filter((task) => task.phase === phase)
  return `${phase}: ${formatProgress({ tasks })}`
}

/** The prompt's task section body, or null when the change has no tasks. */
export const taskSection = (list: TaskList): string | null => {
  if (list.tasks.length === 0) return null
  const current = currentTask(list)
  return [
    `Progress: ${formatProgress(list)} (from tasks.md; mark tasks there as you finish them).`,
    ...(current?.phase === undefined ? [] : [`Phase: ${phaseProgress(list, current.phase)}`]),
    current === null
      ? "Every task is complete or shelved: check the work, then finish."
      : `Current task: ${taskLabel(current)}: ${current.description}`
  ].join("\n")
}
