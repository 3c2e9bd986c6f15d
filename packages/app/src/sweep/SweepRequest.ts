import type { LoopRequest } from "../run/LoopRequest.js"

/** Which changes a sweep takes: every ready one, a module's, or the named ones (of a module, when one is given). */
export type SweepTarget =
  | { readonly _tag: "AllReady" }
  | { readonly _tag: "Module"; readonly moduleId: string }
  | { readonly _tag: "Named"; readonly changes: ReadonlyArray<string>; readonly moduleId: string | null }

/** A sweep: its changes, how many loops at a time, whether each is merged once complete, and what every loop is asked to be. */
export interface SweepRequest extends LoopRequest {
  readonly selection: SweepTarget
  readonly maxParallel: number
  readonly merge: boolean
  /** With `merge`: a completed change waits for a person's approval before its merge. */
  readonly approve?: boolean
}
