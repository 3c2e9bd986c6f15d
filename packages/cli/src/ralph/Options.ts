import { Args, type Command } from "@effect/cli"
import { Option } from "effect"
import { harnessNames } from "@spool/app"
import { effectOptions } from "../EffectOptions.js"
import { switchOption, valueOption } from "../OptionSpec.js"
import { runningOptionSpecs } from "./RunningOptions.js"
import { statusOptionSpecs } from "./StatusOptions.js"

/**
 * The options of `spool ralph`: parsing, the help, the checks of the command line and README's
 * option table all follow from this table. A new option is one entry here, then used in the run.
 */
export const ralphOptionSpecs = {
  changes: statusOptionSpecs.changes,
  module: valueOption({
    name: "module",
    aliases: ["m"],
    group: "targeting",
    pseudo: "id",
    example: "002",
    description: "the module (002): narrows the choice of change"
  }),
  layout: valueOption({
    name: "layout",
    group: "targeting",
    pseudo: "name",
    example: "openspec",
    description: "the tree of changes to read where there are several: spool, ito, openspec or speckit"
  }),
  promptFile: valueOption({
    name: "prompt-file",
    group: "targeting",
    pseudo: "path",
    example: "prompt.md",
    description: "read the prompt from this file"
  }),
  noInteractive: switchOption({
    name: "no-interactive",
    group: "targeting",
    description: "never ask; without --change, fail instead of asking which change"
  }),
  continueReady: switchOption({
    name: "continue-ready",
    group: "backlog",
    description: "sweep every ready change, in change-id order (with --module: that module's)"
  }),
  continueModule: switchOption({
    name: "continue-module",
    group: "backlog",
    description: "with --module: sweep the module's ready changes"
  }),
  maxParallel: valueOption({
    name: "max-parallel",
    group: "backlog",
    pseudo: "n",
    default: "1",
    description: "in a sweep: loops at once, each in a worktree of its own when more than 1"
  }),
  merge: switchOption({
    name: "merge",
    group: "backlog",
    description: "merge each completed change's branch into the current branch once --verify passes on the merged tree"
  }),
  approve: switchOption({
    name: "approve",
    group: "backlog",
    description: "with --merge: a completed change waits for a person's approval (exit 7); alone: --approve <change> approves it"
  }),
  reject: switchOption({
    name: "reject",
    action: true,
    group: "backlog",
    description: "--reject <change> \"<why>\": refuse a merge awaiting approval; the why goes to its context, the change runs again"
  }),
  harness: valueOption({
    name: "harness",
    group: "harness",
    pseudo: "name",
    default: "opencode",
    description: `the agent harness: ${harnessNames.join(", ")}`
  }),
  harnessCommand: valueOption({
    name: "harness-command",
    group: "harness",
    pseudo: "command",
    example: "\"node agent.mjs\"",
    description: "for --harness command: the agent's command line (no shell); prompt on stdin"
  }),
  model: valueOption({
    name: "model",
    group: "harness",
    pseudo: "provider/model",
    example: "anthropic/claude-sonnet",
    description: "the model, passed to the harness (else the harness's own)"
  }),
  fallback: valueOption({
    name: "fallback",
    group: "harness",
    pseudo: "harness[:model]",
    example: "codex:gpt-5.5",
    repeatable: true,
    description: "an agent to go on with while those before it are at a usage limit (command:<command line> for the command harness); repeatable, in order"
  }),
  rotate: switchOption({
    name: "rotate",
    group: "harness",
    description: "with --fallback: take the agent and the fallbacks in turn, one iteration each"
  }),
  review: valueOption({
    name: "review",
    group: "harness",
    pseudo: "harness[:model]",
    example: "claude:opus",
    repeatable: true,
    description: "a reviewer of a claim that passed --verify, run in a throwaway work tree; each must approve (command:<command line> for the command harness); repeatable"
  }),
  maxReviews: valueOption({
    name: "max-reviews",
    group: "harness",
    pseudo: "n",
    default: "3",
    description: "with --review: claims the reviewers may turn down in a run before the loop stops as review-rejected"
  }),
  allowAll: switchOption({
    name: "allow-all",
    aliases: ["yolo", "dangerously-allow-all"],
    group: "harness",
    description: "auto-approve every tool permission"
  }),
  minIterations: valueOption({
    name: "min-iterations",
    group: "iterations",
    pseudo: "n",
    default: "1",
    description: "iterations to run at least, even after the promise"
  }),
  maxIterations: valueOption({
    name: "max-iterations",
    group: "iterations",
    pseudo: "n",
    default: "20",
    description: "iterations to run at most"
  }),
  completionPromise: valueOption({
    name: "completion-promise",
    group: "iterations",
    pseudo: "token",
    default: "COMPLETE",
    description: "done when the agent prints <promise>TOKEN</promise>"
  }),
  requireTasks: switchOption({
    name: "require-tasks",
    group: "iterations",
    description: "refuse the promise while tasks.md has open tasks"
  }),
  verify: valueOption({
    name: "verify",
    group: "iterations",
    pseudo: "command",
    example: "\"pnpm test\"",
    repeatable: true,
    description: "a shell command that must pass before a claim of completion stands; repeatable"
  }),
  verifyTimeout: valueOption({
    name: "verify-timeout",
    group: "iterations",
    pseudo: "duration",
    default: "10m",
    description: "stop a --verify command running this long; it counts as failed"
  }),
  status: statusOptionSpecs.status,
  json: statusOptionSpecs.json,
  addContext: valueOption({
    name: "add-context",
    action: true,
    group: "state and context",
    pseudo: "text",
    example: "\"use the v2 API\"",
    description: "append to the change's context (read at every iteration)"
  }),
  clearContext: switchOption({
    name: "clear-context",
    action: true,
    group: "state and context",
    description: "empty the change's context"
  }),
  errorHistory: valueOption({
    name: "error-history",
    group: "state and context",
    pseudo: "n",
    default: "3",
    description: "failures of earlier runs shown in each prompt"
  }),
  keepErrors: switchOption({
    name: "keep-errors",
    group: "state and context",
    description: "keep errors.md when the change completes instead of archiving it"
  }),
  noCommit: switchOption({
    name: "no-commit",
    group: "git",
    description: "do not commit after each iteration"
  }),
  historyCommits: valueOption({
    name: "history-commits",
    group: "git",
    pseudo: "n",
    default: "10",
    description: "recent commits listed in each prompt, 0 for none"
  }),
  historyMerges: switchOption({
    name: "history-merges",
    group: "git",
    description: "include merge commits in that list"
  }),
  worktree: switchOption({
    name: "worktree",
    group: "git",
    description: "run the loop in a git worktree of its own, on branch spool/<change-id>"
  }),
  remove: switchOption({
    name: "remove",
    action: true,
    group: "git",
    description: "with --worktree: remove the change's worktree (its branch stays), then exit"
  }),
  resume: switchOption({
    name: "resume",
    group: "across machines",
    description: "go on with the change's last run (its iterations, spend and counters) instead of starting one; if it completed, exit 0"
  }),
  remote: valueOption({
    name: "remote",
    group: "across machines",
    pseudo: "name",
    example: "origin",
    description: "keep the loop on this git remote (branch spool/<change-id>, its state, a lease): one machine at a time, any clone goes on"
  }),
  leaseTtl: valueOption({
    name: "lease-ttl",
    group: "across machines",
    pseudo: "duration",
    default: "15m",
    description: "with --remote: the lease lapses if not renewed for this long (renewed every third of it)"
  }),
  deadline: valueOption({
    name: "deadline",
    group: "across machines",
    pseudo: "when",
    example: "5h30m",
    description: "end in good order by then (a duration from now, or a time: 18:00, 2026-11-28T06:00Z); exit 75 if not done"
  }),
  list: switchOption({
    name: "list",
    action: true,
    group: "across machines",
    description: "print every change and its state (ready, running, complete, not ready, archived), then exit; --json for CI"
  }),
  ...runningOptionSpecs
}

export const prompt = Args.text({ name: "prompt" }).pipe(
  Args.withDescription("what the agent should do (words are joined with spaces)"),
  Args.repeated
)

export const ralphOptions = { ...effectOptions(ralphOptionSpecs), prompt }

type ParsedArgs = Command.Command.ParseConfig<typeof ralphOptions>

/** The parsed command line, with the one change a single loop targets (the first given) beside every change given. */
export type RalphArgs = ParsedArgs & { readonly change: Option.Option<string> }

export const withTarget = (parsed: ParsedArgs): RalphArgs => ({ ...parsed, change: Option.fromNullable(parsed.changes[0]) })
