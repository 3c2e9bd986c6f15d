import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CONTEXT_HEADING, PromptBuilder, type PromptInput, renderPrompt, TASK_HEADING } from "../src/prompt/PromptBuilder.js"
import { judgeCompletion } from "../src/completion/CompletionJudge.js"

const input = (overrides: Partial<PromptInput> = {}): PromptInput => ({
  iteration: 3,
  minIterations: 1,
  maxIterations: 20,
  completionPromise: "COMPLETE",
  context: "",
  changeId: "002-01_add-ralph-loop",
  moduleId: "002",
  userPrompt: "Implement the loop.",
  proposal: "# Proposal\nAdd the loop.",
  module: "# Module 002\nThe ralph module.",
  sections: [],
  ...overrides
})

describe("iteration prompt", () => {
  it("names the current iteration in the preamble and gives autonomy rules", () => {
    const prompt = renderPrompt(input())
    expect(prompt).toContain("iteration 3 of at most 20")
    expect(prompt).toMatch(/without asking questions/)
    expect(prompt).toMatch(/verify with the project's tests/)
    expect(prompt).toMatch(/Only claim completion when it is true/)
    expect(prompt).toContain("<promise>COMPLETE</promise>")
  })

  it("places a non-empty context section before the task, followed by a separator line", () => {
    const prompt = renderPrompt(input({ context: "Use the staging database." }))
    const context = prompt.indexOf(CONTEXT_HEADING)
    const task = prompt.indexOf(TASK_HEADING)
    expect(context).toBeGreaterThan(0)
    expect(task).toBeGreaterThan(context)
    const between = prompt.slice(context, task).trimEnd().split("\n")
    expect(between[0]).toBe(CONTEXT_HEADING)
    expect(between).toContain("Use the staging database.")
    expect(between[between.length - 1]).toBe("---")
  })

  it("leaves out the context section entirely when the context is empty or blank", () => {
    expect(renderPrompt(input({ context: "" }))).not.toContain("## Additional Context")
    expect(renderPrompt(input({ context: " \n\t\n" }))).not.toContain("## Additional Context")
  })

  it("puts the user prompt, then the proposal, then the module in the task section", () => {
    const prompt = renderPrompt(input())
    const task = prompt.indexOf(TASK_HEADING)
    const user = prompt.indexOf("Implement the loop.")
    const proposal = prompt.indexOf("# Proposal")
    const module = prompt.indexOf("# Module 002")
    expect(task).toBeLessThan(user)
    expect(user).toBeLessThan(proposal)
    expect(proposal).toBeLessThan(module)
  })

  it("has no module section when the change has no module", () => {
    expect(renderPrompt(input({ module: null }))).not.toContain("### Module")
  })

  it("appends further sections after the task, skipping empty ones", () => {
    const prompt = renderPrompt(input({ sections: [{ title: "Recent commits", body: "- abc fix" }, { title: "Empty", body: " " }] }))
    expect(prompt.indexOf("## Recent commits")).toBeGreaterThan(prompt.indexOf(TASK_HEADING))
    expect(prompt).not.toContain("## Empty")
  })

  it("never completes the loop when the agent echoes the prompt, whole or any two consecutive lines of it", () => {
    for (const prompt of [renderPrompt(input()), renderPrompt(input({ minIterations: 3, context: "ctx" }))]) {
      const options = { token: "COMPLETE", prompt }
      const whole = judgeCompletion(prompt, options)
      expect(whole.claimed).toBe(false)
      expect(whole.verdicts.map((v) => v.reason)).toEqual(["echo of the prompt"])
      const lines = prompt.split("\n").filter((line) => line.trim() !== "")
      for (let i = 0; i + 1 < lines.length; i++) {
        expect(judgeCompletion(`${lines[i]}\n${lines[i + 1]}\n`, options).claimed).toBe(false)
      }
      // Alone, the rule's own line is a deferred mention, not a claim.
      const rule = lines.find((line) => line.includes("<promise>"))!
      expect(judgeCompletion(rule, options).verdicts[0]?.reason).toMatch(/^deferred: "When, and only when/)
    }
  })
})

describe("exact iteration prompt", () => {
  const preamble = (iteration: number, max: number, changeId: string, minimum: string, token: string) => [
    `# Ralph loop: iteration ${iteration} of at most ${max}`,
    "",
    `You are working autonomously in an iterative development loop on change \`${changeId}\`.`,
    "The same task is given to you again every iteration. Your earlier work is in the repository and its git history:",
    `read it first, continue from where it stands, and do not redo finished work.${minimum}`,
    "",
    "Rules:",
    "- Work without asking questions: nobody will answer. Make reasonable decisions and note them in your changes.",
    "- Make real progress this iteration: implement, then verify with the project's tests and checks, and fix what fails.",
    "- Keep the change's task list up to date as you finish tasks.",
    "- Only claim completion when it is true: every requirement is implemented and the tests pass.",
    `- When, and only when, the task is completely done, print the completion promise on a line of its own: <promise>${token}</promise>`,
    "- If it is not done, do not print the promise; end the iteration by saying what remains."
  ].join("\n")

  it("renders every part, trimmed, in order: preamble, context, task with proposal and module, further sections", () => {
    const prompt = renderPrompt(input({
      iteration: 4,
      minIterations: 2,
      maxIterations: 9,
      completionPromise: "ALL DONE",
      context: "\n  Use the staging database.  \n",
      changeId: "007-02_fix-login",
      moduleId: "007",
      userPrompt: "  Fix the login.\n\n",
      proposal: "\n# Proposal\nFix it.\n  ",
      module: "\n\n# Module 007\nAuth.\n\n",
      sections: [
        { title: "Tasks", body: "\n- [ ] 1.1 Do it\n" },
        { title: "Blank", body: " \n\t" },
        { title: "Recent commits", body: "  - abc fix  " }
      ]
    }))
    expect(prompt).toBe([
      preamble(4, 9, "007-02_fix-login", " The loop runs at least 2 iterations, so keep improving and verifying even after the work looks finished.", "ALL DONE"),
      "",
      "## Additional Context (added by user mid-loop)",
      "",
      "Use the staging database.",
      "",
      "---",
      "",
      "## Your Task",
      "",
      "Fix the login.",
      "",
      "### Change proposal (`007-02_fix-login`)",
      "",
      "# Proposal\nFix it.",
      "",
      "### Module (`007`)",
      "",
      "# Module 007\nAuth.",
      "",
      "## Tasks",
      "",
      "- [ ] 1.1 Do it",
      "",
      "## Recent commits",
      "",
      "- abc fix",
      ""
    ].join("\n"))
  })

  it("renders the task alone after the preamble when there is no context, module or further section", () => {
    const prompt = renderPrompt(input({ iteration: 1, maxIterations: 5, moduleId: null, module: null, context: "  \n" }))
    expect(prompt).toBe([
      preamble(1, 5, "002-01_add-ralph-loop", "", "COMPLETE"),
      "",
      "## Your Task",
      "",
      "Implement the loop.",
      "",
      "### Change proposal (`002-01_add-ralph-loop`)",
      "",
      "# Proposal\nAdd the loop.",
      ""
    ].join("\n"))
  })

  it("names the module section without an id when the module has none", () => {
    const prompt = renderPrompt(input({ moduleId: null, module: "Module text" }))
    expect(prompt.endsWith("\n\n### Module\n\nModule text\n")).toBe(true)
  })

  it("leaves out a module section whose text is blank", () => {
    const prompt = renderPrompt(input({ module: " \n\t" }))
    expect(prompt).not.toContain("### Module")
    expect(prompt.endsWith("# Proposal\nAdd the loop.\n")).toBe(true)
  })

  it("quotes the tree's documents after the proposal and module, trimmed, leaving out a blank one", () => {
    const prompt = renderPrompt(input({
      moduleId: null,
      module: null,
      documents: [{ title: "Plan", body: "\n# Plan\nUse Effect.\n\n" }, { title: "Research", body: " \n\t" }]
    }))
    expect(prompt.endsWith("# Proposal\nAdd the loop.\n\n### Plan\n\n# Plan\nUse Effect.\n")).toBe(true)
    expect(prompt).not.toContain("### Research")
  })

  it("ends the rules with the tree's own, one line each", () => {
    const rules = (treeRules?: ReadonlyArray<string>) => {
      const lines = renderPrompt(input(treeRules === undefined ? {} : { treeRules })).split("\n")
      const last = lines.findIndex((line) => line.startsWith("- If it is not done"))
      return lines.slice(last + 1, lines.indexOf("## Your Task"))
    }
    expect(rules()).toEqual([""])
    expect(rules(["Run `openspec validate c`.", "Do not archive the change."])).toEqual([
      "- Run `openspec validate c`.",
      "- Do not archive the change.",
      ""
    ])
  })

  it("asks to keep improving only when the loop has a minimum of more than one iteration", () => {
    const minimumLine = (minIterations: number) =>
      renderPrompt(input({ minIterations })).split("\n").find((line) => line.startsWith("read it first"))
    expect(minimumLine(0)).toBe("read it first, continue from where it stands, and do not redo finished work.")
    expect(minimumLine(1)).toBe("read it first, continue from where it stands, and do not redo finished work.")
    expect(minimumLine(2)).toBe(
      "read it first, continue from where it stands, and do not redo finished work. The loop runs at least 2 iterations, so keep improving and verifying even after the work looks finished."
    )
  })

  it.effect("the test builder records each input and renders it as the real builder does", () =>
    Effect.gen(function*() {
      const inputs: Array<PromptInput> = []
      const first = input({ iteration: 1 })
      const second = input({ iteration: 2, context: "ctx" })
      const built = yield* Effect.gen(function*() {
        const builder = yield* PromptBuilder
        return [builder.build(first), builder.build(second)]
      }).pipe(Effect.provide(PromptBuilder.layerTest(inputs)))
      expect(built).toEqual([renderPrompt(first), renderPrompt(second)])
      expect(inputs).toEqual([first, second])
      const real = yield* Effect.map(PromptBuilder, (builder) => builder.build(second)).pipe(Effect.provide(PromptBuilder.layer))
      expect(real).toBe(renderPrompt(second))
    }))
})
