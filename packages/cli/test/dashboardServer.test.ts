import { FileSystem } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { HistoryStore, LoopLock, type LoopState, makeRedactor, Workspace } from "@spool/core"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { iterationRecord } from "@spool/testkit/iterationRecord"
import { Effect, Exit, Layer, Scope } from "effect"
import { createHash } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { DashboardPlan } from "../src/serve/DashboardOptions.js"
import { serveDashboard } from "../src/serve/DashboardServer.js"
import { pageCss, pageHtml } from "../src/serve/Page.js"
import { pageScript } from "../src/serve/PageScript.js"
import { agentScript, git, spool, startSpool, stateDir } from "./support.js"

const change = "001-01_alpha"

const state = (iteration: number): LoopState => ({
  changeId: change,
  run: "r1",
  status: "running",
  iteration,
  minIterations: 1,
  maxIterations: 20,
  startedAt: "2026-11-22T00:00:00.000Z",
  updatedAt: "2026-11-22T00:01:00.000Z",
  pid: 1,
  stopReason: null,
  stopMessage: null,
  resumeAt: null,
  guards: null
})

const record = (iteration: number) =>
  iterationRecord({ iteration, durationMs: 1500, git: { changedFiles: 2, files: ["a", "b"], insertions: 3, deletions: 0 } })

/** A repository on `main` with two changes; `001-01_alpha` has a loop at its iteration 3, with a log; `001-02_beta` only context. */
const repository = () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "spool-dashboard-")))
  for (const id of [change, "001-02_beta"]) {
    mkdirSync(join(root, ".spool", "changes", id), { recursive: true })
    writeFileSync(join(root, ".spool", "changes", id, "proposal.md"), `# ${id}\n`)
  }
  writeFileSync(join(root, ".spool", "changes", change, "tasks.md"), "- [x] 1.1 one\n- [ ] 1.2 two\n")
  git(root, "init", "-q", "-b", "main")
  git(root, "config", "user.name", "Test")
  git(root, "config", "user.email", "test@example.invalid")
  git(root, "add", "-A")
  git(root, "commit", "-qm", "initial")
  mkdirSync(join(stateDir(root, change), "logs"), { recursive: true })
  writeFileSync(join(stateDir(root, change), "state.json"), JSON.stringify(state(3)))
  writeFileSync(join(stateDir(root, change), "history.jsonl"), [1, 2].map((i) => JSON.stringify(record(i))).join("\n") + "\n")
  writeFileSync(join(stateDir(root, change), "logs", "r1-003.log"), "=== prompt (iteration 3) ===\nDo it.\n=== output ===\nworking with sk-ant-abcdefghijklmnopqrstuvwxyz\n")
  mkdirSync(stateDir(root, "001-02_beta"), { recursive: true })
  writeFileSync(join(stateDir(root, "001-02_beta"), "context.txt"), "be brief\n")
  return root
}

/** Every file under `dir` with a digest of its content and its modification time: what "nothing changed" means. */
const snapshot = (dir: string): Record<string, string> =>
  Object.fromEntries(readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => {
    const file = join(entry.parentPath, entry.name)
    return [file, `${createHash("sha256").update(readFileSync(file)).digest("hex")} ${statSync(file).mtimeMs}`]
  }))

const open: Array<Scope.CloseableScope> = []
afterEach(async () => {
  for (const scope of open.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
})

/** The file system, each of its calls counted in `calls`: how a test sees the dashboard read. */
const countedFileSystem = (counter: { calls: number }) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (fs) =>
      new Proxy(fs, {
        get: (target, key) => {
          const value: unknown = Reflect.get(target, key)
          return typeof value === "function"
            ? (...args: Array<unknown>) => {
              counter.calls++
              return value.apply(target, args)
            }
            : value
        }
      }))
  ).pipe(Layer.provide(NodeContext.layer))

/**
 * Serves the dashboard of `root` in this process as `plan` says, until the test ends. With `locks`,
 * the loops' locks tell which still run; with `reads`, every call of the file system is counted there.
 */
const serve = async (root: string, plan: Partial<DashboardPlan> = {}, options: { locks?: boolean; reads?: { calls: number } } = {}) => {
  const scope = await Effect.runPromise(Scope.make())
  open.push(scope)
  // The locks as spool itself reads them: this process is the only live one.
  const stores = options.locks === true
    ? Layer.merge(HistoryStore.layer, LoopLock.layer({ pid: process.pid, host: "here", isAlive: (pid) => pid === process.pid }))
    : HistoryStore.layer
  const files = options.reads === undefined ? NodeContext.layer : Layer.merge(NodeContext.layer, countedFileSystem(options.reads))
  const layer = stores.pipe(Layer.provideMerge(Workspace.layer(root)), Layer.provideMerge(files))
  const full: DashboardPlan = { alone: true, host: "127.0.0.1", port: 0, token: null, loopback: true, ...plan }
  const served = await Effect.runPromise(serveDashboard(full, makeRedactor({})).pipe(Scope.extend(scope), Effect.provide(layer)))
  return { ...served, scope }
}

interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** One request as sent, its path never normalised; the Host header is this server's unless told. */
const request = (port: number, path: string, options: { method?: string; headers?: Record<string, string>; noHost?: boolean } = {}) =>
  new Promise<Reply>((resolve, reject) => {
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      path,
      method: options.method ?? "GET",
      setHost: options.noHost !== true,
      headers: { ...(options.noHost === true ? {} : { host: `127.0.0.1:${port}` }), ...options.headers }
    }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end()
  })

/** An open event stream: the events so far, the `end` event's words once sent, and a wait for one that `test` accepts. */
const eventStream = (port: number, path: string) => {
  const events: Array<unknown> = []
  let buffer = ""
  let ended = false
  let endEvent: string | null = null
  const req = httpRequest({ host: "127.0.0.1", port, path, headers: { host: `127.0.0.1:${port}` } }, (res) => {
    res.setEncoding("utf8")
    res.on("data", (chunk: string) => {
      buffer += chunk
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const lines = buffer.slice(0, end).split("\n")
        const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6))
        buffer = buffer.slice(end + 2)
        if (lines.includes("event: end")) endEvent = data.join("\n")
        else if (data.length > 0) events.push(JSON.parse(data.join("\n")))
      }
    })
    res.on("close", () => (ended = true))
  })
  req.on("error", () => (ended = true))
  req.end()
  const until = async <A>(what: string, test: () => A | undefined | false): Promise<A> => {
    for (let i = 0; i < 1500; i++) {
      const found = test()
      if (found !== undefined && found !== false) return found
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error(`never saw ${what}; events: ${JSON.stringify(events).slice(0, 2000)}`)
  }
  return { events, until, ended: () => ended, endEvent: () => endEvent, close: () => req.destroy() }
}

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'"

describe("the dashboard's server (in process, real HTTP on 127.0.0.1)", () => {
  it("serves the page, its assets and the loops as JSON, every answer with its security headers; HEAD as GET without a body", async () => {
    const root = repository()
    const { port } = await serve(root)
    const expected = [
      ["/", "text/html; charset=utf-8", "<script src=\"/app.js\" defer></script>"],
      ["/app.js", "text/javascript; charset=utf-8", "createElement"],
      ["/app.css", "text/css; charset=utf-8", ".badge"],
      ["/api/loops", "application/json; charset=utf-8", "\"001-01_alpha\""],
      [`/api/loops/${change}`, "application/json; charset=utf-8", "\"iterations\""]
    ] as const
    for (const [path, type, content] of expected) {
      const reply = await request(port, path)
      expect([path, reply.status, reply.headers["content-type"]]).toEqual([path, 200, type])
      expect(reply.body).toContain(content)
      expect(reply.headers).toMatchObject({
        "content-security-policy": CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-store"
      })
      const head = await request(port, path, { method: "HEAD" })
      expect([path, head.status, head.headers["content-type"], head.body]).toEqual([path, 200, type, ""])
    }
    // An event stream's HEAD: its headers, and no body.
    for (const path of ["/events", `/events/${change}`]) {
      const head = await request(port, path, { method: "HEAD" })
      expect([path, head.status, head.headers["content-type"], head.headers["content-security-policy"], head.body]).toEqual([
        path,
        200,
        "text/event-stream; charset=utf-8",
        CSP,
        ""
      ])
    }
    // The page's assets are its own, nothing from elsewhere.
    expect((await request(port, "/")).body).not.toMatch(/(?:src|href)="(?:https?:)?\/\//)
    const loops = JSON.parse((await request(port, "/api/loops")).body)
    expect(loops.loops.map((loop: { changeId: string }) => loop.changeId)).toEqual([change])
    expect(loops.loops[0]).toMatchObject({ status: "running", iteration: 3, maxIterations: 20, tasks: { complete: 1, total: 2 } })
    const detail = JSON.parse((await request(port, `/api/loops/${change}`)).body)
    expect(detail.iterations.map((i: { iteration: number }) => i.iteration)).toEqual([1, 2])
    // The agent's output, redacted again on its way out.
    expect(detail.output).toEqual({ text: "working with [REDACTED]\n", truncated: false, run: "r1", iteration: 3 })
  })

  it("shows a JSON agent's output as the terminal did, its paths relative to the loop's worktree; a command's as logged; each iteration's by the harness that ran it", async () => {
    const root = repository()
    const line = (value: object) => JSON.stringify(value)
    const log = [
      "=== prompt (iteration 3) ===",
      "Do it.",
      "=== output ===",
      line({ type: "system", subtype: "init", cwd: "/work/tree", session_id: "s", tools: ["Write"], model: "m" }),
      line({
        type: "assistant",
        message: {
          id: "m1",
          role: "assistant",
          content: [{ type: "text", text: "Writing the notes." }, { type: "tool_use", id: "t1", name: "Write", input: { file_path: "/work/tree/notes.md", content: "x" } }]
        },
        parent_tool_use_id: null,
        session_id: "s"
      }),
      "[stderr] warning: slow",
      ""
    ].join("\n")
    writeFileSync(join(stateDir(root, change), "logs", "r1-003.log"), log)
    const detailOf = async (harness: string) => {
      writeFileSync(join(stateDir(root, change), "state.json"), JSON.stringify({ ...state(3), harness, worktree: "/work/tree" }))
      const { port } = await serve(root)
      return JSON.parse((await request(port, `/api/loops/${change}`)).body).output.text as string
    }
    expect(await detailOf("claude")).toBe("Writing the notes.\n→ Write notes.md\nwarning: slow\n")
    expect(await detailOf("command")).toBe(log.slice(log.indexOf("=== output ===\n") + 15))
    // With several agents, by the harness of the agent that ran the iteration, not the run's own.
    const agents = [
      { agent: "command:./agent.sh", harness: "command", model: "./agent.sh", iterations: 2, costUsd: null, tokens: 0, limitedUntil: null },
      { agent: "claude", harness: "claude", model: null, iterations: 1, costUsd: 0.1, tokens: 10, limitedUntil: null }
    ]
    const several = { ...state(3), harness: "command", worktree: "/work/tree", agents }
    const history = join(stateDir(root, change), "history.jsonl")
    const detailWith = async (patch: Partial<LoopState>) => {
      writeFileSync(join(stateDir(root, change), "state.json"), JSON.stringify({ ...several, ...patch }))
      const { port } = await serve(root)
      return JSON.parse((await request(port, `/api/loops/${change}`)).body).output.text as string
    }
    // Running: the agent the state names.
    expect(await detailWith({ agent: "claude" })).toBe("Writing the notes.\n→ Write notes.md\nwarning: slow\n")
    // Recorded: its record's harness, whichever agent the state names since.
    writeFileSync(history, readFileSync(history, "utf8") + JSON.stringify(iterationRecord({ iteration: 3, agent: "claude", harness: "claude", model: null })) + "\n")
    expect(await detailWith({ agent: "command:./agent.sh" })).toBe("Writing the notes.\n→ Write notes.md\nwarning: slow\n")
  })

  it("marks a loop its state says runs, but whose lock no live process holds, as abandoned", async () => {
    const { port } = await serve(repository(), {}, { locks: true })
    const loops = JSON.parse((await request(port, "/api/loops")).body)
    expect(loops.loops[0]).toMatchObject({ changeId: change, status: "abandoned", iteration: 3 })
    const detail = JSON.parse((await request(port, `/api/loops/${change}`)).body)
    expect(detail.loop).toMatchObject({ status: "abandoned" })
  })

  it("serves a page that loads nothing from elsewhere", () => {
    // What the script makes of what it reads (text, never markup) is tested on a DOM: test/page/.
    for (const asset of [pageScript, pageCss, pageHtml("t")]) expect(asset).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)|@import|url\(/)
    // No inline script or style: the Content-Security-Policy allows neither.
    expect(pageHtml(null)).not.toMatch(/<script>|<style|\sstyle="|\son\w+="/)
  })

  it("answers 404 for any other path: traversal, unknown and invalid change ids, a change without loop state", async () => {
    const root = repository()
    writeFileSync(join(root, "secret.txt"), "not for the page\n")
    const { port } = await serve(root)
    const paths = [
      "/api/loops/../x",
      "/api/loops/..",
      "/api/loops/%2e%2e",
      "/api/loops/..%2F..%2Fsecret.txt",
      "/api/loops/%2E%2E%2Fsecret.txt",
      "/api/loops/001-01_alpha%2F..%2F..",
      "/api/loops/001-01_alpha/state.json",
      "/api/loops/001-09_unknown",
      "/api/loops/001-02_beta",
      "/api/loops/%E0%A4%A",
      "/api/loops/",
      "/events/001-09_unknown",
      "/events/..",
      "/events/001-02_beta",
      "/secret.txt",
      "/../secret.txt",
      "//secret.txt",
      "/.spool/.state/ralph/001-01_alpha/state.json",
      "/app.js/x",
      "/app.js;x",
      "/api/loops;x",
      "/events#x",
      "/API/loops",
      "//app.js",
      "/index.html",
      "/favicon.ico",
      "*",
      "http://127.0.0.1/api/loops"
    ]
    for (const path of paths) {
      const reply = await request(port, path)
      expect([path, reply.status]).toEqual([path, 404])
      expect(reply.headers["content-security-policy"]).toBe(CSP)
      expect(reply.body).not.toContain("not for the page")
    }
  })

  it("is read-only: POST, PUT, DELETE, PATCH and OPTIONS get 405 on every path, and nothing on disk changes", async () => {
    const root = repository()
    const { port } = await serve(root)
    const before = snapshot(root)
    for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
      for (const path of ["/", "/api/loops", `/api/loops/${change}`, "/events", `/events/${change}`, "/nowhere"]) {
        const reply = await request(port, path, { method, headers: { "content-type": "application/json" } })
        expect([method, path, reply.status, reply.headers.allow]).toEqual([method, path, 405, "GET, HEAD"])
      }
    }
    expect(snapshot(root)).toEqual(before)
  })

  it("with a token: every request must carry it, in the URL or as a bearer; the page passes it on to its assets", async () => {
    const root = repository()
    const token = "t0k&n/\"x"
    const { port } = await serve(root, { token })
    const query = `token=${encodeURIComponent(token)}`
    for (const path of ["/", "/app.js", "/app.css", "/api/loops", `/api/loops/${change}`, "/events", "/nowhere"]) {
      expect([path, (await request(port, path)).status]).toEqual([path, 401])
      expect([path, (await request(port, `${path}?token=wrong`)).status]).toEqual([path, 401])
      expect([path, (await request(port, path, { headers: { authorization: "Bearer wrong" } })).status]).toEqual([path, 401])
    }
    for (const path of ["/", "/app.js", "/app.css", "/api/loops", `/api/loops/${change}`]) {
      expect([path, (await request(port, `${path}?${query}`)).status]).toEqual([path, 200])
      expect([path, (await request(port, path, { headers: { authorization: `Bearer ${token}` } })).status]).toEqual([path, 200])
    }
    // An unknown path is still 404 once the token is given; a write still 405.
    expect((await request(port, `/nowhere?${query}`)).status).toBe(404)
    expect((await request(port, `/?${query}`, { method: "POST" })).status).toBe(405)
    const page = (await request(port, `/?${query}`)).body
    expect(page).toContain(`<script src="/app.js?${query}" defer></script>`)
    expect(page).toContain(`<link rel="stylesheet" href="/app.css?${query}">`)
    const events = eventStream(port, `/events?${query}`)
    await events.until("the list", () => events.events.length > 0)
    events.close()
  })

  it("on loopback, answers only to its own address as Host: another name (DNS rebinding) gets 421", async () => {
    const root = repository()
    const { port } = await serve(root)
    for (const host of ["evil.example", `evil.example:${port}`, `127.0.0.1:${port + 1}`, "127.0.0.1", `127.0.0.1.evil.example:${port}`]) {
      const reply = await request(port, "/api/loops", { headers: { host } })
      expect([host, reply.status]).toEqual([host, 421])
      expect(reply.body).not.toContain(change)
    }
    // Without a Host header, Node refuses the request itself.
    const hostless = await request(port, "/api/loops", { noHost: true })
    expect([400, 421]).toContain(hostless.status)
    expect(hostless.body).not.toContain(change)
    expect((await request(port, "/api/loops", { headers: { host: `localhost:${port}` } })).status).toBe(200)
    expect((await request(port, "/api/loops", { headers: { host: `LOCALHOST:${port}` } })).status).toBe(200)
    // Beyond loopback the token is the guard, whatever name the machine is reached by.
    const guarded = await serve(root, { loopback: false, token: "secret-token" })
    expect((await request(guarded.port, "/api/loops?token=secret-token", { headers: { host: "dashboard.example:80" } })).status).toBe(200)
    expect((await request(guarded.port, "/api/loops", { headers: { host: "dashboard.example:80" } })).status).toBe(401)
  })

  it("sends a snapshot at once over server-sent events, then another when a state file changes; closing ends the stream, its last word saying the dashboard stopped", async () => {
    const root = repository()
    const { port, scope } = await serve(root)
    const list = eventStream(port, "/events")
    const detail = eventStream(port, `/events/${change}`)
    type Detail = { loop: { iteration: number }; iterations: Array<unknown>; output: { text: string } }
    const first = await detail.until("the first snapshot", () => detail.events[0] as Detail | undefined)
    expect(first.loop.iteration).toBe(3)
    expect(first.iterations).toHaveLength(2)
    await list.until("the list", () => list.events.length > 0)
    writeFileSync(join(stateDir(root, change), "state.json"), JSON.stringify(state(4)))
    writeFileSync(join(stateDir(root, change), "history.jsonl"), [1, 2, 3].map((i) => JSON.stringify(record(i))).join("\n") + "\n")
    const second = await detail.until("iteration 4", () => (detail.events as Array<Detail>).find((event) => event.loop.iteration === 4))
    expect(second.iterations).toHaveLength(3)
    await list.until("iteration 4 in the list", () =>
      (list.events as Array<{ loops: Array<{ iteration: number }> }>).some((event) => event.loops[0]?.iteration === 4))
    // The output as it is written: a new line of the log is a new snapshot.
    writeFileSync(join(stateDir(root, change), "logs", "r1-004.log"), "=== prompt (iteration 4) ===\nDo it.\n=== output ===\nthe latest line\n")
    await detail.until("the latest line", () => (detail.events as Array<Detail>).some((event) => event.output?.text === "the latest line\n"))
    // Nothing changes: no new snapshot (a keep-alive comment is no event).
    const seen = detail.events.length
    await new Promise((r) => setTimeout(r, 1500))
    expect(detail.events.length).toBe(seen)
    open.splice(open.indexOf(scope), 1)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await detail.until("the end of the stream", () => detail.ended())
    await list.until("the end of the list's stream", () => list.ended())
    // Served alone: each stream's last word says the dashboard stopped.
    expect([detail.endEvent(), list.endEvent()]).toEqual(["dashboard stopped", "dashboard stopped"])
  })

  it("beside a run, sends each loop's last state as it stops serving, then an end event: a loop that has just ended shows how", async () => {
    const root = repository()
    const { port, scope } = await serve(root, { alone: false })
    const list = eventStream(port, "/events")
    const detail = eventStream(port, `/events/${change}`)
    type Loop = { status: string; iteration: number }
    await detail.until("the first snapshot", () => detail.events.length > 0)
    await list.until("the list", () => list.events.length > 0)
    expect((detail.events[0] as { loop: Loop }).loop.status).toBe("running")
    // The loop's last write, then the end of the run, at once: no poll comes between them.
    const ending: LoopState = { ...state(3), status: "complete", stopReason: "complete", stopMessage: "the promise was accepted at iteration 3" }
    writeFileSync(join(stateDir(root, change), "state.json"), JSON.stringify(ending))
    open.splice(open.indexOf(scope), 1)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await detail.until("the end of the stream", () => detail.ended())
    await list.until("the end of the list's stream", () => list.ended())
    const last = detail.events.at(-1) as { loop: Loop; stopMessage: string }
    expect([last.loop.status, last.stopMessage]).toEqual(["complete", "the promise was accepted at iteration 3"])
    expect((list.events.at(-1) as { loops: Array<Loop> }).loops.map((loop) => loop.status)).toEqual(["complete"])
    expect([detail.endEvent(), list.endEvent()]).toEqual(["run ended", "run ended"])
  })

  it("lets go of a client that goes away: its request ends, and no one reads its view for it any more", async () => {
    const root = repository()
    const reads = { calls: 0 }
    const { port } = await serve(root, {}, { reads })
    const detail = eventStream(port, `/events/${change}`)
    await detail.until("the first snapshot", () => detail.events.length > 0)
    // While it watches, its view is read a poll at a time.
    const watching = reads.calls
    await detail.until("another read", () => reads.calls > watching)
    detail.close()
    // Once it is gone, the reads stop: three polls' time passes without one.
    let quiet = false
    for (let i = 0; i < 10 && !quiet; i++) {
      const before = reads.calls
      await new Promise((r) => setTimeout(r, 1800))
      quiet = reads.calls === before
    }
    expect(quiet).toBe(true)
    // The next client is served as the first was.
    const again = eventStream(port, `/events/${change}`)
    const first = await again.until("a snapshot", () => again.events[0] as { loop: { iteration: number } } | undefined)
    expect(first.loop.iteration).toBe(3)
    again.close()
  })

  it("fails to start, saying so in one line, when its port is in use", async () => {
    const root = repository()
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as AddressInfo).port
    try {
      await expect(serve(root, { port })).rejects.toThrow(
        `the dashboard cannot listen on 127.0.0.1:${port}: the port is in use; give another --port, or leave it out for a free one`
      )
    } finally {
      taken.close()
    }
  })
})

describe("spool ralph --serve (the built binary)", () => {
  it("checks its options as usage errors: one spool: line, exit 2, nothing served", async () => {
    const root = repository()
    const cases: Array<[Array<string>, string]> = [
      [["--port", "4300"], "spool: --port goes with --serve: spool ralph --serve --port ..."],
      [["--serve-token", "abc"], "spool: --serve-token goes with --serve: spool ralph --serve --serve-token ..."],
      [["--serve", "--port", "65536"], "spool: --port must be a whole number from 0 to 65535 (0: a free one), got '65536'; e.g. --port 4300"],
      [["--serve", "--port", "-1"], "spool: --port must be a whole number from 0 to 65535 (0: a free one), got '-1'; e.g. --port 4300"],
      [["--serve", "--serve-host", "0.0.0.0"], "spool: --serve-host 0.0.0.0 opens the dashboard beyond this machine: give --serve-token too, which every request must then carry"],
      [["--serve", "--status"], "spool: --serve serves the dashboard alone or beside a loop or sweep, not with --status; give them one at a time"]
    ]
    for (const [args, line] of cases) {
      const result = await spool(["ralph", ...args], { cwd: root })
      expect([args, result.code, result.stderr, result.stdout]).toEqual([args, 2, `${line}\n`, ""])
    }
  })

  it("the settings file's serve is for runs: an action answers without it; its port without serve is the file's mistake", async () => {
    const root = repository()
    writeFileSync(join(root, ".spool", "config.json"), JSON.stringify({ ralph: { serve: true } }))
    const listed = await spool(["ralph", "--list"], { cwd: root })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).not.toContain("dashboard:")
    const added = await spool(["ralph", "--add-context", "be brief", "--change", "001-02"], { cwd: root })
    expect(added.code, added.stderr).toBe(0)
    writeFileSync(join(root, ".spool", "config.json"), JSON.stringify({ ralph: { port: "4300" } }))
    const run = await spool(["ralph", "--list"], { cwd: root })
    expect([run.code, run.stderr]).toEqual([2, "spool: .spool/config.json, \"ralph\".\"port\": --port goes with --serve: spool ralph --serve --port ...\n"])
  })

  it("a port in use: one spool: line, exit 1, nothing else", async () => {
    const root = repository()
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as AddressInfo).port
    try {
      const result = await spool(["ralph", "--serve", "--port", String(port)], { cwd: root })
      expect(result).toMatchObject({ code: 1, stdout: "" })
      expect(result.stderr).toBe(`spool: the dashboard cannot listen on 127.0.0.1:${port}: the port is in use; give another --port, or leave it out for a free one\n`)
    } finally {
      taken.close()
    }
  })

  it("alone: prints its URL (never the token), serves until SIGINT, then exits 130 as any stop does", async () => {
    const root = repository()
    const served = startSpool(["ralph", "--serve", "--serve-token", "very-secret-token"], root)
    await served.waitFor("dashboard: ")
    const line = served.output().split("\n")[0]!
    expect(line).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/ \(add \?token=<your --serve-token>\)$/)
    const port = Number(/:(\d+)\//.exec(line)![1])
    expect((await request(port, "/api/loops", { headers: { authorization: "Bearer very-secret-token" } })).status).toBe(200)
    served.child.kill("SIGINT")
    expect(await served.done).toEqual({ code: 130, signal: null })
    expect(served.output()).not.toContain("very-secret-token")
  })

  it("beside a loop: serves while it runs, sends how the loop ended as its last state, and closes with it", async () => {
    const root = repository()
    const gate = join(mkdtempSync(join(tmpdir(), "spool-gate-")), "go")
    const agent = agentScript(`
import { existsSync } from "node:fs"
while (!existsSync(${JSON.stringify(gate)})) await new Promise((r) => setTimeout(r, 20))
console.log("<promise>COMPLETE</promise>")
`)
    const served = startSpool(["ralph", "--change", "001-02", "--serve", "--no-commit", "--harness", "command", "--harness-command", agent, "--no-interactive"], root)
    await served.waitFor("dashboard: ")
    const port = Number(/:(\d+)\//.exec(served.output())![1])
    const list = eventStream(port, "/events")
    type Loops = { loops: Array<{ changeId: string; status: string }> }
    const statusOf = (event: unknown) => (event as Loops).loops.find((loop) => loop.changeId === "001-02_beta")?.status
    await list.until("the loop running", () => list.events.some((event) => statusOf(event) === "running"))
    writeFileSync(gate, "")
    const { code } = await served.done
    expect(code, served.output()).toBe(0)
    expect(served.output().split("\n")[0]).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/$/)
    expect(served.output()).toContain("complete: the promise was accepted at iteration 1")
    await list.until("the end of the stream", () => list.ended())
    expect([statusOf(list.events.at(-1)), list.endEvent()]).toEqual(["complete", "run ended"])
    await expect(request(port, "/api/loops")).rejects.toThrow(/ECONNREFUSED/)
  })
})
