import { describe, expect, it } from "@effect/vitest"
import { Sandbox } from "@spool/core"
import { Effect } from "effect"
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { layer } from "../src/SandboxRuntime.js"

// A bubblewrap that is there but cannot make namespaces, as in a container that forbids them: it
// answers for its version, and refuses to run anything.
const refusingBwrap = () => {
  const dir = mkdtempSync(join(tmpdir(), "spool-bwrap-"))
  const bwrap = join(dir, "bwrap")
  writeFileSync(bwrap, "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'bubblewrap 0.8.0'; exit 0; fi\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n")
  chmodSync(bwrap, 0o755)
  return dir
}

describe("the sandbox runtime on a system that cannot build its walls", () => {
  it.effect("fails before anything runs, saying why, instead of running anything outside them", () =>
    Effect.gen(function*() {
      const path = process.env.PATH
      process.env.PATH = `${refusingBwrap()}:${path}`
      const error = yield* Effect.flip(Effect.scoped(Effect.flatMap(Sandbox, () => Effect.void).pipe(Effect.provide(layer)))).pipe(
        Effect.ensuring(Effect.sync(() => {
          process.env.PATH = path
        }))
      )
      expect(error.message).toBe(
        "a process could not start inside it (bwrap: No permissions to create a new namespace); it needs user namespaces, which this system or its container may not allow"
      )
    }))
})
