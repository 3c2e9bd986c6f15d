import { Context, Layer } from "effect"

export interface PromptSection {
  readonly title: string
  readonly body: string
}

/** Everything one iteration's prompt is made of. */
export interface PromptInput {
  readonly iteration: number
  readonly minIterations: number
  readonly maxIterations: number
  readonly completionPromise: string
  /** The per-change context file, reloaded this iteration; empty means no context section. */
  readonly context: string
  readonly changeId: string
  readonly moduleId: string | null
  readonly userPrompt: string
  readonly proposal: string
  readonly module: string | null
  /** Further documents of the change quoted whole after the module (spec-kit's plan), in order. */
  readonly documents?: ReadonlyArray<PromptSection>
  /** What the preamble says of the change's tree and its own tools (`openspec validate <id>` checks it). */
  readonly treeRules?: ReadonlyArray<string>
  /** Further sections after the task (tasks progress, previous errors, recent commits), in order. */
  readonly sections: ReadonlyArray<PromptSection>
}

export const CONTEXT_HEADING = "## Additional Context (added by user mid-loop)"
export const TASK_HEADING = "## Your Task"

const preamble = (input: PromptInput) => {
  const minimum = input.minIterations > 1
    ? ` The loop runs at least ${input.minIterations} iterations, so keep improving and verifying even after the work looks finished.`
    : ""
  return [
    `# Ralph loop: iteration ${input.iteration} of at most ${input.maxIterations}`,
    "",
    `You are working autonomously in an iterative development loop on change \`${input.changeId}\`.`,
    "The same task is given to you again every iteration. Your earlier work is in the repository and its git history:",
    `read it first, continue from where it stands, and do not redo finished work.${minimum}`,
    "",
    "Rules:",
    "- Work without asking questions: nobody will answer. Make reasonable decisions and note them in your changes.",
    "- Make real progress this iteration: implement, then verify with the project's tests and checks, and fix what fails.",
    "- Keep the change's task list up to date as you finish tasks.",
    "- Only claim completion when it is true: every requirement is implemented and the tests pass.",
    `- When, and only when, the task is completely done, print the completion promise on a line of its own: <promise>${input.completionPromise}</promise>`,
    "- If it is not done, do not print the promise; end the iteration by saying what remains.",
    ...(input.treeRules ?? []).map((rule) => `- ${rule}`)
  ].join("\n")
}

/** Builds an iteration prompt: preamble, user context (when any), the task, then further sections. */
export const renderPrompt = (input: PromptInput): string => {
  const parts: Array<string> = [preamble(input)]
  if (input.context.trim() !== "") {
    parts.push(`${CONTEXT_HEADING}\n\n${input.context.trim()}\n\n---`)
  }
  const task = [TASK_HEADING, "", input.userPrompt.trim()]
  task.push("", `### Change proposal (\`${input.changeId}\`)`, "", input.proposal.trim())
  if (input.module !== null && input.module.trim() !== "") {
    task.push("", `### Module${input.moduleId === null ? "" : ` (\`${input.moduleId}\`)`}`, "", input.module.trim())
  }
  for (const document of input.documents ?? []) {
    if (document.body.trim() !== "") task.push("", `### ${document.title}`, "", document.body.trim())
  }
  parts.push(task.join("\n"))
  for (const section of input.sections) {
    if (section.body.trim() !== "") parts.push(`## ${section.title}\n\n${section.body.trim()}`)
  }
  return `${parts.join("\n\n")}\n`
}

// Stryker disable next-line StringLiteral: the key only tells the service apart in a context, and no other service has an empty one
export class PromptBuilder extends Context.Tag("@spool/core/PromptBuilder")<PromptBuilder, {
  readonly build: (input: PromptInput) => string
}>() {
  static readonly layer = Layer.succeed(PromptBuilder, { build: renderPrompt })

  /** Records every input it is given (newest last) and renders as the real builder does. */
  static readonly layerTest = (inputs: Array<PromptInput>) =>
    Layer.succeed(PromptBuilder, {
      build: (input) => {
        inputs.push(input)
        return renderPrompt(input)
      }
    })
}
