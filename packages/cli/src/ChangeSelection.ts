import { Prompt } from "@effect/cli"
import type { ChangeId } from "@spool/core"

/** Asks on the terminal which active change to work on. */
export const selectChange = (candidates: ReadonlyArray<ChangeId>) =>
  Prompt.select({
    message: "Which change should the loop work on?",
    choices: candidates.map((id) => ({ title: id, value: id }))
  })
