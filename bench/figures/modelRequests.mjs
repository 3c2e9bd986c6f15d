// Model requests per opencode iteration: one `spool ralph` iteration with the real opencode binary
// against a fake model server that scripts one plain text turn carrying the promise, and counts
// what it is asked. The agent's own requests for that turn: one.
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startFakeModelServer, opencodeEnv } from "../lib/fakeModelServer.mjs"
import { runWithPeakMemory } from "../lib/measure.mjs"
import { opencodeBin } from "../lib/paths.mjs"
import { CHANGE, spoolProgram, statusJson } from "../lib/spool.mjs"

export const modelRequests = async ({ workspace }) => {
  if (!existsSync(opencodeBin)) throw new Error(`the opencode binary is not installed at ${opencodeBin} (pnpm install)`)
  const server = await startFakeModelServer([["The change is done.\n\n", "<promise>COMPLETE</promise>\n"]])
  const sandbox = mkdtempSync(join(tmpdir(), "spool-bench-opencode-"))
  try {
    const env = { ...opencodeEnv({ baseURL: server.baseURL, root: sandbox }), SPOOL_OPENCODE_BIN: opencodeBin }
    const loop = spoolProgram("opencode iteration", ["ralph", "Finish the change.", "--change", CHANGE, "--no-interactive", "--max-iterations", "1", "--no-commit"], { cwd: workspace, env })
    const run = await runWithPeakMemory(loop)
    if (run.code !== 0) throw new Error(`spool ralph with opencode exited with ${run.code}: ${run.stderr.slice(-1000)}`)
    const record = statusJson(workspace).history.at(-1)
    const chat = server.requests.filter((r) => r.method === "POST" && r.path.endsWith("/chat/completions"))
    return {
      ms: run.ms,
      total: server.requests.length,
      title: chat.filter((r) => r.isTitle).length,
      agent: chat.filter((r) => !r.isTitle).length,
      other: server.requests.length - chat.length,
      completionDetected: record?.completionDetected === true
    }
  } finally {
    await server.close()
    rmSync(sandbox, { recursive: true, force: true })
  }
}
