import { describe, expect, it } from "@effect/vitest"
import { type FakeHttpServer, startFakeHttpServer } from "@spool/testkit/fakeHttpServer"
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import type { IncomingHttpHeaders } from "node:http"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { agentScript, alive, git, makeWorkspace, repositoryOf, spool, startSpool, stateDir } from "./support.js"

const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const fakeOpencode = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "fake-opencode.mjs")
chmodSync(fakeOpencode, 0o755)
const EVERY_EVENT = "complete,max-iterations,failed,stopped,deadline,usage-limit,verify-failed,agent-switched,interrupted,sweep-ended"
const FIELDS = ["event", "change", "run", "iteration", "maxIterations", "outcome", "message", "costUsd", "tokens", "branch", "commit", "resumeAt", "tasks", "time", "text", "content"]
/** The part of each webhook's URL that is its secret. */
const TOKEN = "s3cr3t-path-token-7f3a"

/** A repository on `main` holding `changes`, with what the notifier writes kept out of git. */
const repository = (changes: Record<string, Record<string, string>>, files: Record<string, string> = {}) =>
  repositoryOf(changes, { ".gitignore": "notices/\n", ...files })

/** A webhook receiver on 127.0.0.1: answers with `statuses` in turn (the last one from then on) and keeps every request it was sent. */
const receiver = async (statuses: ReadonlyArray<number> = [200]) => {
  const received: Array<{ url: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }> = []
  let calls = 0
  const server: FakeHttpServer = await startFakeHttpServer((request, res) => {
    received.push({ url: request.url, headers: request.headers, body: JSON.parse(request.body) })
    res.writeHead(statuses[Math.min(calls++, statuses.length - 1)]!, { "content-type": "text/plain" })
    res.end("ok")
  })
  return { server, received, url: `${server.origin}/hooks/T0001/B0002/${TOKEN}` }
}

/** A notifier that appends each notice it reads, and the event and change of its environment, under `notices/`. */
const recorder =
  `mkdir -p notices && cat >> notices/notices.jsonl && echo "$SPOOL_EVENT $SPOOL_CHANGE" >> notices/env.txt`

const notices = (root: string) =>
  readFileSync(join(root, "notices", "notices.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)

/** Every file under `dir` but git's own, with its text. */
const filesUnder = (dir: string): Array<[string, string]> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === ".git") return []
    return statSync(path).isDirectory() ? filesUnder(path) : [[path, readFileSync(path, "latin1")] as [string, string]]
  })

describe("being told (the built binary, a notifier and a webhook on 127.0.0.1)", () => {
  it("a sweep tells both of every event, each one JSON object with its fields, in order; the webhook's URL is nowhere", async () => {
    const hook = await receiver()
    try {
      const root = repository({
        "001-01_claims": { "tasks.md": "- [x] 1.1 one\n- [ ] 1.2 two\n" },
        "001-02_broken": {},
        "001-03_idle": {},
        "001-04_busy": {}
      })
      const agent = agentScript(`
import { chmodSync, existsSync, writeFileSync } from "node:fs"
const id = process.env.SPOOL_CHANGE, n = Number(process.env.SPOOL_ITERATION)
if (id === "001-01_claims") {
  if (n === 2) writeFileSync("ok.txt", "checked\\n")
  console.log("All the work is done.\\n<promise>COMPLETE</promise>")
} else if (id === "001-02_broken") { console.error("the build is broken"); process.exit(1) }
else if (id === "001-03_idle") console.log("still thinking")
else { writeFileSync("busy-" + n + ".txt", "more\\n"); console.log("more to do") }
`)
      const result = await spool(
        [
          "ralph", "--continue-ready", ...harness(agent), "--verify", "test -f ok.txt", "--max-iterations", "3",
          "--max-consecutive-failures", "2", "--stall-iterations", "2", "--no-stream",
          "--notify", recorder, "--webhook", hook.url, "--notify-on", EVERY_EVENT
        ],
        { cwd: root }
      )
      // Notices change neither the sweep's course nor its exit code: a failed change makes it 1.
      expect(result.code, result.stderr).toBe(1)
      expect(result.stdout).toContain("=== sweep: 4 changes: 1 complete, 1 failed, 1 stopped, 1 max-iterations ===")
      expect(readFileSync(join(root, "notices", "env.txt"), "utf8").trim().split("\n")).toEqual([
        "verify-failed 001-01_claims",
        "complete 001-01_claims",
        "failed 001-02_broken",
        "stopped 001-03_idle",
        "max-iterations 001-04_busy",
        "sweep-ended"
      ])
      const told = notices(root)
      for (const notice of told) expect(Object.keys(notice), String(notice.event)).toEqual(expect.arrayContaining(FIELDS))
      const [rejected, complete, failed, stopped, capped, ended] = told
      expect(rejected).toMatchObject({ event: "verify-failed", change: "001-01_claims", iteration: 1, maxIterations: 3, outcome: "failed" })
      expect(rejected!.message).toMatch(/^the claim of completion at iteration 1 was rejected: test -f ok\.txt \(exit 1, /)
      expect(complete).toMatchObject({
        event: "complete",
        change: "001-01_claims",
        iteration: 2,
        outcome: "complete",
        message: "complete: the promise was accepted at iteration 2",
        tasks: { done: 1, total: 2 },
        // The scripted agent reports no usage: its spend is unknown, not 0.
        costUsd: null,
        tokens: null,
        branch: null,
        commit: git(root, "log", "-1", "--format=%H", "--grep", "001-01_claims iteration 2"),
        resumeAt: null
      })
      expect(complete!.text).toBe("spool: 001-01_claims complete at iteration 2 of 3 (tasks 1/2): complete: the promise was accepted at iteration 2")
      expect(complete!.content).toBe(complete!.text)
      expect(complete!.run).toBe(JSON.parse(readFileSync(join(stateDir(root, "001-01_claims"), "state.json"), "utf8")).run)
      expect(Date.parse(String(complete!.time))).not.toBeNaN()
      expect(failed).toMatchObject({ event: "failed", change: "001-02_broken", iteration: 2, outcome: "failures" })
      expect(failed!.message).toContain("the build is broken")
      expect(stopped).toMatchObject({ event: "stopped", change: "001-03_idle", iteration: 2, outcome: "stall" })
      expect(capped).toMatchObject({ event: "max-iterations", change: "001-04_busy", iteration: 3, outcome: "max-iterations" })
      expect(ended).toMatchObject({
        event: "sweep-ended",
        change: null,
        outcome: "failed",
        message: "failed: 4 changes (1 complete, 1 failed, 1 stopped, 1 max-iterations)",
        costUsd: null,
        tokens: null
      })
      expect((ended!.sweep as { changes: Array<{ change: string; outcome: string }> }).changes.map((c) => [c.change, c.outcome])).toEqual([
        ["001-01_claims", "complete"],
        ["001-02_broken", "failed"],
        ["001-03_idle", "stopped"],
        ["001-04_busy", "max-iterations"]
      ])
      // The webhook got the same notices, as the bodies of POSTs to its own URL.
      expect(hook.received.map((r) => r.body)).toEqual(told)
      expect(hook.received.every((r) => r.url === `/hooks/T0001/B0002/${TOKEN}`)).toBe(true)
      // Its URL is a secret: not in the output, the state, the logs or the records.
      expect(result.stdout + result.stderr).not.toContain(TOKEN)
      const files = filesUnder(root)
      expect(files.some(([path]) => path.endsWith(".log"))).toBe(true)
      expect(files.filter(([, text]) => text.includes(TOKEN)).map(([path]) => path)).toEqual([])
      expect(existsSync(join(stateDir(root, "001-01_claims"), "notifications.log"))).toBe(false)
    } finally {
      await hook.server.close()
    }
  })

  it("a hanging notifier is stopped with its process group after 10 s and a webhook answering 500 is tried again; neither changes the loop's end", async () => {
    const hook = await receiver([500, 200])
    try {
      const root = makeWorkspace()
      const pids = mkdtempSync(join(tmpdir(), "spool-notifier-"))
      // It hangs on the last event only, leaving a child of its own behind it.
      const hang = `cat > /dev/null; if [ "$SPOOL_EVENT" = complete ]; then sleep 300 & echo $! > ${pids}/sleep.pid; wait; fi`
      const agent = agentScript(`
const n = Number(process.env.SPOOL_ITERATION)
console.log(n === 1 ? "halfway" : "Finished.\\n<promise>COMPLETE</promise>")
`)
      const result = await spool(
        ["ralph", "x", "--change", "001-01", ...harness(agent), "--no-stream", "--notify", hang, "--webhook", hook.url, "--notify-on", "complete,max-iterations"],
        { cwd: root }
      )
      expect(result.code, result.stderr).toBe(0)
      const warning = "warning: 001-01_greeting-cli: the complete notice to --notify cat > /dev/null; if [ \"$SPOOL_EVENT\" = complete ]; then sleep 300 & echo $! > "
      expect(result.stderr).toContain(warning)
      expect(result.stderr).toContain("failed: still running after 10s, so it was stopped with its process group")
      expect(await alive(Number(readFileSync(join(pids, "sleep.pid"), "utf8")))).toBe(false)
      // The webhook answered 500, then 200 to the second try.
      expect(hook.received.map((r) => r.body.event)).toEqual(["complete", "complete"])
      expect(result.stderr).not.toContain("webhook 1")
      // The failure is kept where --status shows it.
      const status = (await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })).stdout
      expect(status).toMatch(/^notices: {3}1 notice of this run could not be told; the last: complete --notify cat > \/dev\/null;.*still running after 10s/m)
      const json = JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)
      expect(json.status).toBe("complete")
      expect(json.notifyFailures).toHaveLength(1)
      expect(readFileSync(join(stateDir(root, "001-01_greeting-cli"), "notifications.log"), "utf8").trim().split("\n")).toHaveLength(1)
    } finally {
      await hook.server.close()
    }
  }, 60_000)

  it("a webhook is sent no tracing headers (traceparent, b3): nothing of spool's spans goes to a third party", async () => {
    const hook = await receiver()
    try {
      const root = makeWorkspace()
      const agent = agentScript(`console.log("Finished.\\n<promise>COMPLETE</promise>")`)
      const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent), "--no-stream", "--webhook", hook.url], { cwd: root })
      expect(result.code, result.stderr).toBe(0)
      expect(hook.received.map((r) => r.body.event)).toEqual(["complete"])
      const names = Object.keys(hook.received[0]!.headers)
      expect(names).toContain("content-type")
      expect(names.filter((name) => /^(traceparent|tracestate|b3|x-b3-)/.test(name))).toEqual([])
    } finally {
      await hook.server.close()
    }
  })

  it("a webhook that never answers 2xx is given up after three tries, said in one line naming it by its host and its place among the webhooks alone", async () => {
    const hook = await receiver([503])
    try {
      const root = makeWorkspace()
      const agent = agentScript(`console.log("Finished.\\n<promise>COMPLETE</promise>")`)
      // A notifier beside it takes no number from the webhooks: the only webhook is webhook 1.
      const result = await spool(
        ["ralph", "x", "--change", "001-01", ...harness(agent), "--no-stream", "--notify", "cat > /dev/null", "--webhook", hook.url],
        { cwd: root }
      )
      expect(result.code, result.stderr).toBe(0)
      expect(hook.received).toHaveLength(3)
      const host = new URL(hook.url).host
      expect(result.stderr).toContain(`warning: 001-01_greeting-cli: the complete notice to webhook 1 (${host}) failed: 3 tries failed (the last: answered 503); given up`)
      expect(result.stdout + result.stderr).not.toContain(TOKEN)
      expect(readFileSync(join(stateDir(root, "001-01_greeting-cli"), "notifications.log"), "utf8")).not.toContain(TOKEN)
    } finally {
      await hook.server.close()
    }
  }, 60_000)

  it("webhooks are tried side by side: two failing webhooks' requests both arrive before either is answered", async () => {
    // Each request is held until another one is in too; one left alone is answered after 5 s, so that spool still ends.
    const open: Array<() => void> = []
    const received: Array<string> = []
    let mostAtOnce = 0
    const server = await startFakeHttpServer((request, res) => {
      received.push(request.url)
      const answer = () => {
        clearTimeout(timer)
        if (res.writableEnded) return
        res.writeHead(503, { "content-type": "text/plain" })
        res.end("unavailable")
      }
      const timer = setTimeout(() => {
        open.splice(open.indexOf(answer), 1)
        answer()
      }, 5_000)
      open.push(answer)
      mostAtOnce = Math.max(mostAtOnce, open.length)
      if (open.length === 2) for (const held of open.splice(0)) held()
    })
    try {
      const root = makeWorkspace()
      const agent = agentScript(`console.log("Finished.\\n<promise>COMPLETE</promise>")`)
      const hooks = [`${server.origin}/one/${TOKEN}`, `${server.origin}/two/${TOKEN}`]
      const result = await spool(
        ["ralph", "x", "--change", "001-01", ...harness(agent), "--no-stream", "--webhook", hooks[0]!, "--webhook", hooks[1]!],
        { cwd: root }
      )
      expect(result.code, result.stderr).toBe(0)
      expect(mostAtOnce).toBe(2)
      expect(received.filter((url) => url.startsWith("/one/"))).toHaveLength(3)
      expect(received.filter((url) => url.startsWith("/two/"))).toHaveLength(3)
      const host = new URL(server.origin).host
      for (const n of [1, 2]) {
        expect(result.stderr).toContain(`the complete notice to webhook ${n} (${host}) failed: 3 tries failed (the last: answered 503); given up`)
      }
    } finally {
      await server.close()
    }
  }, 90_000)

  it("a usage limit tells when the wait begins and until when; a deadline tells deadline", async () => {
    const root = makeWorkspace()
    const limited = { type: "error", error: { name: "APIError", data: { message: "Rate limit reached", statusCode: 429, isRetryable: true, responseHeaders: { "retry-after": "1" }, responseBody: "" } } }
    const done = { type: "text", part: { id: "p1", type: "text", text: "Done. <promise>COMPLETE</promise>" } }
    const plan = join(mkdtempSync(join(tmpdir(), "spool-fake-opencode-")), "plan.json")
    writeFileSync(plan, JSON.stringify([{ events: [limited], exit: 1 }, { events: [done] }]))
    const env = { SPOOL_OPENCODE_BIN: fakeOpencode, FAKE_OPENCODE_PLAN: plan, FAKE_OPENCODE_CALLS: `${plan}.calls` }
    const waited = await spool(["ralph", "x", "--change", "001-01", "--no-interactive", "--no-stream", "--notify", recorder, "--notify-on", EVERY_EVENT], { cwd: root, env })
    expect(waited.code, waited.stderr).toBe(0)
    const [wait, complete] = notices(root)
    expect(wait).toMatchObject({ event: "usage-limit", change: "001-01_greeting-cli", iteration: 1, outcome: "waiting" })
    expect(Date.parse(String(wait!.resumeAt))).toBeGreaterThan(Date.parse(String(wait!.time)) - 1000)
    expect(wait!.message).toBe(`waiting for a usage limit to lift until ${wait!.resumeAt}; the loop goes on by itself`)
    expect(complete).toMatchObject({ event: "complete", iteration: 1 })

    const late = makeWorkspace()
    const slow = agentScript(`console.log("on it"); setTimeout(() => {}, 60_000)`)
    const ended = await spool(["ralph", "x", "--change", "001-01", ...harness(slow), "--no-stream", "--deadline", "2s", "--notify", recorder], { cwd: late })
    expect(ended.code, ended.stderr).toBe(75)
    expect(notices(late).map((n) => [n.event, n.outcome])).toEqual([["deadline", "deadline"]])
  })

  it("Ctrl-C tells interrupted before spool exits 130", async () => {
    const root = makeWorkspace()
    const agent = agentScript(`console.log("working on it"); setTimeout(() => {}, 60_000)`)
    const run = startSpool(["ralph", "x", "--change", "001-01", ...harness(agent), "--notify", recorder], root)
    await run.waitFor("working on it")
    run.child.kill("SIGINT")
    const { code } = await run.done
    expect(code).toBe(130)
    expect(notices(root).map((n) => [n.event, n.change, n.outcome])).toEqual([["interrupted", "001-01_greeting-cli", "interrupted"]])
  })

  it("the settings file sets notify, webhook ($NAME: from the environment) and notify-on; an agent printing the URL has it redacted in the log", async () => {
    const hook = await receiver()
    try {
      const root = repository({ "001-01_set": {} }, {
        ".spool/config.json": JSON.stringify({ ralph: { notify: [recorder], webhook: ["$TEAM_HOOK"], "notify-on": "complete" } })
      })
      const agent = agentScript(`console.log("the hook is " + process.env.TEAM_HOOK + "\\nDone.\\n<promise>COMPLETE</promise>")`)
      const result = await spool(["ralph", "x", "--change", "001-01", ...harness(agent), "--no-stream"], { cwd: root, env: { TEAM_HOOK: hook.url } })
      expect(result.code, result.stderr).toBe(0)
      expect(notices(root).map((n) => n.event)).toEqual(["complete"])
      expect(hook.received.map((r) => r.body.event)).toEqual(["complete"])
      const json = JSON.parse((await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })).stdout)
      expect(json.settings.fromFile).toEqual(expect.arrayContaining(["notify", "webhook", "notify-on"]))
      const logs = readdirSync(join(stateDir(root, "001-01_set"), "logs"))
      const log = readFileSync(join(stateDir(root, "001-01_set"), "logs", logs[0]!), "utf8")
      expect(log).toContain("the hook is [REDACTED]")
      expect(filesUnder(root).filter(([, text]) => text.includes(TOKEN)).map(([path]) => path)).toEqual([])
    } finally {
      await hook.server.close()
    }
  })

  it("bad notification options are one spool: line each, exit 2, never showing a webhook's URL", async () => {
    const root = makeWorkspace()
    const bad = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
      const result = await spool(["ralph", "x", "--change", "001-01", "--harness", "command", "--harness-command", "true", ...args], { cwd: root, env })
      expect(result.code).toBe(2)
      expect(result.stdout).toBe("")
      expect(result.stderr.trim().split("\n")).toHaveLength(1)
      return result.stderr.trim()
    }
    const notUrl = await bad(["--webhook", `ftp://files.example.com/${TOKEN}`])
    expect(notUrl).toBe("spool: --webhook (the first) must be an http:// or https:// URL; the value is not shown, as a webhook's URL is a secret")
    expect(await bad(["--webhook", "https://a.example.com/x", "--webhook", `not a url ${TOKEN}`])).toContain("--webhook (the number 2) must be")
    expect(await bad(["--webhook", "$MISSING_HOOK"])).toBe(
      "spool: --webhook $MISSING_HOOK: the environment variable MISSING_HOOK is not set; export it with the webhook's URL"
    )
    expect(await bad(["--notify", "true", "--notify-on", "complete,finished"])).toContain("--notify-on: unknown event 'finished'")
    expect(await bad(["--notify-on", "complete"])).toBe(
      "spool: --notify-on goes with --notify or --webhook: spool ralph --webhook \"$SLACK_WEBHOOK_URL\" --notify-on complete,failed"
    )
    expect(await bad(["--notify", "  "])).toBe("spool: --notify needs a value, e.g. --notify \"./notify.sh\"")
    writeFileSync(join(root, ".spool", "config.json"), JSON.stringify({ ralph: { webhook: [`hooks.example.com/${TOKEN}`] } }))
    const fromFile = await bad([])
    expect(fromFile).toMatch(/^spool: \.spool\/config\.json, "ralph"\."webhook": --webhook \(the first\) must be an http/)
    expect(fromFile).not.toContain(TOKEN)
    // Nothing ran: no state was written.
    expect(existsSync(stateDir(root, "001-01_greeting-cli"))).toBe(false)
  })
})
