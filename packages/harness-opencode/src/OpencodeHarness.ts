import { AgentHarness, type HarnessRequest } from "@spool/core"
import { makeOpencodeOutput } from "./OpencodeOutput.js"

export const name = "opencode"

export interface OpencodeHarnessOptions {
  /** `provider/model`; null leaves the choice to opencode's own configuration. */
  readonly model: string | null
  /** Approve every permission opencode would ask about (`--auto`); rules that deny still apply. */
  readonly allowAll: boolean
  /** An explicit path to the opencode binary (SPOOL_OPENCODE_BIN); null looks for `opencode` on PATH. */
  readonly binary: string | null
  readonly pathEnv: string | undefined
  /** Extra environment for opencode (tests point it at a fake model server). */
  readonly env?: Readonly<Record<string, string>>
}

/**
 * The arguments of one iteration. The prompt is not among them: it goes to stdin, which opencode
 * appends to the (empty) message verbatim, whereas argv words get quoted and one argument is
 * limited to 128 KiB. The title is given so opencode makes no extra model request to invent one.
 */
export const commandArgs = (
  options: Pick<OpencodeHarnessOptions, "model" | "allowAll">,
  request: Pick<HarnessRequest, "changeId" | "iteration">
): Array<string> => [
  "run",
  "--format",
  "json",
  "--title",
  `spool ralph ${request.changeId} #${request.iteration}`,
  ...(options.model === null ? [] : ["--model", options.model]),
  ...(options.allowAll ? ["--auto"] : [])
]

/** Runs each iteration as one `opencode run --format json`, prompt on stdin. */
export const layer = (options: OpencodeHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "opencode",
      envVar: "SPOOL_OPENCODE_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g opencode-ai`"
    },
    reports: { cost: true, tokens: true },
    args: (request) => commandArgs(options, request),
    ...(options.env === undefined ? {} : { env: options.env }),
    output: (request) => makeOpencodeOutput({ cwd: request.cwd })
  })
