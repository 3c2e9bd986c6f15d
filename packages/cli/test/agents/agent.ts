import type { FakeModelServer } from "@spool/testkit/fakeModelServer"
import type { Process } from "@spool/testkit/processes"
import type { SpoolResult } from "../support.js"

/*
 * One coding agent as the shared scenarios (scenarios.ts) drive it: its fake model server, the
 * environment that points the real binary at that server, the scripts of the scenarios' turns and
 * what the agent shows of them. The five agents are described in the files beside this one.
 */

export const PROMISE = "<promise>COMPLETE</promise>"
export const CHANGE = "001-01_greeting-cli"

/** The texts of the user messages of the OpenAI-compatible fake's `i`-th request, joined by newlines. */
export const userText = (server: FakeModelServer, i: number) =>
  server.requests[i]!.messages.filter((m) => m.role === "user").map((m) => m.text).join("\n")

/** The requests of the OpenAI-compatible fake, as the scenarios look at them. */
export const chatRequests = (server: FakeModelServer): ReadonlyArray<SeenRequest> =>
  server.requests.map((request, i) => ({ model: request.model, prompt: userText(server, i) }))

/** A fake model server: the scenarios close it when they are done. */
export interface Closable {
  readonly close: () => Promise<void>
}

/** A model request as the scenarios look at it, whatever the agent's API. */
export interface SeenRequest {
  readonly model: string | null
  /** The texts of the request's user messages, joined by newlines. */
  readonly prompt: string
}

/** A pattern an output must contain: a text as it is, or a regular expression. */
export type Shown = string | RegExp

/** What the write scenario hands an agent's own checks, after the run completed. */
export interface WriteRun<Server> {
  readonly server: Server
  readonly root: string
  readonly result: SpoolResult
  /** `spool ralph --status --json` */
  readonly status: any
  /** `spool ralph --status` */
  readonly statusText: string
}

export interface Agent<Script, Server extends Closable> {
  /** Its `--harness` name. */
  readonly name: string
  /** The flags of every run of it: `--harness` and `--model`. */
  readonly flags: ReadonlyArray<string>
  /** The model the server sees for that `--model`. */
  readonly model: string
  readonly bin: {
    /** The variable that names the binary spool runs, e.g. `SPOOL_CODEX_BIN`. */
    readonly variable: string
    /** The pinned binary the harness package installs. */
    readonly path: string
    /** What spool tells a user without it. */
    readonly install: string
  }
  readonly start: (script: Script) => Promise<Server>
  /** The environment that points the agent at `server` alone, its home at `home`. */
  readonly env: (server: Server, home: string) => Record<string, string>
  /** The model requests the server got, in order. */
  readonly requests: (server: Server) => ReadonlyArray<SeenRequest>

  /** Two requests: write `greeting.txt` (`hello from <name>\n`) with the agent's tool, then a text with the promise. */
  readonly write: {
    readonly script: (root: string) => Script
    /** Flags the write needs besides `flags`, e.g. `--allow-all`. */
    readonly flags: ReadonlyArray<string>
    /** The tool call as spool shows it. */
    readonly shown: Shown
    /** The agent's own checks: tokens and cost as it reports them, and anything else it does. */
    readonly check: (run: WriteRun<Server>) => void | Promise<void>
  }

  /** An HTTP 400 (`bad request: context too long`) for the first iteration, then a text with the promise. */
  readonly failure: {
    readonly script: (root: string) => Script
    /** The error the iteration's record carries, or why it carries none. */
    readonly error: { readonly carried: Shown } | { readonly none: string }
    /** How spool shows it while the loop runs. */
    readonly shown: Shown
    /** The agent's exit code on it: not 0, or 0 and why. */
    readonly exit: "non-zero" | { readonly zero: string }
  }

  /** One text with the promise, for the 300 KiB proposal. */
  readonly promise: (root: string) => Script

  /** Keeps the agent busy until it is stopped, for Ctrl-C. */
  readonly interrupt: {
    readonly script: (root: string) => Script
    /** Flags the agent needs to get there, e.g. `--allow-all` for the command the model runs. */
    readonly flags: ReadonlyArray<string>
    /** The agent's processes, found from the work tree `root`. */
    readonly running: (root: string) => ReadonlyArray<Process>
    /** Whether the agent is where Ctrl-C should find it, e.g. running the command the model asked for. */
    readonly ready: (running: ReadonlyArray<Process>, server: Server) => boolean
    /** What must be running then, of the agent's own: what Ctrl-C must leave none of. */
    readonly check: (running: ReadonlyArray<Process>, server: Server) => void
  }

  /** A usage limit the model server answers with, or where the agent's limits are tested instead. */
  readonly limit: Limit<Script> | { readonly none: string }

  /** Its behaviour without `--allow-all`, or why it has none. */
  readonly permission: Permission<Script, Server> | { readonly none: string }
}

/** A write that needs permission: denied without `--allow-all`. */
export interface Permission<Script, Server> {
  /** The first request writes `denied.txt`. */
  readonly script: (root: string) => Script
  /** The environment, where the agent's defaults would allow the write. */
  readonly env?: (server: Server, home: string) => Record<string, string>
  /** The agent's own checks of the denied run. */
  readonly check: (result: SpoolResult, server: Server) => void
  /** A second run with `--allow-all`, for an agent whose script goes on: the write happens then. */
  readonly allowed?: { readonly file: string; readonly content: string }
}

/**
 * A usage limit: the first request is answered with the agent's limit (an HTTP 429 with a
 * `retry-after` of an hour, or the words the agent's provider uses for a spent quota). spool, given
 * `--max-limit-wait 0`, records the iteration `limited` and ends with exit 5, resuming at the reset.
 */
export interface Limit<Script> {
  readonly script: (root: string) => Script
  /** How long after the request the limit lifts, as the reply says (the retry-after). */
  readonly resetsInMs: number
  /**
   * How the agent reports it: as a reset time, which spool waits a minute past (the default), or
   * as a retry-after, which spool waits just as long as it says.
   */
  readonly readAs?: "reset time" | "retry-after"
  /** The limit as the iteration's record carries it. */
  readonly error: Shown
}
