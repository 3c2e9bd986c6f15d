import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { currentTask, formatProgress, openTaskCount, taskSection } from "../src/prompt/Tasks.js"
import { parseOpenSpecTasks } from "../src/tree/OpenSpecTasks.js"
import { parseSpecKitTasks } from "../src/tree/SpecKitTasks.js"
import { readTaskList } from "../src/tree/TreeTasks.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const trees = path.join(here, "..", "..", "cli", "test", "fixtures", "trees")
const read = (...parts: Array<string>) => fs.readFileSync(path.join(...parts), "utf8")
const done = (list: { readonly tasks: ReadonlyArray<{ readonly status: string }> }) => list.tasks.filter((t) => t.status === "complete").length

describe("OpenSpec's tasks.md, counted as openspec counts it", () => {
  it("takes every list marker openspec takes, indented or not, and only x or X as done", () => {
    const list = parseOpenSpecTasks([
      "## 1. Setup",
      "- [x] 1.1 Done",
      "- [X] 1.2 Also done",
      "* [ ] 1.3 Star",
      "+ [ ] 1.4 Plus",
      "1. [ ] Ordered with a dot",
      "2) [x] Ordered with a parenthesis",
      "  - [ ] 1.5 Nested sub-task",
      "- [~] 1.6 Marked in progress: not done for openspec",
      "- [-] 1.7 Marked shelved: not done for openspec either",
      "- [] 1.8 An empty box",
      "- [ x ] 1.9 A padded x",
      "-[ ] 2.1 No space after the dash",
      "- [x]done without a space"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([
      ["1.1", "complete"],
      ["1.2", "complete"],
      ["1.3", "pending"],
      ["1.4", "pending"],
      ["line 6", "pending"],
      ["line 7", "complete"],
      ["1.5", "pending"],
      ["1.6", "in-progress"],
      ["1.7", "pending"],
      ["1.8", "pending"],
      ["1.9", "complete"],
      ["2.1", "pending"],
      ["line 14", "complete"]
    ])
    expect(list.tasks.map((t) => t.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    expect(list.tasks[0]!.description).toBe("Done")
    expect(list.tasks[12]!.description).toBe("done without a space")
  })

  it("leaves out links and longer brackets, and counts a box inside a code block, as openspec does", () => {
    const list = parseOpenSpecTasks([
      "- [A](https://example.com) a link bullet",
      "- [1][ref] a reference link",
      "- [WIP] a bracket word",
      "- not a task",
      "```md",
      "- [ ] 9.9 an example in a fence still counts for openspec",
      "```",
      "- [ ](./file) an empty box before a link still counts",
      "- [  ](./file) and so does a box of two spaces",
      "Some prose - [ ] 3.1 not at the start"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["9.9", "pending"], ["line 8", "pending"], ["line 9", "pending"]])
  })

  it("reads a CRLF file, and a missing one as no tasks", () => {
    expect(parseOpenSpecTasks("- [x] 1.1 a\r\n- [ ] 1.2 b\r\n").tasks.map((t) => [t.id, t.description, t.status])).toEqual([
      ["1.1", "a", "complete"],
      ["1.2", "b", "pending"]
    ])
    expect(parseOpenSpecTasks(null).tasks).toEqual([])
  })

  it.each([
    ["fix-schemas-root-selection", 14, 13],
    ["add-change-stacking-awareness", 22, 0],
    ["graceful-status-no-changes", 8, 8]
  ])("reads OpenSpec's own change %s as openspec list does (%i tasks, %i done)", (change, total, complete) => {
    const list = parseOpenSpecTasks(read(trees, "openspec", "Fission-AI+OpenSpec", "repo", "openspec", "changes", change, "tasks.md"))
    expect([list.tasks.length, done(list)]).toEqual([total, complete])
  })
})

describe("spec-kit's tasks.md: ids, parallel markers, stories and phases", () => {
  it("reads a task line's id, [P] and story, and the phase heading it sits under", () => {
    const list = parseSpecKitTasks([
      "# Tasks: Chat",
      "## Format: `[ID] [P?] [Story] Description`",
      "- **[P]**: Can run in parallel",
      "## Phase 1: Setup",
      "- [x] T001 Create project structure",
      "- [X] T002 [P] Configure linting",
      "## Phase 3: User Story 1 - Sign in (Priority: P1) 🎯 MVP",
      "### Tests for User Story 1",
      "- [ ] T010 [P] [US1] Contract test in tests/contract/test_auth.py",
      "- [ ] T011 [US1] Implement the service",
      "- [ ] An item without an id: no task",
      "## Dependencies & Execution Order",
      "- [ ] T099 after the phases: no phase",
      "```bash",
      "- [ ] T100 an example, never a task",
      "```",
      "- [~] T101 a box spec-kit does not write"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status, t.parallel ?? false, t.story ?? null, t.phase ?? null])).toEqual([
      ["T001", "complete", false, null, "Phase 1: Setup"],
      ["T002", "complete", true, null, "Phase 1: Setup"],
      ["T010", "pending", true, "US1", "Phase 3: User Story 1 - Sign in (Priority: P1) 🎯 MVP"],
      ["T011", "pending", false, "US1", "Phase 3: User Story 1 - Sign in (Priority: P1) 🎯 MVP"],
      ["T099", "pending", false, null, null]
    ])
    expect(list.tasks[2]!.description).toBe("Contract test in tests/contract/test_auth.py")
  })

  it("puts the current task's phase, its id and markers into the prompt's progress", () => {
    const list = parseSpecKitTasks([
      "## Phase 1: Setup",
      "- [X] T001 Create project structure",
      "## Phase 2: Foundational",
      "- [X] T002 Schema",
      "- [ ] T003 [P] [US2] Routing",
      "- [ ] T004 Errors"
    ].join("\n"))
    expect(taskSection(list)).toBe([
      "Progress: 2/4 complete (from tasks.md; mark tasks there as you finish them).",
      "Phase: Phase 2: Foundational: 1/3 complete",
      "Current task: T003 [P] [US2]: Routing"
    ].join("\n"))
  })

  it("reads spec-kit's own template: 28 tasks in five phases, none in its example code block nor its TXXX placeholders", () => {
    const list = parseSpecKitTasks(read(here, "fixtures", "spec-kit", "tasks-template.md"))
    expect(list.tasks.length).toBe(28)
    expect([...new Set(list.tasks.map((t) => t.phase))]).toEqual([
      "Phase 1: Setup (Shared Infrastructure)",
      "Phase 2: Foundational (Blocking Prerequisites)",
      "Phase 3: User Story 1 - [Title] (Priority: P1) 🎯 MVP",
      "Phase 4: User Story 2 - [Title] (Priority: P2)",
      "Phase 5: User Story 3 - [Title] (Priority: P3)"
    ])
    expect(list.tasks.filter((t) => t.story === "US1").map((t) => t.id)).toEqual(["T010", "T011", "T012", "T013", "T014", "T015", "T016", "T017"])
    expect(list.tasks.find((t) => t.id === "T005")).toMatchObject({ parallel: true, description: "Implement authentication/authorization framework" })
    expect(currentTask(list)?.id).toBe("T001")
  })

  it("reads a real feature's tasks as spec-kit writes them (every - [ ], - [x] and - [X] line, each with its id)", () => {
    const text = read(trees, "speckit", "10XDEVCLUB+overengineering-tictactoe-speckit", "repo", "specs", "013-configurable-chain-length", "tasks.md")
    const list = parseSpecKitTasks(text)
    expect(list.tasks.length).toBe(text.split("\n").filter((line) => /^- \[[ xX]\] /.test(line)).length)
    expect(list.tasks.length).toBe(29)
    expect(formatProgress(list)).toBe("0/29 complete")
    expect(list.tasks.map((t) => t.id)).toEqual(Array.from({ length: 29 }, (_, i) => `T${String(i + 1).padStart(3, "0")}`))
    expect(list.tasks.find((t) => t.id === "T016")).toMatchObject({ parallel: true, story: "US3" })
  })

  it("leaves out the older template's Validation Checklist: 23 tasks of its 29 checkboxes", () => {
    const text = read(here, "fixtures", "spec-kit", "older-tasks-template.md")
    const list = parseSpecKitTasks(text)
    expect(text.split("\n").filter((line) => /^- \[ \] /.test(line)).length).toBe(29)
    expect(list.tasks.map((t) => t.id)).toEqual(Array.from({ length: 23 }, (_, i) => `T${String(i + 1).padStart(3, "0")}`))
    expect(list.tasks.some((t) => t.description.includes("All contracts have corresponding tests"))).toBe(false)
  })

  it("counts a feature made with the older template done once its 32 tasks are, its Validation Checklist unticked", () => {
    const list = parseSpecKitTasks(read(here, "fixtures", "spec-kit", "done-feature-tasks.md"))
    expect(formatProgress(list)).toBe("32/32 complete")
    expect(openTaskCount(list)).toBe(0)
    expect(currentTask(list)).toBeNull()
  })
})

describe("spec-kit's task lines, at their edges", () => {
  const read = (lines: ReadonlyArray<string>) => parseSpecKitTasks(lines.join("\n")).tasks
  const brief = (lines: ReadonlyArray<string>) =>
    read(lines).map((t) => [t.id, t.description, t.phase ?? null, t.parallel === true, t.story ?? null, t.line])

  it("takes a task line only from its start, its id and markers only where spec-kit writes them", () => {
    expect(brief([
      "see - [ ] T001 a box further in is no task",
      "x- [ ] T002 nor one glued to a word",
      "-  [ ] T003 Two spaces after the dash",
      "- [ ] Update T12 handling (an id only at the start: no task)",
      "- [ ] T004  [P] Two spaces before the marker",
      "- [ ] T005 Handle [P] and [US1] in the text",
      "- [ ] T006 [US12] A story of two digits",
      "- [ ] T007 [P][US3] Markers without a space"
    ])).toEqual([
      ["T003", "Two spaces after the dash", null, false, null, 3],
      ["T004", "Two spaces before the marker", null, true, null, 5],
      ["T005", "Handle [P] and [US1] in the text", null, false, null, 6],
      ["T006", "A story of two digits", null, false, "US12", 7],
      ["T007", "Markers without a space", null, true, "US3", 8]
    ])
  })

  it("takes a checkbox for a task only when it starts with an id: T and digits, a word of its own", () => {
    expect(brief([
      "- [ ] T1 One digit",
      "- [ ] T0042 Four digits",
      "- [X] T003",
      "- [ ] T004: After a colon",
      "- [ ] T12a a letter after the digits",
      "- [ ] T a T alone",
      "- [ ] TX1 a letter before the digits",
      "- [ ] t005 a lower-case t",
      "- [ ] [T006] an id in brackets",
      "- [ ] All contracts have corresponding tests",
      "- [x] Each task specifies exact file path",
      "- [ ]",
      "- [ ] 1.1 a numbered item"
    ])).toEqual([
      ["T1", "One digit", null, false, null, 1],
      ["T0042", "Four digits", null, false, null, 2],
      ["T003", "", null, false, null, 3],
      ["T004", ": After a colon", null, false, null, 4]
    ])
  })

  it("takes a phase from a heading that starts with Phase, its closing hashes left out, until a heading as high ends it", () => {
    expect(brief([
      "# Tasks: Feature",
      "## Phase 1: Setup ##",
      "- [ ] T001 One",
      "- [ ] T002 handle ## Phase 9 in the text",
      "### Details",
      "- [ ] T003 Still in phase 1",
      "## Checkpoint after Phase 1",
      "- [ ] T004 No phase",
      "## Phase 2: Port to C#   ",
      "- [ ] T005 Two",
      "## Phase 3: Issue #12",
      "- [ ] T006 Three",
      "## Phase 4: Fix #12 and more",
      "- [ ] T007 Four",
      "# Appendix",
      "- [ ] T008 After a first-level heading",
      "## Phase 5: Five",
      "- [ ] T009 split\u2028\u2029here, one line"
    ]).map(([id, description, phase]) => [id, phase, ...(id === "T009" ? [description] : [])])).toEqual([
      ["T001", "Phase 1: Setup"],
      ["T002", "Phase 1: Setup"],
      ["T003", "Phase 1: Setup"],
      ["T004", null],
      ["T005", "Phase 2: Port to C#"],
      ["T006", "Phase 3: Issue #12"],
      ["T007", "Phase 4: Fix #12 and more"],
      ["T008", null],
      ["T009", "Phase 5: Five", "split here, one line"]
    ])
  })

  it("skips fenced blocks: a fence closes only with its own kind, as long or longer, alone on its line", () => {
    expect(read([
      "````md",
      "- [ ] T001 inside",
      "```",
      "~~~",
      "````js",
      "x ````",
      "- [ ] T002 still inside",
      "  ````  ",
      "- [ ] T003 after the first fence",
      "~/.config is a path, not a fence",
      "- [ ] T004 see ```code``` inline",
      "- [ ] T005 after an inline code span",
      "```not`a fence",
      "- [ ] T006 after a line that is no fence",
      "~~~",
      "- [ ] T007 in a tilde fence",
      "~~~~",
      "- [ ] T008 after it"
    ]).map((t) => t.id)).toEqual(["T003", "T004", "T005", "T006", "T008"])
    expect(read(["```", "~~~", "- [ ] T001 inside a backtick fence", "```", "- [ ] T002 after it"]).map((t) => t.id)).toEqual(["T002"])
  })
})

describe("OpenSpec's task lines, at their edges", () => {
  it("numbers as openspec does: a leading number, dotted or not, with its punctuation", () => {
    const list = parseOpenSpecTasks([
      "10. [ ] Ten, an ordered item of two digits",
      "- [ ] Fix 2 bugs",
      "- [ ] 12 Twelve",
      "- [ ] 3 Three",
      "- [ ] 1.12 Sub-task twelve",
      "- [ ] 1. Setup",
      "- [>] 4.1 Started",
      "- [/] 4.2 Half done",
      "- [ ] Trailing spaces   ",
      "- [ ] 5.1   Spaces after the number"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.description, t.status])).toEqual([
      ["line 1", "Ten, an ordered item of two digits", "pending"],
      ["line 2", "Fix 2 bugs", "pending"],
      ["12", "Twelve", "pending"],
      ["3", "Three", "pending"],
      ["1.12", "Sub-task twelve", "pending"],
      ["1", "Setup", "pending"],
      ["4.1", "Started", "in-progress"],
      ["4.2", "Half done", "in-progress"],
      ["line 9", "Trailing spaces", "pending"],
      ["5.1", "Spaces after the number", "pending"]
    ])
  })
})

describe("each tree's tasks read by its format", () => {
  it("reads spool's and ito's forms with spool's reader, OpenSpec's and spec-kit's with theirs", () => {
    const text = "### Task 1.1: A\n- **Status**: [x] complete\n- [ ] 1.2 B\n- [-] 1.3 C\n"
    expect(readTaskList("spool", text).tasks.map((t) => t.id)).toEqual(["1.1"])
    expect(readTaskList("openspec", text).tasks.map((t) => [t.id, t.status])).toEqual([["1.2", "pending"], ["1.3", "pending"]])
    expect(readTaskList("speckit", text).tasks.map((t) => t.id)).toEqual([])
    expect(readTaskList("speckit", "- [ ] T001 A\n").tasks.map((t) => t.id)).toEqual(["T001"])
  })

  it("reads ito's own changes in either of its forms", () => {
    const ito = (change: string) => readTaskList("spool", read(trees, "ito", "withakay+ito", "repo", ".ito", "changes", change, "tasks.md"))
    const count = (list: ReturnType<typeof ito>) => [list.tasks.length, done(list)]
    expect(count(ito("030-05_managed-file-ownership"))).toEqual([5, 0])
    expect(count(ito("025-12_narrow-coordination-branch"))).toEqual([1, 1])
    expect(count(ito("016-18_add-archived-list-filter"))).toEqual([5, 5])
  })
})
