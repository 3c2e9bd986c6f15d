// The smallest @effect/cli program on @effect/platform-node (one command, one option), in the shape
// of spool's own bin.ts and bundled as spool is: the start-up floor of a CLI built this way.
import { Command, Options } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"

const name = Options.text("name").pipe(Options.withDefault("world"))
const hello = Command.make("hello", { name }, ({ name }) => Console.log(`hello ${name}`))
const run = Command.run(hello, { name: "hello", version: "0.0.0" })

run(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
