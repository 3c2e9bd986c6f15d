import { parseTasks, type TaskList } from "../prompt/Tasks.js"
import type { TaskFormat } from "./Layout.js"
import { parseOpenSpecTasks } from "./OpenSpecTasks.js"
import { parseSpecKitTasks } from "./SpecKitTasks.js"

/** A change's `tasks.md` read as its tree's own tools read it. */
export const readTaskList = (format: TaskFormat, text: string | null): TaskList =>
  format === "openspec" ? parseOpenSpecTasks(text) : format === "speckit" ? parseSpecKitTasks(text) : parseTasks(text)
