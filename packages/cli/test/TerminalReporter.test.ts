import { describe, expect, it } from "@effect/vitest"
import { lend } from "@spool/core"
import { Effect, Exit, Scope } from "effect"
import { colourEnabled } from "../src/Colour.js"
import { makeTerminal, type Output, statusLine } from "../src/TerminalReporter.js"

const stream = (isTTY: boolean) => {
  const chunks: Array<string> = []
  const write = (data: string | Uint8Array, done?: () => void) => {
    chunks.push(typeof data === "string" ? data : new TextDecoder().decode(data))
    done?.()
  }
  return { isTTY, chunks, write, text: () => chunks.join("") }
}

/** A terminal writing to `stdout` and `stderr` with one loop attached, as a run of one change has it. */
const makeTerminalReporter = (stdout: Output, stderr: Output, env: Record<string, string>) =>
  makeTerminal(stdout, stderr, env).attach("001-01_greeting-cli")

const usage = { inputTokens: 12_000, outputTokens: 3_200, reasoningTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0.42 }

/** Plays a short loop on a reporter writing to fake streams. */
const play = (isTTY: boolean, env: Record<string, string> = {}) => {
  const out = stream(isTTY)
  const err = stream(isTTY)
  const { service, close } = makeTerminalReporter(out, err, env)
  Effect.runSync(Effect.all([
    service.line("=== spool ralph: iteration 1/20 (elapsed 5ms) ==="),
    service.progress!({ iteration: 1, maxIterations: 20, usage: null }),
    service.write("first line of the agent\n"),
    service.progress!({ iteration: 1, maxIterations: 20, usage }),
    service.write("half a line"),
    service.write(", the rest\n"),
    service.warn("something to know"),
    service.line("--- iteration 1: exit 0 | 1.0s | promise found | 0 files changed | -> complete")
  ]))
  close()
  return { out: out.text(), err: err.text() }
}

describe("the terminal reporter", () => {
  it("writes an agent's bytes as they came, and knows whether they ended a line", () => {
    const out = stream(false)
    const { service, close } = makeTerminalReporter(out, stream(false), {})
    let done = false
    Effect.runSync(Effect.all([
      service.write(lend(new TextEncoder().encode("ünïcödé bytes, half"))),
      service.write(lend(new TextEncoder().encode(" a line\n"))),
      service.line("--- iteration 1"),
      Effect.sync(() => void (done = true))
    ]))
    close()
    expect(done).toBe(true)
    expect(out.text()).toBe("ünïcödé bytes, half a line\n--- iteration 1\n")
  })

  it("piped: plain lines, no status line, no escape sequences", () => {
    const { out, err } = play(false)
    expect(out).toBe(
      "=== spool ralph: iteration 1/20 (elapsed 5ms) ===\nfirst line of the agent\nhalf a line, the rest\n" +
        "--- iteration 1: exit 0 | 1.0s | promise found | 0 files changed | -> complete\n"
    )
    expect(err).toBe("warning: something to know\n")
  })

  it("on a terminal: a status line with iteration, elapsed time and spend below the agent's lines, erased before the next", () => {
    const { out } = play(true)
    expect(out).toContain("\x1b[")
    expect(out).toMatch(/\[spool\] iteration 1\/20 · \d+ms\x1b\[22m\r {26,}\rfirst line of the agent\n/)
    expect(out).toMatch(/\[spool\] iteration 1\/20 · \d+ms · \$0\.42 · 15\.2k tokens/)
    // Never in the middle of a line the agent has not finished.
    expect(out).toContain("half a line, the rest\n")
    // Erased when the loop ends.
    expect(out.endsWith("\r")).toBe(true)
  })

  it("on a terminal with NO_COLOR: the status line still, but no escape sequences", () => {
    const { out, err } = play(true, { NO_COLOR: "1" })
    expect(out).toContain("[spool] iteration 1/20")
    expect(out + err).not.toContain("\x1b")
  })

  it("with TERM=dumb: no status line and no escape sequences", () => {
    const { out } = play(true, { TERM: "dumb" })
    expect(out).not.toContain("[spool]")
    expect(out).not.toContain("\x1b")
  })

  it("piped with FORCE_COLOR: colour, but no status line", () => {
    const { out, err } = play(false, { FORCE_COLOR: "1" })
    expect(out).toContain("\x1b[32m--- iteration 1")
    expect(err).toContain("\x1b[33mwarning:")
    expect(out).not.toContain("[spool]")
  })

  it("says what is spent when the harness reports it: cost when known, tokens always", () => {
    expect(statusLine({ iteration: 3, maxIterations: 20, usage: null }, 252_000)).toBe("[spool] iteration 3/20 · 4m12s")
    expect(statusLine({ iteration: 3, maxIterations: 20, usage: { ...usage, cost: null } }, 1000)).toBe("[spool] iteration 3/20 · 1.0s · 15.2k tokens")
  })
})

/** What stays on screen: the status line drawn and erased in place taken out. */
const onScreen = (text: string) => text.replace(/\[spool\][^\r\n]*\r {2,}\r/g, "")
const utf8 = (text: string) => new TextEncoder().encode(text)

/** A terminal whose loops of `changeIds` run side by side, as a sweep with `--max-parallel` over 1 has it, until `done`. */
const sideBySide = (terminal: ReturnType<typeof makeTerminal>, changeIds: ReadonlyArray<string>) => {
  const scope = Effect.runSync(Scope.make())
  Effect.runSync(Scope.extend(terminal.sideBySide(changeIds), scope))
  return { done: () => Effect.runSync(Scope.close(scope, Exit.void)) }
}

describe("the terminal with loops side by side", () => {
  it("tells their lines apart by change, shows them in one status line, and goes on so with the one left when the other closes", () => {
    const out = stream(true)
    const err = stream(true)
    const terminal = makeTerminal(out, err, { NO_COLOR: "1" })
    const sweep = sideBySide(terminal, ["002-01_alpha", "003-01_beta"])
    const alpha = terminal.attach("002-01_alpha")
    const beta = terminal.attach("003-01_beta")
    Effect.runSync(Effect.all([
      alpha.service.progress!({ iteration: 1, maxIterations: 20, usage: null }),
      beta.service.progress!({ iteration: 2, maxIterations: 5, usage }),
      alpha.service.line("=== spool ralph: iteration 1/20 ==="),
      alpha.service.write("alpha says\nhalf a line"),
      beta.service.write(lend(utf8("beta says\nand more\n"))),
      alpha.service.write(", the rest\n"),
      beta.service.warn("something to know")
    ]))
    alpha.close()
    Effect.runSync(Effect.all([
      beta.service.progress!({ iteration: 3, maxIterations: 5, usage: null }),
      beta.service.line("--- iteration 3"),
      beta.service.write(lend(utf8("beta alone\n"))),
      beta.service.write("and its last words\n"),
      beta.service.warn("one more thing")
    ]))
    beta.close()
    sweep.done()

    expect(onScreen(out.text())).toBe(
      "[002-01] === spool ralph: iteration 1/20 ===\n[002-01] alpha says\n[002-01] half a line\n" +
        "[003-01] beta says\n[003-01] and more\n[002-01] , the rest\n" +
        "[003-01] --- iteration 3\n[003-01] beta alone\n[003-01] and its last words\n"
    )
    expect(err.text()).toBe("[003-01] warning: something to know\n[003-01] warning: one more thing\n")
    // One status line at a time, each erased before anything else is written.
    const statuses = out.text().match(/\[spool\][^\r\n]*/g) ?? []
    expect(statuses.length).toBe((out.text().match(/\[spool\][^\r\n]*\r {2,}\r/g) ?? []).length)
    expect(statuses).toContainEqual(expect.stringMatching(/^\[spool\] 002-01 iteration 1\/20 · \d+ms \| 003-01 iteration 2\/5 · \d+ms · \$0\.42 · 15\.2k tokens$/))
    // The one left is still named, as the sweep's loops are.
    expect(statuses).toContainEqual(expect.stringMatching(/^\[spool\] 003-01 iteration 3\/5 · \d+ms$/))
  })

  it("prefixes the first loop's lines before the next one starts, and a later loop's after the others ended", () => {
    const out = stream(false)
    const terminal = makeTerminal(out, stream(false), {})
    const sweep = sideBySide(terminal, ["001-01_alpha", "001-02_beta", "001-03_gamma"])
    const alpha = terminal.attach("001-01_alpha")
    Effect.runSync(alpha.service.line("alpha first"))
    const beta = terminal.attach("001-02_beta")
    Effect.runSync(Effect.all([alpha.service.line("alpha beside beta"), beta.service.line("beta beside alpha")]))
    alpha.close()
    beta.close()
    const gamma = terminal.attach("001-03_gamma")
    Effect.runSync(gamma.service.write("gamma last\n"))
    gamma.close()
    sweep.done()
    expect(out.text()).toBe("[001-01] alpha first\n[001-01] alpha beside beta\n[001-02] beta beside alpha\n[001-03] gamma last\n")
  })

  it("names loops by their whole change id when the sweep has changes of the same short id, whichever run at the moment", () => {
    const out = stream(false)
    const terminal = makeTerminal(out, stream(false), {})
    const sweep = sideBySide(terminal, ["002-01_alpha", "002-01_beta", "004-02_gamma"])
    const first = terminal.attach("002-01_alpha")
    const third = terminal.attach("004-02_gamma")
    Effect.runSync(Effect.all([first.service.line("one"), third.service.line("three")]))
    first.close()
    const second = terminal.attach("002-01_beta")
    Effect.runSync(second.service.line("two"))
    sweep.done()
    expect(out.text()).toBe("[002-01_alpha] one\n[004-02] three\n[002-01_beta] two\n")
  })

  it("prefixes nothing once the sweep is over, nor for loops run one at a time", () => {
    const out = stream(false)
    const terminal = makeTerminal(out, stream(false), {})
    const sweep = sideBySide(terminal, ["001-01_alpha"])
    sweep.done()
    const alpha = terminal.attach("001-01_alpha")
    Effect.runSync(alpha.service.write("alpha\n"))
    alpha.close()
    const beta = terminal.attach("001-02_beta")
    Effect.runSync(beta.service.line("beta"))
    expect(out.text()).toBe("alpha\nbeta\n")
  })
})

describe("colour", () => {
  it.each([
    [{ isTTY: true }, {}, true],
    [{ isTTY: false }, {}, false],
    [{}, {}, false],
    [{ isTTY: true }, { NO_COLOR: "1" }, false],
    [{ isTTY: true }, { NO_COLOR: "" }, true],
    [{ isTTY: true }, { TERM: "dumb" }, false],
    [{ isTTY: false }, { FORCE_COLOR: "1" }, true],
    [{ isTTY: true }, { NO_COLOR: "1", FORCE_COLOR: "1" }, true],
    [{ isTTY: true }, { FORCE_COLOR: "0" }, false]
  ])("stream %j with %j: colour %s", (stream, env, expected) => {
    expect(colourEnabled(stream, env)).toBe(expected)
  })
})
