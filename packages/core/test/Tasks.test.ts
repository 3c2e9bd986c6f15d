import { describe, expect, it } from "@effect/vitest"
import { currentTask, formatProgress, openTaskCount, parseTasks, taskSection } from "../src/Tasks.js"

describe("tasks.md", () => {
  it("parses checkbox lines with every marker", () => {
    const list = parseTasks([
      "# Tasks",
      "- [x] 1.1 Done thing",
      "- [X] 1.2 Also done",
      "- [~] 1.3 In progress tilde",
      "- [>] 1.4 In progress arrow",
      "- [/] 1.5 In progress slash",
      "- [-] 1.6 Shelved",
      "- [ ] 1.7 Pending",
      "* [ ] Without a number",
      "- [?] not a task marker",
      "some prose - [ ] not at line start"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([
      ["1.1", "complete"],
      ["1.2", "complete"],
      ["1.3", "in-progress"],
      ["1.4", "in-progress"],
      ["1.5", "in-progress"],
      ["1.6", "shelved"],
      ["1.7", "pending"],
      ["line 9", "pending"]
    ])
    expect(list.tasks[0]!.description).toBe("Done thing")
    expect(list.tasks[7]!.description).toBe("Without a number")
  })

  it("parses the structured form: a task heading followed by a Status line", () => {
    const list = parseTasks([
      "## Wave 1",
      "### Task 1.1: Create the parser",
      "- **Files**: src/parser.ts",
      "- **Status**: [x] complete",
      "",
      "### Task 1.2: Wire the CLI",
      "- **Action**: call it",
      "- **Status**: [ ] pending",
      "### Task 2.1: Shelve this",
      "- **Status**: [-] shelved",
      "### Task 2.2: Working",
      "- **Status**: [~] in progress"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.description, t.status])).toEqual([
      ["1.1", "Create the parser", "complete"],
      ["1.2", "Wire the CLI", "pending"],
      ["2.1", "Shelve this", "shelved"],
      ["2.2", "Working", "in-progress"]
    ])
  })

  it("reads checkboxes under task headings as sub-items, not tasks", () => {
    const list = parseTasks([
      "### Task 1.1: Parser",
      "- [ ] handles empty input",
      "- **Status**: [x] complete",
      "- [ ] acceptance: documented",
      "### Task 1.2. Wire it",
      "- **Status**: [ ] pending"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.description, t.status])).toEqual([
      ["1.1", "Parser", "complete"],
      ["1.2", "Wire it", "pending"]
    ])
  })

  it("treats a missing or empty file as no tasks", () => {
    expect(parseTasks(null).tasks).toEqual([])
    expect(parseTasks("").tasks).toEqual([])
    expect(taskSection(parseTasks(""))).toBeNull()
  })

  it("finds the current task: the first one neither complete nor shelved", () => {
    const list = parseTasks("- [x] 1 a\n- [-] 2 b\n- [~] 3 c\n- [ ] 4 d\n")
    expect(currentTask(list)?.id).toBe("3")
    expect(openTaskCount(list)).toBe(2)
    expect(currentTask(parseTasks("- [x] 1 a\n- [-] 2 b\n"))).toBeNull()
  })

  it("reports progress and the current task for the prompt", () => {
    const list = parseTasks("- [x] 1.1 a\n- [x] 1.2 b\n- [x] 1.3 c\n- [-] 1.4 d\n- [ ] 1.5 Write docs\n- [ ] 1.6 f\n- [ ] 1.7 g\n")
    expect(formatProgress(list)).toBe("3/7 complete, 1 shelved")
    expect(taskSection(list)).toContain("Progress: 3/7 complete, 1 shelved")
    expect(taskSection(list)).toContain("Current task: 1.5: Write docs")
  })
})
