import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { currentTask, formatProgress, taskSection } from "../src/prompt/Tasks.js"
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
      "Some prose - [ ] 3.1 not at the start"
    ].join("\n"))
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([["9.9", "pending"], ["line 8", "pending"]])
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
      "- [ ] An item without an id",
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
      ["line 11", "pending", false, null, "Phase 3: User Story 1 - Sign in (Priority: P1) 🎯 MVP"],
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

  it("reads spec-kit's own template: 34 tasks in six phases, none in its example code block", () => {
    const list = parseSpecKitTasks(read(here, "fixtures", "spec-kit", "tasks-template.md"))
    expect(list.tasks.length).toBe(34)
    expect([...new Set(list.tasks.map((t) => t.phase))]).toEqual([
      "Phase 1: Setup (Shared Infrastructure)",
      "Phase 2: Foundational (Blocking Prerequisites)",
      "Phase 3: User Story 1 - [Title] (Priority: P1) 🎯 MVP",
      "Phase 4: User Story 2 - [Title] (Priority: P2)",
      "Phase 5: User Story 3 - [Title] (Priority: P3)",
      "Phase N: Polish & Cross-Cutting Concerns"
    ])
    expect(list.tasks.filter((t) => t.story === "US1").map((t) => t.id)).toEqual(["T010", "T011", "T012", "T013", "T014", "T015", "T016", "T017"])
    expect(list.tasks.find((t) => t.id === "T005")).toMatchObject({ parallel: true, description: "Implement authentication/authorization framework" })
    expect(currentTask(list)?.id).toBe("T001")
  })

  it("reads a real feature's tasks as spec-kit counts them (every - [ ], - [x] and - [X] line)", () => {
    const text = read(trees, "speckit", "10XDEVCLUB+overengineering-tictactoe-speckit", "repo", "specs", "013-configurable-chain-length", "tasks.md")
    const list = parseSpecKitTasks(text)
    expect(list.tasks.length).toBe(text.split("\n").filter((line) => /^- \[[ xX]\] /.test(line)).length)
    expect(list.tasks.length).toBe(29)
    expect(formatProgress(list)).toBe("0/29 complete")
    expect(list.tasks.map((t) => t.id)).toEqual(Array.from({ length: 29 }, (_, i) => `T${String(i + 1).padStart(3, "0")}`))
    expect(list.tasks.find((t) => t.id === "T016")).toMatchObject({ parallel: true, story: "US3" })
  })
})

describe("each tree's tasks read by its format", () => {
  it("reads spool's and ito's forms with spool's reader, OpenSpec's and spec-kit's with theirs", () => {
    const text = "### Task 1.1: A\n- **Status**: [x] complete\n- [ ] 1.2 B\n- [-] 1.3 C\n"
    expect(readTaskList("spool", text).tasks.map((t) => t.id)).toEqual(["1.1"])
    expect(readTaskList("openspec", text).tasks.map((t) => [t.id, t.status])).toEqual([["1.2", "pending"], ["1.3", "pending"]])
    expect(readTaskList("speckit", text).tasks.map((t) => t.id)).toEqual(["line 3"])
  })

  it("reads ito's own changes in either of its forms", () => {
    const ito = (change: string) => readTaskList("spool", read(trees, "ito", "withakay+ito", "repo", ".ito", "changes", change, "tasks.md"))
    const count = (list: ReturnType<typeof ito>) => [list.tasks.length, done(list)]
    expect(count(ito("030-05_managed-file-ownership"))).toEqual([5, 0])
    expect(count(ito("025-12_narrow-coordination-branch"))).toEqual([1, 1])
    expect(count(ito("016-18_add-archived-list-filter"))).toEqual([5, 5])
  })
})
