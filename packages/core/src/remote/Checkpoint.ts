import { Context, Effect, Layer } from "effect"
import type { ChangeId } from "../domain/Domain.js"
import type { LockLostError } from "../state/LoopLock.js"
import type { RemoteError } from "./RemoteHome.js"

/**
 * Where a loop's work and state are kept beyond this machine, after each recorded iteration and at
 * its end: nowhere more (the default), or pushed to a remote. It fails when the change is no longer
 * this loop's, and then nothing was kept.
 */
export class Checkpoint extends Context.Tag("@spool/core/Checkpoint")<Checkpoint, {
  readonly save: (changeId: ChangeId) => Effect.Effect<void, LockLostError | RemoteError>
}>() {
  /** The state files are all there is: nothing more to keep. */
  static readonly local = Layer.succeed(Checkpoint, { save: () => Effect.void })
}
