import { Effect, Ref } from "effect"
import type { CommitInfo } from "../domain/Domain.js"
import { GitSummary } from "../git/GitSummary.js"
import { PromptBuilder, type PromptInput, type PromptSection } from "../prompt/PromptBuilder.js"
import { type TaskList, taskSection } from "../prompt/Tasks.js"
import { ContextStore } from "../state/ContextStore.js"
import { type JournalEntry, previousErrorsSection } from "../state/JournalEntry.js"
import { checksSection } from "../verify/Verification.js"
import { formatCommits } from "./LoopFormat.js"
import { relativeDirOf, treeOf } from "../state/Workspace.js"
import type { LoopInputs } from "./LoopInputs.js"
import type { LoopRequest } from "./LoopRequest.js"
import type { Finding } from "./Claim.js"

const PREVIOUS_ERRORS = "Previous errors"
const OTHER_DOCUMENTS = "Other documents of the change"
const MAX_DOCUMENTS = 30

/** Names the change's other documents without quoting them: the agent reads what it needs. */
const documentsSection = (paths: ReadonlyArray<string>, where: string) =>
  [
    "Read these as well: a change's design and acceptance criteria (its spec deltas) are in them.",
    ...paths.slice(0, MAX_DOCUMENTS).map((path) => `- ${path}`),
    ...(paths.length > MAX_DOCUMENTS ? [`- and ${paths.length - MAX_DOCUMENTS} more under ${where}/`] : [])
  ].join("\n")

/** What the prompt's sections after the task are made of, read for one iteration. */
export interface SectionSources {
  /** What the loop tells the agent about earlier iterations (a claim set aside, refused or rejected). */
  readonly notes: ReadonlyArray<string>
  /** What reviewers asked to change (`--review`), under their own heading. */
  readonly findings?: ReadonlyArray<Finding>
  /** The `--verify` commands. */
  readonly checks: ReadonlyArray<string>
  readonly tasks: TaskList
  readonly documents: ReadonlyArray<string>
  /** Where the change's documents are (`.spool/changes/<id>`), for a list cut short. */
  readonly documentsDir: string
  readonly journaled: ReadonlyArray<JournalEntry>
  readonly commits: ReadonlyArray<CommitInfo>
}

export const FINDINGS = "Review findings"

/** The reviewers' findings: what each asked to change, the newest last. */
const findingsSection = (findings: ReadonlyArray<Finding>) =>
  findings.map((finding) => `### From ${finding.reviewer} (iteration ${finding.iteration})\n\n${finding.text.trim()}`).join("\n\n")

/** The prompt's sections after the task, in order: notes, review findings, checks, tasks, other documents, previous errors, recent commits. */
export const promptSections = (sources: SectionSources): Array<PromptSection> => {
  const { commits, documents, notes } = sources
  const sections: Array<PromptSection> = []
  if (notes.length > 0) sections.push({ title: "Notes from the loop", body: notes.map((note) => `- ${note}`).join("\n") })
  const findings = sources.findings ?? []
  if (findings.length > 0) sections.push({ title: FINDINGS, body: findingsSection(findings) })
  if (sources.checks.length > 0) sections.push(checksSection(sources.checks))
  const taskBody = taskSection(sources.tasks)
  if (taskBody !== null) sections.push({ title: "Tasks", body: taskBody })
  if (documents.length > 0) {
    sections.push({ title: OTHER_DOCUMENTS, body: documentsSection(documents, sources.documentsDir) })
  }
  const errors = previousErrorsSection(sources.journaled)
  if (errors !== null) sections.push({ title: PREVIOUS_ERRORS, body: errors })
  if (commits.length > 0) sections.push({ title: "Recent commits", body: formatCommits(commits) })
  return sections
}

/**
 * The text an echo is recognised against: the prompt without the agent's own earlier output, which
 * the journal quotes (a claim repeated after a failed agent run is a claim, not an echo). The
 * builder that rendered the prompt renders it, so that it reads as the prompt the agent was sent.
 */
export const echoReferenceOf = (builder: PromptBuilder["Type"], input: PromptInput, prompt: string) => {
  const { sections } = input
  return sections.some((s) => s.title === PREVIOUS_ERRORS)
    ? builder.build({ ...input, sections: sections.filter((s) => s.title !== PREVIOUS_ERRORS) })
    : prompt
}

/** One iteration's prompt, what an echo of it is recognised against, and the tasks it was built from. */
export interface IterationPrompt {
  readonly prompt: string
  readonly echoReference: string
  readonly tasks: TaskList
}

/** What a prompt is read from: the run's request, the change's documents, the journal entries it shows. */
export interface PromptSources {
  readonly input: LoopRequest
  readonly inputs: LoopInputs
  readonly journaled: Ref.Ref<ReadonlyArray<JournalEntry>>
}

/** Reads what this iteration's prompt is made of and builds it. */
export const buildIterationPrompt = (ctx: PromptSources, iteration: number, notes: ReadonlyArray<string>, findings: ReadonlyArray<Finding> = []) =>
  Effect.gen(function*() {
    const contexts = yield* ContextStore
    const git = yield* GitSummary
    const builder = yield* PromptBuilder
    const { change, options } = ctx.input
    const { inputs } = ctx
    // Reloaded every iteration, so context added from another terminal shows up at the next one.
    const context = yield* contexts.load(change.id)
    const proposal = yield* inputs.readDocument(change.proposalPath)
    const module = change.modulePath === null ? null : yield* inputs.readDocument(change.modulePath)
    const quoted = yield* inputs.readQuoted
    const tasks = yield* inputs.readTasks
    const documents = yield* inputs.otherDocuments
    const journaled = yield* Ref.get(ctx.journaled)
    const commits = options.historyCount > 0 && git.repository
      ? yield* inputs.gitOrWarn(git.recentCommits({ count: options.historyCount, includeMerges: options.includeMerges }), [])
      : []
    const input: PromptInput = {
      iteration,
      minIterations: options.minIterations,
      maxIterations: options.maxIterations,
      completionPromise: options.completionPromise,
      context,
      changeId: change.id,
      moduleId: change.moduleId,
      userPrompt: ctx.input.userPrompt,
      proposal,
      module,
      documents: quoted,
      treeRules: treeOf(change).commands.map((rule) => rule.split("{id}").join(change.id)),
      sections: promptSections({ notes, findings, checks: options.verify, tasks, documents, documentsDir: relativeDirOf(change), journaled, commits })
    }
    const prompt = builder.build(input)
    return { prompt, echoReference: echoReferenceOf(builder, input, prompt), tasks } satisfies IterationPrompt
  })
