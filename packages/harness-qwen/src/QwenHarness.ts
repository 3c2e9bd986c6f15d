import { AgentHarness, type SandboxNeeds } from "@spool/core"
import { makeQwenOutput } from "./QwenOutput.js"

export const name = "qwen"

/**
 * What qwen needs inside spool's sandbox (`--sandbox`): its state (`~/.qwen`, or `QWEN_HOME`), the
 * hosts of the providers it knows by default (OpenAI's API for an OpenAI key with no base URL,
 * DashScope and its coding plans, Qwen OAuth, Anthropic, Gemini), and its settings and keys. Its
 * own sandbox is off unless asked for, so it does not nest.
 */
export const sandboxNeeds: SandboxNeeds = {
  stateDirs: [".qwen"],
  stateEnv: ["QWEN_HOME", "QWEN_RUNTIME_DIR"],
  hosts: [
    "api.openai.com",
    "dashscope.aliyuncs.com",
    "dashscope-intl.aliyuncs.com",
    "coding.dashscope.aliyuncs.com",
    "coding-intl.dashscope.aliyuncs.com",
    "chat.qwen.ai",
    "api.anthropic.com",
    "generativelanguage.googleapis.com"
  ],
  env: ["QWEN_*", "OPENAI_*", "DASHSCOPE_*", "ANTHROPIC_*", "GEMINI_*", "GOOGLE_*"],
  baseUrlEnv: ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"]
}

/**
 * qwen: `model` is passed as `-m` (`qwen3-coder-plus`); `allowAll` is `--yolo`. It authenticates
 * as its settings say (`~/.qwen/settings.json`, made by `/auth` in an interactive qwen), else as
 * its environment does: `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `OPENAI_MODEL`, all three. Tests
 * point it at a fake model server through `env`.
 */
export type QwenHarnessOptions = AgentHarness.AgentOptions

/**
 * qwen waits out an HTTP 429 or 529 for as long as it lasts, saying so on stderr every 30 s
 * (`QwenLimit.fromHeartbeat`), which spool reads as the limit it is. Without it qwen sleeps out a
 * whole `retry-after` (an hour, a day) without a word.
 */
export const env: Readonly<Record<string, string>> = { QWEN_CODE_UNATTENDED_RETRY: "1" }

/**
 * The arguments of one iteration. The prompt is not among them: qwen reads it from stdin, which is
 * not a terminal (an argv word is limited to 128 KiB). Without `--allow-all` qwen keeps its own
 * approval mode, in which a headless run offers the model no tool that needs approval (shell,
 * edit, write).
 */
export const commandArgs = (options: Pick<QwenHarnessOptions, "model" | "allowAll">): Array<string> => [
  "-o",
  "stream-json",
  ...(options.model === null ? [] : ["-m", options.model]),
  ...(options.allowAll ? ["--yolo"] : [])
]

/**
 * Runs each iteration as one `qwen -o stream-json`, prompt on stdin. qwen starts two more node
 * processes of itself, and its shell commands in process groups of their own, which it stops when
 * it is stopped; the rest is in the process group runProcess stops as a whole.
 */
export const layer = (options: QwenHarnessOptions) =>
  AgentHarness.layer({
    program: {
      harness: name,
      program: "qwen",
      envVar: "SPOOL_QWEN_BIN",
      binary: options.binary,
      pathEnv: options.pathEnv,
      install: "install it with `npm install -g @qwen-code/qwen-code`"
    },
    // qwen reports the tokens of the run, never cost.
    reports: { cost: false, tokens: true },
    args: () => commandArgs(options),
    env: { ...env, ...options.env },
    output: (request, now) => makeQwenOutput({ cwd: request.cwd, now }),
    // qwen waits out a limit by itself: the run ends at the first one it reports.
    endsOnLimit: true
  })
