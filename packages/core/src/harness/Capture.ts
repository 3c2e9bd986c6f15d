import { makeCompletionJudge } from "../completion/CompletionJudge.js"
import type { HarnessUsage } from "../domain/Domain.js"
import type { HarnessEvent } from "./HarnessService.js"
import { makeByteHeadTail } from "../output/HeadTail.js"

/** How much of each stream an error journal entry keeps: this much from the start and from the end. */
export const JOURNAL_STREAM_HALF = 128 * 1024

/**
 * Everything one agent run reported, gathered as it streams, in bounded memory. `echoReference`
 * is the prompt text an echo is recognised against.
 */
export const makeCapture = (completionPromise: string, echoReference: string) => {
  const judge = makeCompletionJudge({ token: completionPromise, prompt: echoReference })
  return {
    judge,
    exitCode: null as number | null,
    signal: null as string | null,
    timedOut: false,
    /** Why a guard stopped the agent run (a spend cap), if one did. */
    stopped: null as string | null,
    usage: null as HarnessUsage | null,
    /** The failure the agent reported (`Failed`), the first one kept. */
    error: null as string | null,
    /** The usage limit the agent hit (`Limited`), the last one kept. */
    limited: null as Extract<HarnessEvent, { _tag: "Limited" }> | null,
    warnings: [] as Array<string>,
    stdout: makeByteHeadTail(JOURNAL_STREAM_HALF),
    stderr: makeByteHeadTail(JOURNAL_STREAM_HALF),
    displayAtLineStart: true
  }
}
export type Capture = ReturnType<typeof makeCapture>
