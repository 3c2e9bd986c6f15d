// A fake OpenAI-compatible model server on 127.0.0.1 that counts what it is asked, and the
// environment that runs the real opencode binary against it and nowhere else. Modelled on the
// test fixture packages/harness-opencode/test/fixtures/fakeModelServer.ts, cut down to plain text turns.
import { mkdirSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"

const textOf = (content) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("")
    : ""

const record = (method, url, body) => {
  let json = {}
  try {
    json = body === "" ? {} : JSON.parse(body)
  } catch {
    // Not JSON: recorded with no messages.
  }
  const messages = (Array.isArray(json.messages) ? json.messages : []).map((m) => ({ role: String(m.role), text: textOf(m.content) }))
  const system = messages.filter((m) => m.role === "system").map((m) => m.text).join("\n")
  // opencode asks for a session title with no tools and a title-generator system prompt.
  return { method, path: url, isTitle: json.tools === undefined && /title generator/i.test(system) }
}

const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 }

const streamText = (res, chunks) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  let n = 0
  const send = (choices, extra = {}) =>
    res.write(`data: ${JSON.stringify({ id: "fake-1", object: "chat.completion.chunk", created: ++n, model: "fake-model", choices, ...extra })}\n\n`)
  chunks.forEach((content, i) => send([{ index: 0, delta: i === 0 ? { role: "assistant", content } : { content } }]))
  send([{ index: 0, delta: {}, finish_reason: "stop" }])
  send([], { usage })
  res.end("data: [DONE]\n\n")
}

/** Starts the server; each chat request takes the next reply (a list of text chunks); title requests get a fixed title. */
export const startFakeModelServer = (replies) => {
  const requests = []
  let next = 0
  const server = createServer((req, res) => {
    const chunks = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => {
      const request = record(req.method ?? "", req.url ?? "", Buffer.concat(chunks).toString("utf8"))
      requests.push(request)
      if (req.method !== "POST" || !request.path.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" })
        return res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }))
      }
      streamText(res, request.isTitle ? ["Fake title"] : replies[next++] ?? ["The fake model has nothing more to say."])
    })
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      resolve({
        baseURL: `http://127.0.0.1:${server.address().port}/v1`,
        requests,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}

/** opencode's config in the environment, no model list or update fetches, an unreachable npm registry, private HOME and XDG dirs. */
export const opencodeEnv = ({ baseURL, root }) => {
  const dir = (name) => {
    const full = join(root, name)
    mkdirSync(full, { recursive: true })
    return full
  }
  const config = {
    $schema: "https://opencode.ai/config.json",
    enabled_providers: ["fake"],
    model: "fake/fake-model",
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake",
        options: { baseURL, apiKey: "fake-key" },
        models: { "fake-model": { name: "fake-model", tool_call: true, cost: { input: 2, output: 10 } } }
      }
    },
    autoupdate: false,
    share: "disabled",
    lsp: false,
    formatter: false
  }
  return {
    HOME: dir("home"),
    XDG_CONFIG_HOME: dir("config"),
    XDG_DATA_HOME: dir("data"),
    XDG_CACHE_HOME: dir("cache"),
    XDG_STATE_HOME: dir("state"),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    npm_config_registry: "http://127.0.0.1:9/"
  }
}
