import { describe, expect, it } from "@effect/vitest"
import { CONTEXT_HEADING, type PromptInput, renderPrompt, TASK_HEADING } from "../src/PromptBuilder.js"
import { judgeCompletion } from "../src/CompletionJudge.js"

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
