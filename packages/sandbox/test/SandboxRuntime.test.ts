import { Command, CommandExecutor } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Sandbox, sandboxedExecutor, type SandboxRules } from "@spool/core"
import { Effect, Stream } from "effect"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { innerScript, layer } from "../src/SandboxRuntime.js"

const rulesFor = (root: string): SandboxRules => {
  const work = join(root, "work")
  const tmp = join(root, "tmp")
  mkdirSync(work, { recursive: true })
  mkdirSync(tmp, { recursive: true })
  return {
    allowWrite: [work, tmp],
    denyWrite: [],
    denyRead: [join(root, "secret")],
    hosts: [],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, TMPDIR: tmp }
  }
}

const run = (rules: SandboxRules, cwd: string, argv: ReadonlyArray<string>) =>
  Effect.scoped(Effect.gen(function*() {
    const sandbox = yield* Sandbox
    const executor = sandboxedExecutor(yield* CommandExecutor.CommandExecutor, sandbox, rules)
    const proc = yield* executor.start(Command.make(argv[0]!, ...argv.slice(1)).pipe(Command.workingDirectory(cwd), Command.stdin(Stream.empty)))
    const [out, err] = yield* Effect.all([
      proc.stdout.pipe(Stream.decodeText(), Stream.mkString),
      proc.stderr.pipe(Stream.decodeText(), Stream.mkString)
    ], { concurrency: 2 })
    return { out, err, code: yield* proc.exitCode }
  }))

describe("the sandbox runtime", () => {
  it("names each word by a variable: the text run inside holds no word of the command", () => {
    const script = innerScript(3, false)
    expect(script).toBe(
      'export TMPDIR="$SPOOL_SANDBOX_TMPDIR"; set -- "$SPOOL_SANDBOX_WORD_0" "$SPOOL_SANDBOX_WORD_1" "$SPOOL_SANDBOX_WORD_2"; ' +
        "unset SPOOL_SANDBOX_TMPDIR SPOOL_SANDBOX_WORD_0 SPOOL_SANDBOX_WORD_1 SPOOL_SANDBOX_WORD_2; exec \"$@\""
    )
    expect(innerScript(1, true).startsWith("unset NO_PROXY no_proxy; ")).toBe(true)
  })

  it.effect("runs a command's words as given, none read by a shell, in the walls: its work tree written, nothing outside, no secret read", () =>
    Effect.gen(function*() {
      const root = realpathSync(mkdtempSync(join(tmpdir(), "spool-runtime-")))
      const rules = rulesFor(root)
      mkdirSync(join(root, "secret"))
      writeFileSync(join(root, "secret", "key"), "the-secret-key")
      const work = join(root, "work")
      const word = "$(touch pwned) `touch pwned2` 'quoted' \"double\"\nnext line"
      const script = [
        'printf "%s" "$1" > word.txt',
        `echo out > ${root}/outside.txt 2>/dev/null || echo "outside: refused"`,
        `cat ${root}/secret/key 2>/dev/null || echo "secret: refused"`,
        'echo "tmp=$TMPDIR"',
        'env | grep -c SPOOL_SANDBOX_ || true'
      ].join("\n")
      const { out, code } = yield* run(rules, work, ["bash", "-c", script, "agent", word])
      expect(code).toBe(0)
      expect(readFileSync(join(work, "word.txt"), "utf8")).toBe(word)
      expect(existsSync(join(work, "pwned"))).toBe(false)
      expect(existsSync(join(work, "pwned2"))).toBe(false)
      expect(existsSync(join(root, "outside.txt"))).toBe(false)
      expect(out).toContain("outside: refused")
      expect(out).toContain("secret: refused")
      expect(out).not.toContain("the-secret-key")
      expect(out).toContain(`tmp=${join(root, "tmp")}`)
      // The words' variables are gone before the command starts.
      expect(out.trim().split("\n").at(-1)).toBe("0")
    }).pipe(Effect.provide(layer), Effect.provide(NodeContext.layer)))

  it.effect("reaches no host when none is allowed", () =>
    Effect.gen(function*() {
      const root = realpathSync(mkdtempSync(join(tmpdir(), "spool-runtime-")))
      const { out } = yield* run(rulesFor(root), join(root, "work"), ["bash", "-c", "curl -s -m 5 -o /dev/null -w '%{http_code}' http://example.com/ || echo ' unreachable'"])
      expect(out).not.toMatch(/^200/)
    }).pipe(Effect.provide(layer), Effect.provide(NodeContext.layer)))
})
