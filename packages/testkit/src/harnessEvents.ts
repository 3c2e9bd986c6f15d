import type { CommandExecutor, FileSystem } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { type HarnessEvent, type HarnessRequest, HarnessService, outputOf } from "@spool/core"
import { Chunk, Effect, type Layer, Stream } from "effect"

/** The events a harness's reader gave, sorted by what the tests of every harness look at. */
export const sortEvents = (events: ReadonlyArray<HarnessEvent>) => {
  const of = <T extends HarnessEvent["_tag"]>(tag: T) => events.filter((e): e is Extract<HarnessEvent, { _tag: T }> => e._tag === tag)
  return {
    events,
    outputs: of("Output"),
    agentText: of("AgentText").map((e) => e.text).join(""),
    display: of("Display").map((e) => e.text).join(""),
    usage: of("Usage").map((e) => e.usage),
    warnings: of("Warning").map((e) => e.message),
    failed: of("Failed").map((e) => e.message),
    limited: of("Limited")
  }
}

/** `text` as the stdout of an agent, in batches of `size` characters (lines and characters split across them). */
export const inBatches = (text: string, size: number): Array<HarnessEvent> => {
  const batches: Array<HarnessEvent> = []
  for (let at = 0; at < text.length; at += size) batches.push(outputOf("stdout", text.slice(at, at + size)))
  return batches
}

/** Every event of one run of the harness `layer` makes, through real processes. */
export const runHarnessOnce = (
  layer: Layer.Layer<HarnessService, never, CommandExecutor.CommandExecutor | FileSystem.FileSystem>,
  request: HarnessRequest
) =>
  HarnessService.pipe(
    Effect.flatMap((harness) => Stream.runCollect(harness.run(request))),
    Effect.map(Chunk.toArray),
    Effect.provide(layer),
    Effect.provide(NodeContext.layer)
  )
