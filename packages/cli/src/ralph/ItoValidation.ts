/**
 * Where ito looks for a project's validation commands in its config, in its order: the first that
 * holds a command wins (a string, or a list of strings).
 */
export const ITO_VALIDATION = [
  ["ralph", "validationCommands"],
  ["ralph", "validationCommand"],
  ["ralph", "validation", "commands"],
  ["ralph", "validation", "command"],
  ["validationCommands"],
  ["validationCommand"],
  ["project", "validationCommands"],
  ["project", "validationCommand"],
  ["project", "validation", "commands"],
  ["project", "validation", "command"]
] as const

/** ito's validation commands and the path to them in its config, the key that gives them. */
export interface ItoValidation {
  readonly commands: ReadonlyArray<string>
  readonly path: ReadonlyArray<string>
}

/**
 * ito's validation commands in its config, read as ito reads them: empty ones and other values
 * skipped; null when it has none.
 */
export const itoValidationCommands = (config: unknown): ItoValidation | null => {
  for (const path of ITO_VALIDATION) {
    let value: unknown = config
    for (const key of path) value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined
    const items = typeof value === "string" ? [value] : Array.isArray(value) ? value : []
    const commands = items.flatMap((item) => (typeof item === "string" && item.trim() !== "" ? [item.trim()] : []))
    if (commands.length > 0) return { commands, path }
  }
  return null
}
