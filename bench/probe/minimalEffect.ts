// The smallest Effect program: the start-up floor of anything built on `effect`, bundled as spool is.
import { Console, Effect } from "effect"

Effect.runSync(Console.log("ok"))
