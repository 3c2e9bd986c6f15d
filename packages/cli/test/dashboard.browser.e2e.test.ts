import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { agentScript, repositoryOf, startSpool } from "./support.js"

// Debian's chromium, driven by playwright-core: no browser is downloaded.
const CHROMIUM = "/usr/bin/chromium"
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
const docs = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "docs")

const alpha = "001-01_greet-cli"
const beta = "001-02_name-option"
const tasks = [
  "- [ ] 1.1 Add the greet() function",
  "- [ ] 1.2 Add the src/hello.js entry point",
  "- [ ] 1.3 Read the name from --name",
  "- [ ] 1.4 Greet in the user's language",
  "- [ ] 1.5 Add tests for greet()",
  "- [ ] 1.6 Document the usage in README.md"
].join("\n") + "\n"
/** The iteration at which the test looks: the agent waits there, five iterations recorded. */
const LOOK_AT = 6

/** Two changes with six tasks each, committed on `main`, in a directory named as a project is. */
const repository = () => {
  const root = join(realpathSync(mkdtempSync(join(tmpdir(), "spool-dashboard-browser-"))), "greeter")
  mkdirSync(root)
  return repositoryOf({ [alpha]: { "tasks.md": tasks }, [beta]: { "tasks.md": tasks } }, {}, root)
}

/**
 * Each iteration the agent works on the first open task: it says what it does (markup among it,
 * which must stay text), writes some files, prints its latest line, then waits for the test to open
 * its gate: the test sets the pace. Its third iteration fails (and is journaled); it ticks a task per
 * good iteration and completes once every task is done.
 */
const agentFor = (gates: string) =>
  agentScript(`
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const prompt = readFileSync(0, "utf8")
const id = process.env.SPOOL_CHANGE
const n = Number(process.env.SPOOL_ITERATION)
const file = ".spool/changes/" + id + "/tasks.md"
const task = readFileSync(file, "utf8").split("\\n").find((line) => line.startsWith("- [ ]")).slice(6)
console.log("[agent] iteration " + n + ": read a prompt of " + prompt.length + " characters")
console.log("[agent] working on task " + task)
await sleep(120 * ((n * 7) % 5))
mkdirSync("src", { recursive: true })
for (let i = 0; i <= (n * 5) % 4; i++) writeFileSync("src/part-" + n + "-" + i + ".js", "export const part = " + n + "\\n")
console.log("[agent] wrote src/banner.html: <script>window.__pwned=1</script><b>bold?</b>")
console.log("[agent] " + id + " iteration " + n + ": " + task.split(" ")[0] + " ready for review")
while (!existsSync(${JSON.stringify(gates)} + "/" + id + "-" + n)) await sleep(20)
if (n === 3) {
  console.error("[agent] test/greet.test.js: expected 'Hello, Ada!' but got 'Hello, undefined!'")
  process.exit(1)
}
writeFileSync(file, readFileSync(file, "utf8").replace("- [ ]", "- [x]"))
if (!readFileSync(file, "utf8").includes("- [ ]")) console.log("[agent] every task is done\\n<promise>COMPLETE</promise>")
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
      ["ralph", "--continue-ready", "--max-parallel", "2", "--serve", "--harness", "command", "--harness-command", agentFor(gates), "--no-interactive", "--max-iterations", "12"],
      root
    )
    await sweep.waitFor("dashboard: ")
    url = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(sweep.output())![1]!
    // `pnpm test` installs chromium first (scripts/system-packages.mjs): without it these tests fail.
    expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: install it with apt-get install -y chromium`).toBe(true)
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } })
    await page.goto(url)
    // Set in the page's window: still there at the end only if nothing reloaded the page.
    await page.evaluate("window.__sameDocument = true")
  })

  afterAll(async () => {
    for (const id of [alpha, beta]) for (let n = 1; n <= 12; n++) open(id, n)
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
    for (let n = 1; n <= LOOK_AT; n++) {
      await expect.poll(() => iteration.textContent(), { timeout: 60_000 }).toBe(`${n} of 12`)
      await expect.poll(() => bars.count(), { timeout: 60_000 }).toBe(n - 1)
      await expect.poll(() => output.textContent(), { timeout: 60_000 }).toMatch(new RegExp(`\\[agent\\] ${alpha} iteration ${n}: 1\\.\\d ready for review\\n$`))
      // The page is made once: its heading, and the first iteration's bar once drawn, stay the same nodes.
      if (n === 1) await page.evaluate("window.__heading = document.querySelector('h1.change-title')")
      if (n === 2) await page.evaluate("window.__firstBar = document.querySelector('[data-chart=duration] rect.bar')")
      if (n < LOOK_AT) open(alpha, n)
      // Beta moves on too, a little behind.
      if (n < LOOK_AT - 2) open(beta, n)
    }
    // The failed iteration is red in the charts, listed in the table and journaled.
    expect(await page.locator("[data-chart=duration] rect.bar.failed").count()).toBe(1)
    expect(await page.locator("[data-chart=files] rect.bar").count()).toBe(LOOK_AT - 1)
    await expect.poll(() => page.locator("[data-pane=journal]").textContent()).toContain("expected 'Hello, Ada!' but got 'Hello, undefined!'")
    expect(await page.locator("table.iterations tbody tr").count()).toBe(LOOK_AT - 1)
    // Updated in place, never rebuilt: the nodes marked above are still the page's.
    expect(await page.evaluate("window.__heading === document.querySelector('h1.change-title')")).toBe(true)
    expect(await page.evaluate("window.__firstBar === document.querySelector('[data-chart=duration] rect.bar')")).toBe(true)
    // One document all along: nothing reloaded the page.
    expect(await page.evaluate("window.__sameDocument")).toBe(true)
    expect(await page.evaluate("performance.getEntriesByType('navigation').length")).toBe(1)
  })

  it("shows what the agent prints as text, never as markup: its <script> does not run", async () => {
    const output = page.locator("[data-pane=output]")
    expect(await output.textContent()).toContain("[agent] wrote src/banner.html: <script>window.__pwned=1</script><b>bold?</b>")
    expect(await page.locator("[data-pane=output] script, [data-pane=output] b").count()).toBe(0)
    expect(await page.evaluate("typeof window.__pwned")).toBe("undefined")
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
    // Back to the list without a reload: both loops, alpha where the test holds it.
    await page.locator("a.back").click()
    await page.locator(`tr[data-change="${alpha}"]`).waitFor()
    expect(await page.locator(`tr[data-change="${alpha}"] td.num`).first().textContent()).toBe(`${LOOK_AT} of 12`)
    // Let both complete: the sweep ends well and the dashboard with it, the page showing how each loop ended.
    for (const id of [alpha, beta]) for (let n = 1; n <= 12; n++) open(id, n)
    expect((await sweep.done).code, sweep.output()).toBe(0)
    await page.locator(".connection.ended", { hasText: "run ended" }).waitFor()
    expect(await page.locator("tr[data-change] td:nth-child(2) .badge").evaluateAll((badges) => badges.map((badge) => badge.textContent))).toEqual(["complete", "complete"])
  })
})
