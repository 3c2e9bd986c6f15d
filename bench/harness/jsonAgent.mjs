// A fake JSON agent for the streaming benchmark: prints `bytes` of one agent's JSON event stream
// (opencode, claude, codex, gemini, pi, copilot or qwen), as the real one would during a long run: tool calls whose outputs
// are 64 KiB to 4 MiB of build and test logs, text deltas, assistant messages, usage; the last
// assistant message claims completion. It ignores its arguments and its stdin (the prompt).
// Payloads are built once and reused, so the program itself costs little more than its writes.
const OUTPUT_SIZES = [64, 96, 192, 256, 512, 768, 1024, 1536, 2048, 3072, 4096].map((k) => k * 1024)

const logLines = [
  "  ✓ test/parser.test.ts > parses a nested block_quote with \"quotes\" and \\back\\slashes 12ms",
  "src/loop/Iteration.ts(128,17): error TS2322: Type 'string | undefined' is not assignable to type 'string'.",
  "npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.",
  "    at Object.<anonymous> (/work/project/node_modules/.pnpm/vitest@3.2.4/dist/index.js:42:13)",
  "[build] dist/spool-main.cjs  978.2kb  ⚡ Done in 412ms",
  "diff --git a/src/a.ts b/src/a.ts\tindex 3b18e51..a9c2f0d 100644",
  "{\"level\":\"info\",\"msg\":\"request served\",\"path\":\"/api/v1/items?id=42\",\"ms\":3}",
  "FAIL  packages/core/test/Loop.test.ts > retries a failed iteration — expected 2 to be 3"
]

/** A log of about `size` bytes once JSON-encoded, as the inside of a JSON string (no quotes). */
const payloadOf = (size) => {
  const lines = []
  let length = 0
  for (let i = 0; length < size; i++) {
    const line = `${String(i).padStart(6, " ")} ${logLines[(i * 7) % logLines.length]}`
    lines.push(line)
    length += JSON.stringify(line).length
  }
  return JSON.stringify(lines.join("\n")).slice(1, -1)
}
const payloads = OUTPUT_SIZES.map((size) => Buffer.from(payloadOf(size)))

const flavours = {
  opencode: {
    toolUse: (n) => [
      `{"type":"tool_use","timestamp":${1_700_000_000_000 + n},"sessionID":"ses_bench","part":{"id":"prt_tool_${n}","callID":"call_${n}","type":"tool","tool":"bash","state":{"status":"completed","input":{"command":"npm test -- --run","description":"Runs the tests"},"output":"`,
      `","title":"npm test -- --run","metadata":{"exit":0,"truncated":false},"time":{"start":1,"end":2}}}}\n`
    ],
    text: (n, text) => `${JSON.stringify({ type: "text", timestamp: 1_700_000_000_000 + n, sessionID: "ses_bench", part: { id: `prt_text_${n}`, type: "text", text, time: { start: 1, end: 2 } } })}\n`,
    delta: () => "",
    step: (n) => `{"type":"step_finish","timestamp":${1_700_000_000_000 + n},"sessionID":"ses_bench","part":{"type":"step-finish","tokens":{"input":1200,"output":80,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.002}}\n`,
    end: () => ""
  },
  claude: {
    toolUse: (n) => [
      `{"type":"assistant","message":{"id":"msg_${n}","type":"message","role":"assistant","model":"claude-bench","content":[{"type":"tool_use","id":"toolu_${n}","name":"Bash","input":{"command":"npm test -- --run","description":"Runs the tests"}}],"usage":{"input_tokens":1200,"output_tokens":40}},"parent_tool_use_id":null,"session_id":"bench"}\n` +
      `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_${n}","type":"tool_result","content":"`,
      `","is_error":false}]},"parent_tool_use_id":null,"session_id":"bench"}\n`
    ],
    text: (n, text) => `${JSON.stringify({ type: "assistant", message: { id: `msg_t${n}`, type: "message", role: "assistant", model: "claude-bench", content: [{ type: "text", text }] }, parent_tool_use_id: null, session_id: "bench" })}\n`,
    delta: (n, text) => `${JSON.stringify({ type: "stream_event", event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, parent_tool_use_id: null, session_id: "bench" })}\n`,
    step: () => "",
    end: () => `{"type":"result","subtype":"success","is_error":false,"duration_ms":1000,"num_turns":3,"result":"done","session_id":"bench","total_cost_usd":0.12,"usage":{"input_tokens":120000,"output_tokens":4000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"permission_denials":[]}\n`
  },
  codex: {
    toolUse: (n) => [
      `{"type":"item.started","item":{"id":"item_${n}","type":"command_execution","command":"bash -lc 'npm test -- --run'","aggregated_output":"","exit_code":null,"status":"in_progress"}}\n` +
      `{"type":"item.completed","item":{"id":"item_${n}","type":"command_execution","command":"bash -lc 'npm test -- --run'","aggregated_output":"`,
      `","exit_code":0,"status":"completed"}}\n`
    ],
    text: (n, text) => `${JSON.stringify({ type: "item.completed", item: { id: `item_t${n}`, type: "agent_message", text } })}\n`,
    delta: () => "",
    step: () => "",
    end: () => `{"type":"turn.completed","usage":{"input_tokens":120000,"cached_input_tokens":0,"output_tokens":4000,"reasoning_output_tokens":0}}\n`
  },
  gemini: {
    toolUse: (n) => [
      `{"type":"tool_use","timestamp":"2026-11-25T12:00:00.000Z","tool_name":"run_shell_command","tool_id":"run_shell_command_${n}","parameters":{"command":"npm test -- --run","description":"Runs the tests"}}\n` +
      `{"type":"tool_result","timestamp":"2026-11-25T12:00:01.000Z","tool_id":"run_shell_command_${n}","status":"success","output":"`,
      `"}\n`
    ],
    // gemini streams the model's text in pieces; a "message" is the last piece of a turn.
    text: (n, text) => `${JSON.stringify({ type: "message", timestamp: "2026-11-25T12:00:00.000Z", role: "assistant", content: text, delta: true })}\n`,
    delta: (n, text) => `${JSON.stringify({ type: "message", timestamp: "2026-11-25T12:00:00.000Z", role: "assistant", content: text, delta: true })}\n`,
    step: () => "",
    end: () => `{"type":"result","timestamp":"2026-11-25T12:00:02.000Z","status":"success","stats":{"total_tokens":124000,"input_tokens":120000,"output_tokens":4000,"cached":0,"input":120000,"duration_ms":1000,"tool_calls":3}}\n`
  },
  pi: {
    toolUse: (n) => [
      `{"type":"tool_execution_start","toolCallId":"call_${n}","toolName":"bash","args":{"command":"npm test -- --run"}}\n` +
      `{"type":"tool_execution_end","toolCallId":"call_${n}","toolName":"bash","result":{"content":[{"type":"text","text":"`,
      `"}]},"isError":false}\n`
    ],
    text: (n, text) => `${JSON.stringify({ type: "message_end", message: { role: "assistant", content: [{ type: "text", text }], api: "openai-completions", provider: "bench", model: "bench", usage: { input: 1200, output: 80, cacheRead: 0, cacheWrite: 0, totalTokens: 1280, cost: { input: 0.0036, output: 0.0012, cacheRead: 0, cacheWrite: 0, total: 0.0048 } }, stopReason: "stop" } })}\n`,
    // Each update repeats the message so far, as pi prints them.
    delta: (n, text) => `${JSON.stringify({ type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: text, partial: { role: "assistant", content: [{ type: "text", text: `${text} `.repeat(n % 8 + 1) }] } }, message: { role: "assistant", content: [{ type: "text", text: `${text} `.repeat(n % 8 + 1) }] } })}\n`,
    step: () => "",
    end: () => `{"type":"agent_end","messages":[]}\n`
  },
  copilot: {
    // The message that asks for the tool, the call's start, and its end carrying the output.
    toolUse: (n) => [
      `{"type":"assistant.message","data":{"messageId":"msg_${n}","content":"","toolRequests":[{"toolCallId":"call_${n}","name":"bash","arguments":{"command":"npm test -- --run","description":"Runs the tests"},"type":"function"}],"turnId":"${n}"},"id":"ev_${n}_a","timestamp":"2026-11-29T08:43:05.270Z"}\n` +
      `{"type":"tool.execution_start","data":{"toolCallId":"call_${n}","toolName":"bash","arguments":{"command":"npm test -- --run","description":"Runs the tests"},"turnId":"${n}"},"id":"ev_${n}_b","timestamp":"2026-11-29T08:43:05.282Z"}\n` +
      `{"type":"tool.execution_complete","data":{"toolCallId":"call_${n}","turnId":"${n}","success":true,"result":{"content":"`,
      `"}},"id":"ev_${n}_c","timestamp":"2026-11-29T08:43:05.322Z"}\n`
    ],
    text: (n, text) => `${JSON.stringify({ type: "assistant.message", data: { messageId: `msg_t${n}`, content: text, toolRequests: [], turnId: String(n) }, id: `ev_t${n}`, timestamp: "2026-11-29T08:43:05.335Z" })}\n`,
    delta: (n, text) => `${JSON.stringify({ type: "assistant.message_delta", data: { messageId: `msg_t${n}`, deltaContent: text }, ephemeral: true, id: `ev_d${n}`, timestamp: "2026-11-29T08:43:05.330Z" })}\n`,
    step: (n) => `{"type":"assistant.turn_end","data":{"turnId":"${n}"},"id":"ev_e${n}","timestamp":"2026-11-29T08:43:05.339Z"}\n`,
    end: () => `{"type":"result","timestamp":"2026-11-29T08:43:05.352Z","sessionId":"bench","exitCode":0,"usage":{"premiumRequests":0,"totalApiDurationMs":188,"sessionDurationMs":624}}\n`
  },
  qwen: {
    toolUse: (n) => [
      `{"type":"assistant","uuid":"a${n}","session_id":"bench","parent_tool_use_id":null,"message":{"id":"a${n}","type":"message","role":"assistant","model":"qwen-bench","content":[{"type":"tool_use","id":"call_${n}","name":"run_shell_command","input":{"command":"npm test -- --run","description":"Runs the tests"}}],"stop_reason":"tool_use","usage":{"input_tokens":1200,"output_tokens":40}}}\n` +
      `{"type":"user","uuid":"u${n}","session_id":"bench","parent_tool_use_id":null,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_${n}","is_error":false,"content":"`,
      `"}]}}\n`
    ],
    text: (n, text) => `${JSON.stringify({ type: "assistant", uuid: `t${n}`, session_id: "bench", parent_tool_use_id: null, message: { id: `t${n}`, type: "message", role: "assistant", model: "qwen-bench", content: [{ type: "text", text }], stop_reason: null, usage: { input_tokens: 1200, output_tokens: 80 } } })}\n`,
    // qwen prints no deltas unless asked to (--include-partial-messages, which spool does not pass).
    delta: () => "",
    step: () => "",
    end: () => `{"type":"result","subtype":"success","uuid":"r","session_id":"bench","is_error":false,"duration_ms":1000,"num_turns":3,"result":"done","usage":{"input_tokens":120000,"output_tokens":4000,"total_tokens":124000},"permission_denials":[]}\n`
  }
}

export const runAgent = async (flavour, total) => {
  const f = flavours[flavour]
  const write = (chunk) => new Promise((resolve, reject) => process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())))
  const start = flavour === "codex"
    ? '{"type":"thread.started","thread_id":"bench"}\n{"type":"turn.started"}\n'
    : flavour === "gemini"
    ? '{"type":"init","timestamp":"2026-11-25T12:00:00.000Z","session_id":"bench","model":"bench"}\n'
    : flavour === "qwen"
    ? `{"type":"system","subtype":"init","uuid":"bench","session_id":"bench","cwd":"/bench","tools":["run_shell_command"],"mcp_servers":[],"model":"qwen-bench","permission_mode":"yolo"}\n`
    : flavour === "pi"
    ? '{"type":"session","version":3,"id":"bench","timestamp":"2026-11-25T12:00:00.000Z","cwd":"/bench"}\n{"type":"agent_start"}\n'
    : ""
  const last = f.text(1e9, "All the tests pass.\n\n<promise>COMPLETE</promise>") + f.step(1e9) + f.end()
  let left = total - Buffer.byteLength(start) - Buffer.byteLength(last)
  await write(start)
  for (let n = 0; left > 0; n++) {
    // Text deltas and a short message, then a tool call with a large output.
    let small = ""
    for (let d = 0; d < 8; d++) small += f.delta(n, `Looking at the failing test number ${n}, part ${d}. `)
    small += f.text(n, `Step ${n}: the tests need another run after changing src/loop/Iteration.ts.`) + f.step(n)
    const [head, tail] = f.toolUse(n)
    const payload = payloads[(n * 5) % payloads.length]
    const size = Buffer.byteLength(small) + Buffer.byteLength(head) + Buffer.byteLength(tail)
    if (size + payload.length > left) {
      // The rest: one more message padded to size, so the stream is exactly `total` bytes.
      const pad = Math.max(0, left - Buffer.byteLength(f.text(n, "")))
      await write(f.text(n, "x".repeat(pad)))
      break
    }
    await write(small + head)
    await write(payload)
    await write(tail)
    left -= size + payload.length
  }
  await write(last)
}
