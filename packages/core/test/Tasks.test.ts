import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { currentTask, formatProgress, openTaskCount, parseTasks, taskSection } from "../src/prompt/Tasks.js"

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

  it("takes a checkbox task's description without the spaces after its number", () => {
    const list = parseTasks("- [ ] 1.2  \tAdd the entry point\n- [x] Task 3:   Ship it\n")
    expect(list.tasks.map((t) => [t.id, t.description])).toEqual([["1.2", "Add the entry point"], ["3", "Ship it"]])
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

describe("tasks.md as real spool repositories write it", () => {
  it("reads brackets escaped by markdown formatters as the bare ones, in checkbox lists and status lines", () => {
    const list = parseTasks([
      "- \\[x\\] 1.1 Escaped done",
      "- \\[ \\] 1.2 Escaped open",
      "- \\[-\\] 1.3 Escaped shelved",
      "- \\[~\\] 1.4 Escaped in progress",
      "- \\[x] 1.5 half escaped: not a box",
      "- [\\] 1.6 not a box either"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([
      ["1.1", "complete"],
      ["1.2", "pending"],
      ["1.3", "shelved"],
      ["1.4", "in-progress"]
    ])
    const structured = parseTasks([
      "### Task 1.1: One",
      "- **Status**: \\[x\\] complete",
      "### Task 1.2: Two",
      "- **Status**: \\[ \\] pending",
      "### Task 1.3: Three",
      "- **Status**: \\[-\\] shelved"
    ].join("\n"))
    expect(structured.tasks.map((t) => [t.id, t.status])).toEqual([["1.1", "complete"], ["1.2", "pending"], ["1.3", "shelved"]])
    // An empty box, bare or escaped, with no word after it is a status: pending, as an empty checkbox is
    // (the last status line counts, so it undoes the box checked before it).
    const empty = parseTasks([
      "### Task 2.1: Bare",
      "- **Status**: [x]",
      "- **Status**: []",
      "### Task 2.2: Escaped",
      "- **Status**: [x]",
      "- **Status**: \\[\\]"
    ].join("\n"))
    expect(empty.tasks.map((t) => [t.id, t.status])).toEqual([["2.1", "pending"], ["2.2", "pending"]])
  })

  it("takes a status line's word over its box, as spool's own tools do, and the box when the word is unknown", () => {
    const statuses = [
      "[ ] in-progress",
      "[ ] in progress",
      "[x] complete",
      "[x] completed (note)",
      "\\[x\\] done",
      "[-] shelved (not needed)",
      "[-] discarded (obsolete)",
      "[-] out-of-scope (another way)",
      "[x] pending",
      "[ ] complete",
      "[x] finished",
      "[~] whatever",
      "done",
      "Current status (pending/in-progress/complete)"
    ]
    const text = statuses.map((s, i) => `### Task ${i + 1}: t\n- **Status**: ${s}`).join("\n")
    expect(parseTasks(text).tasks.map((t) => t.status)).toEqual([
      "in-progress",
      "in-progress",
      "complete",
      "complete",
      "complete",
      "shelved",
      "shelved",
      "shelved",
      "pending",
      "complete",
      "complete",
      "in-progress",
      "complete",
      "pending"
    ])
  })

  it("counts only `Task <number>` headings: not a legend, a checkpoint or another heading that starts with Task", () => {
    const list = parseTasks([
      "## Wave 1",
      "### Task 1.1: Real",
      "- **Status**: [x] complete",
      "## Checkpoints",
      "### Checkpoint: Review Implementation",
      "- **Status**: [ ] pending",
      "## Task Status Legend",
      "- `[ ] pending` - Not started yet",
      "- `[ ] in-progress` - Currently being worked on",
      "## Task Structure",
      "- **Status**: [ ] pending",
      "### Task A: lettered",
      "### Task 1.2a: not a number"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["1.1", "complete"]])
    expect(currentTask(list)).toBeNull()
  })

  it("ends a task's section at the next heading of its level or above, so a later status line is not its own", () => {
    const list = parseTasks([
      "### Task 1.1: No status of its own",
      "#### Notes",
      "- **Status**: [x] complete",
      "### Checkpoint: Review",
      "- **Status**: [x] complete",
      "### Task 1.2: Two status lines",
      "- **Status**: [-] discarded",
      "- **Status**: [x] complete"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["1.1", "complete"], ["1.2", "complete"]])
    const cut = parseTasks("## Task 1: First\n### Checkpoint: Review\n- **Status**: [x] complete\n## Wave 2\n- **Status**: [x] complete\n")
    expect(cut.tasks.map((t) => [t.id, t.status])).toEqual([["1", "complete"]])
    const ended = parseTasks("### Task 1: First\n## Wave 2\n- **Status**: [x] complete\n### Task 2: Second\n- **Status**: [ ] pending\n")
    expect(ended.tasks.map((t) => [t.id, t.status])).toEqual([["1", "pending"], ["2", "pending"]])
  })

  it("never reads checkboxes, headings or status lines inside fenced code blocks", () => {
    const list = parseTasks([
      "- [x] 1 Real",
      "```markdown",
      "- [ ] 2 Example",
      "### Task 9.9: Example heading",
      "- **Status**: [ ] pending",
      "``` not a closing fence",
      "```",
      "  ~~~~",
      "  - [ ] 3 Example in a tilde fence",
      "  ```",
      "  ~~~",
      "  - [ ] 4 still inside: the closing fence is shorter",
      "  ~~~~~",
      "- [ ] 5 Real again",
      "``` `inline code`, not a fence",
      "- [ ] 6 Real after inline code"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["1", "complete"], ["5", "pending"], ["6", "pending"]])
    const structured = parseTasks("### Task 1: Real\n```\n- **Status**: [x] complete\n```\n- **Status**: [ ] pending\n")
    expect(structured.tasks.map((t) => [t.id, t.status])).toEqual([["1", "pending"]])
  })

  it("reads the checkboxes of a file whose task headings have no status lines: they hold the statuses", () => {
    const list = parseTasks([
      "## Checklist",
      "- [x] Task 1.1: First",
      "- [ ] Task 1.2: Second",
      "### Task 1.1: First",
      "- **Action**: do it",
      "### Task 1.2: Second"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.description, t.status])).toEqual([
      ["1.1", "First", "complete"],
      ["1.2", "Second", "pending"]
    ])
    const headingsOnly = parseTasks("### Task 1.1: First\n- **Action**: do it\n### Task 1.2: Second\n")
    expect(headingsOnly.tasks.map((t) => [t.id, t.status])).toEqual([["1.1", "pending"], ["1.2", "pending"]])
  })
})

// Real task lists from the `withakay/spool` repository (origin and licence in fixtures/tasks/README.md).
// Each row was counted by reading the file: total, complete, in progress, shelved, pending, and the
// current task (`id: description`, or null when every task is complete or shelved).
const corpus: ReadonlyArray<readonly [file: string, total: number, complete: number, inProgress: number, shelved: number, pending: number, current: string | null]> = [
  ["000-05_crate-architecture-refactor", 24, 14, 0, 0, 10, "4.1: Add spool-config and spool-common dependencies to spool-core"],
  ["001-11_tdd-red-green-coverage-guidance", 5, 5, 0, 0, 0, null],
  ["002-09_add-ralph-interactive-mode", 2, 0, 0, 0, 2, "1.1: Implement interactive change picker in CLI"],
  ["003-02_crate-code-quality-audit", 12, 8, 1, 0, 3, "5.1: Simplify and test spool-core"],
  ["003-03_optimize-unit-test-speed", 9, 0, 0, 0, 9, "line 5: Add `process_done: Arc<AtomicBool>` to `monitor_timeout` function signature"],
  ["005-09_homebrew-release", 29, 26, 0, 0, 3, "line 40: Test workflow with a test release"],
  ["005-13_agent-model-manager", 36, 36, 0, 0, 0, null],
  ["008-02_sqlite-validation-for-enhanced-tasks", 8, 7, 0, 1, 0, null],
  ["001-01_flexible-id-parsing", 8, 8, 0, 0, 0, null],
  ["005-07_split-spool-cli-app-rs", 5, 5, 0, 0, 0, null],
  ["005-01_migrate-pnpm-to-bun", 21, 21, 0, 0, 0, null],
  ["002-06_add-agent-preamble-system", 7, 5, 0, 2, 0, null],
  ["006-13_demote-ts-spool-to-spool-bun", 10, 10, 0, 0, 0, null],
  ["adopt-delta-based-changes", 42, 36, 0, 0, 6, "2.1: Update cli-diff spec with requirement-level comparison"],
  ["add-shell-completions", 50, 36, 0, 0, 14, "line 49: Manually test Zsh completion in Oh My Zsh environment (install, test tab completion, uninstall)"],
  ["add-archive-command", 33, 0, 0, 0, 33, "1.1: Create `src/core/archive.ts` with ArchiveCommand class"],
  ["006-06_port-init-update-installers", 7, 7, 0, 0, 0, null],
  ["012-01_add-git-worktree-support", 6, 1, 0, 5, 0, null],
  ["005-08_migrate-cli-to-clap", 21, 18, 0, 3, 0, null],
  ["002-05_clean-up-deprecated-change-commands", 20, 20, 0, 0, 0, null],
  ["003-01_add-qa-testing-area", 0, 0, 0, 0, 0, null]
]

describe("tasks.md, exactly", () => {
  it("ends a task's section at a heading of its own level, whose status line is then not the task's", () => {
    const list = parseTasks("### Task 1.1: Build it\n### Checkpoint: Review\n- **Status**: [x] complete\n")
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["1.1", "pending"]])
  })

  it("takes a task's name after its separator, and keeps separators inside the name", () => {
    const list = parseTasks([
      "### Task 2.1 - Write the docs",
      "- **Status**: [ ] pending",
      "### Task 2.2: Fix the config.json loader",
      "- **Status**: [ ] pending"
    ].join("\n"))
    expect(list.tasks.map((t) => t.description)).toEqual(["Write the docs", "Fix the config.json loader"])
  })

  it("reads checkboxes as the tasks of a file with status lines but no task headings", () => {
    const list = parseTasks("- **Status**: [x] complete\n- [x] 1.1 Done\n- [ ] 1.2 Open\n")
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["1.1", "complete"], ["1.2", "pending"]])
  })

  it("closes a fence only with a run of its own character", () => {
    const list = parseTasks("```\n~~~\n- [ ] 9 Example\n```\n- [ ] 1 Real\n")
    expect(list.tasks.map((t) => t.id)).toEqual(["1"])
  })

  it("keeps a description on one line, each run of line separators one space, and cuts a huge line", () => {
    const list = parseTasks(`- [ ] 1.1 first\u2028\u2028second\r\rthird\n- [ ] 1.2 ${"x".repeat(5000)}\n`)
    expect(list.tasks[0]!.description).toBe("first second third")
    expect(list.tasks[1]!.description.length).toBeLessThan(2000)
  })

  it("stops at 5000 tasks, in either form", () => {
    const boxes = parseTasks(Array.from({ length: 5001 }, (_, i) => `- [ ] ${i + 1} t`).join("\n"))
    expect(boxes.tasks.length).toBe(5000)
    expect(boxes.tasks.at(-1)!.id).toBe("5000")
    const headed = parseTasks(Array.from({ length: 5001 }, (_, i) => `### Task ${i + 1}: t\n- **Status**: [x] complete`).join("\n"))
    expect(headed.tasks.length).toBe(5000)
    expect(headed.tasks.at(-1)!.id).toBe("5000")
  })

  it("tells the agent, in two lines, to check the work once every task is done", () => {
    expect(taskSection(parseTasks("- [x] 1.1 a\n- [-] 1.2 b\n"))).toBe(
      "Progress: 1/2 complete, 1 shelved (from tasks.md; mark tasks there as you finish them).\n" +
        "Every task is complete or shelved: check the work, then finish."
    )
    expect(taskSection(parseTasks(""))).toBeNull()
  })
})

describe("tasks.md, line by line", () => {
  const statuses = (text: string) => parseTasks(text).tasks.map((t) => [t.id, t.status])

  it("reads checkbox lines with extra spaces, and an empty box, bare or escaped", () => {
    expect(statuses("-  [x] 1 Two spaces\n- [] 2 Bare\n- \\[\\] 3 Escaped\n")).toEqual([["1", "complete"], ["2", "pending"], ["3", "pending"]])
  })

  it("numbers a checkbox task only from the start of its text, `Task` prefix and spaces allowed", () => {
    const list = parseTasks("- [ ] Step 2 of 3 things\n- [ ] Task  1.2 Name\n")
    expect(list.tasks.map((t) => [t.id, t.description])).toEqual([["line 1", "Step 2 of 3 things"], ["1.2", "Name"]])
  })

  it("reads task headings with extra spaces, and never a heading quoted inside a line", () => {
    const list = parseTasks("###  Task  1: Spaced\n- **Status**: [x] complete\nSee ### Task 2: quoted\n")
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["1", "complete"]])
  })

  it("keeps to checkboxes when a task heading is only mentioned in a line", () => {
    expect(statuses("Notes: see ### Task 1: setup\n- **Status**: [x] complete\n- [ ] 1.1 Box\n")).toEqual([["1.1", "pending"]])
  })

  it("keeps a name's separators when it has none in front", () => {
    expect(parseTasks("### Task 2.3 Fix the config.json loader\n- **Status**: [ ] pending\n").tasks[0]!.description).toBe("Fix the config.json loader")
  })

  it("ends a section at an empty heading, never at a #hashtag line", () => {
    expect(statuses("### Task 1: A\n##\n- **Status**: [x] complete\n")).toEqual([["1", "pending"]])
    expect(statuses("### Task 1: A\n#notaheading\n- **Status**: [x] complete\n")).toEqual([["1", "complete"]])
  })

  it("reads status lines however they are spaced and bulleted, but not one quoted inside a sentence", () => {
    const task = (status: string) => statuses(`### Task 1: A\n${status}\n`)[0]![1]
    expect(task("  - **Status**: [x] complete")).toBe("complete")
    expect(task("**Status**: [x]")).toBe("complete")
    expect(task("-**Status**: [x]")).toBe("complete")
    expect(task("- **Status** : [x]")).toBe("complete")
    expect(task("- **Status** [x]")).toBe("complete")
    expect(task("- **Status**:  [x]")).toBe("complete")
    expect(task("- **Status**: []")).toBe("pending")
    expect(statuses("### Task 1: A\n- **Status**: [x] complete\n- **Status**: \\[\\]\n")).toEqual([["1", "pending"]])
    expect(task("- **Status**: \\[x\\]")).toBe("complete")
    expect(task("Note that **Status**: [x] means done")).toBe("pending")
  })

  it("reads a status word only where it starts the status, spelled as people spell it", () => {
    const task = (status: string) => statuses(`### Task 1: A\n- **Status**: ${status}\n`)[0]![1]
    expect(task("[x] was pending")).toBe("complete")
    expect(task("[ ] done today")).toBe("complete")
    expect(task("[ ] done-ish")).toBe("pending")
    expect(task("[ ] out of scope")).toBe("shelved")
    expect(task("[ ] out_of_scope")).toBe("shelved")
    expect(task("[ ] canceled")).toBe("shelved")
    expect(task("[ ] cancelled")).toBe("shelved")
  })

  it("opens a fence only at the start of a line, and closes it only with a line of the fence alone", () => {
    expect(statuses("Wrap code in ``` fences.\n- [ ] 1 Real\n")).toEqual([["1", "pending"]])
    expect(statuses("```js\n```not a close\necho ```\n- [ ] 2 Example\n```\n- [ ] 1 Real\n")).toEqual([["1", "pending"]])
  })
})

describe("a corpus of real task lists", () => {
  const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "tasks")

  it("holds every fixture in the table and nothing else", () => {
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".md") && f !== "README.md").map((f) => f.slice(0, -3)).sort()
    expect(files).toEqual(corpus.map(([file]) => file).sort())
  })

  it.each(corpus)("%s: %i tasks, %i complete, %i in progress, %i shelved, %i pending", (file, total, complete, inProgress, shelved, pending, current) => {
    const list = parseTasks(fs.readFileSync(path.join(dir, `${file}.md`), "utf8"))
    const count = (status: string) => list.tasks.filter((t) => t.status === status).length
    expect([list.tasks.length, count("complete"), count("in-progress"), count("shelved"), count("pending")]).toEqual([
      total,
      complete,
      inProgress,
      shelved,
      pending
    ])
    const task = currentTask(list)
    expect(task === null ? null : `${task.id}: ${task.description}`).toBe(current)
  })
})
