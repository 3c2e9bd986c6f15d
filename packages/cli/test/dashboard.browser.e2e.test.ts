import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { agentScript, git, startSpool } from "./support.js"

// Debian's chromium, driven by playwright-core: no browser is downloaded.
const CHROMIUM = "/usr/bin/chromium"
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
const docs = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "docs")

const alpha = "001-01_alpha"
const beta = "001-02_beta"
const tasks = "- [ ] 1.1 Parse the greeting\n- [ ] 1.2 Print it\n- [ ] 1.3 Add the --name option\n- [ ] 1.4 Document it\n"

/** Two changes with four tasks each, committed on `main`. */
const repository = () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "spool-dashboard-browser-")))
  for (const id of [alpha, beta]) {
    mkdirSync(join(root, ".spool", "changes", id), { recursive: true })
    writeFileSync(join(root, ".spool", "changes", id, "proposal.md"), `# ${id}\n`)
    writeFileSync(join(root, ".spool", "changes", id, "tasks.md"), tasks)
  }
  writeFileSync(join(root, "README.md"), "hello\n")
  git(root, "init", "-q", "-b", "main")
  git(root, "config", "user.name", "Test")
  git(root, "config", "user.email", "test@example.invalid")
  git(root, "add", "-A")
  git(root, "commit", "-qm", "initial")
  return root
}

/**
 * Each iteration the agent says what it does, prints markup that must stay text, writes some files,
 * prints its latest line, then waits for the test to open its gate: the test sets the pace. Its
 * second iteration fails (and is journaled); it ticks a task per good iteration and completes at
 * its fourth.
 */
const agentFor = (gates: string) =>
  agentScript(`
import { existsSync, readFileSync, writeFileSync } from "node:fs"
readFileSync(0)
const id = process.env.SPOOL_CHANGE
const n = Number(process.env.SPOOL_ITERATION)
console.log("[agent] " + id + ": iteration " + n + ", reading the proposal and tasks.md")
console.log("<script>window.__pwned=1</script><b>bold?</b>")
for (let i = 0; i <= n % 3; i++) writeFileSync("work-" + n + "-" + i + ".txt", "iteration " + n + "\\n")
console.log("[agent] latest line of " + id + " iteration " + n)
while (!existsSync(${JSON.stringify(gates)} + "/" + id + "-" + n)) await new Promise((r) => setTimeout(r, 20))
if (n === 2) {
  console.error("[agent] test failed: expected 'Hello, Ada!' but got 'Hello, undefined!'")
  process.exit(1)
}
const file = ".spool/changes/" + id + "/tasks.md"
writeFileSync(file, readFileSync(file, "utf8").replace("- [ ]", "- [x]"))
if (n >= 4) console.log("every task is done\\n<promise>COMPLETE</promise>")
`)

describe("the dashboard in a real browser (headless chromium, the built spool, a sweep of two changes)", () => {
  let browser: Browser
  let page: Page
  let sweep: ReturnType<typeof startSpool>
  let url: string
  const gates = mkdtempSync(join(tmpdir(), "spool-gates-"))
  const open = (id: string, n: number) => writeFileSync(join(gates, `${id}-${n}`), "")

  beforeAll(async () => {
    const root = repository()
    sweep = startSpool(
      ["ralph", "--continue-ready", "--max-parallel", "2", "--serve", "--harness", "command", "--harness-command", agentFor(gates), "--no-interactive", "--max-iterations", "8"],
      root
    )
    await sweep.waitFor("dashboard: ")
    url = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(sweep.output())![1]!
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } })
    await page.goto(url)
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true))
  })

  afterAll(async () => {
    for (const id of [alpha, beta]) for (let n = 1; n <= 8; n++) open(id, n)
    await browser?.close()
    if (sweep !== undefined && sweep.child.exitCode === null) {
      const ended = await Promise.race([sweep.done, new Promise((r) => setTimeout(() => r(null), 60_000))])
      if (ended === null) sweep.child.kill("SIGKILL")
    }
  })

  it("lists the loops of the running sweep, both changes, as they run", async () => {
    for (const id of [alpha, beta]) {
      await page.locator(`tr[data-change="${id}"] .badge`, { hasText: "running" }).first().waitFor()
    }
    expect(await page.locator("tr[data-change]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-change")))).toEqual([alpha, beta])
    await page.locator(".connection.live").waitFor()
  })

  it("opens a change: its iteration count and its charts grow without a reload, the output pane shows the agent's latest line", async () => {
    await page.locator(`tr[data-change="${alpha}"] a`).click()
    await page.waitForURL(`${url}#/${alpha}`)
    const iteration = page.locator("[data-field=iteration]")
    const bars = page.locator("[data-chart=duration] rect.bar")
    const output = page.locator("[data-pane=output]")
    for (let n = 1; n <= 4; n++) {
      await expect.poll(() => iteration.textContent(), { timeout: 60_000 }).toBe(`${n} of 8`)
      await expect.poll(() => bars.count(), { timeout: 60_000 }).toBe(n - 1)
      await expect.poll(() => output.textContent(), { timeout: 60_000 }).toContain(`[agent] latest line of ${alpha} iteration ${n}`)
      if (n < 4) open(alpha, n)
      // Beta moves on too, one iteration behind.
      if (n < 3) open(beta, n)
    }
    // The failed iteration is red in the charts, listed in the table and journaled.
    expect(await page.locator("[data-chart=duration] rect.bar.failed").count()).toBe(1)
    expect(await page.locator("[data-chart=files] rect.bar").count()).toBe(3)
    await expect.poll(() => page.locator("[data-pane=journal]").textContent()).toContain("expected 'Hello, Ada!' but got 'Hello, undefined!'")
    expect(await page.locator("table.iterations tbody tr").count()).toBe(3)
    // One document all along: nothing reloaded the page.
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true)
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1)
  })

  it("shows what the agent prints as text, never as markup: its <script> does not run", async () => {
    const output = page.locator("[data-pane=output]")
    expect(await output.textContent()).toContain("<script>window.__pwned=1</script><b>bold?</b>")
    expect(await page.locator("[data-pane=output] script, [data-pane=output] b").count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined()
  })

  it("writes a screenshot of the page for a person to look at", async () => {
    // Beta's third iteration is under way too: the list behind this page is a sweep in full swing.
    await page.locator(".connection.live").waitFor()
    const shot = join(mkdtempSync(join(tmpdir(), "spool-dashboard-shot-")), "dashboard.png")
    await page.screenshot({ path: shot, fullPage: true })
    console.log(`dashboard screenshot: ${shot}`)
    if (process.env.SPOOL_SCREENSHOT) {
      mkdirSync(docs, { recursive: true })
      await page.screenshot({ path: join(docs, "dashboard.png"), fullPage: true })
    }
    // Back to the list without a reload: both loops, alpha at its fourth iteration.
    await page.locator("a.back").click()
    await page.locator(`tr[data-change="${alpha}"]`).waitFor()
    expect(await page.locator(`tr[data-change="${alpha}"] td.num`).first().textContent()).toBe("4 of 8")
    // Let both complete: the sweep ends well and the dashboard with it.
    for (const id of [alpha, beta]) for (let n = 1; n <= 8; n++) open(id, n)
    expect((await sweep.done).code, sweep.output()).toBe(0)
    await page.locator(".connection.reconnecting").waitFor()
  })
})
