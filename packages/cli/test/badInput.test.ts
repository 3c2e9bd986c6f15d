import { describe, expect, it } from "@effect/vitest"
import { CLAUDE_BIN } from "@spool/testkit/fakeAnthropicServer"
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join, relative } from "node:path"
import { addChange, git, makeWorkspace, spool, stateDir } from "./support.js"

/** Every file below `root` (but .git) with its content: "nothing was written" means this does not change. */
const snapshot = (root: string): Record<string, string> => {
  const files: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name)
      if (name === ".git" && dir === root) continue
      const info = statSync(full, { throwIfNoEntry: false })
      if (info?.isDirectory()) walk(full)
      else files[relative(root, full)] = info?.isFile() ? readFileSync(full, "latin1") : "(other)"
    }
  }
  walk(root)
  return files
}

/** The change's state directory as spool leaves it. */
const changeState = (root: string) => {
  const dir = stateDir(root, "001-01_greeting-cli")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(root, ".spool", ".state", ".gitignore"), "# spool loop state: never committed\n*\n")
  return dir
}
const proposal = (root: string) => join(root, ".spool", "changes", "001-01_greeting-cli", "proposal.md")
const outsideDir = mkdtempSync(join(tmpdir(), "spool-outside-target-"))
/** Writes `.spool/config.json` (text as it is, anything else as JSON) and commits it, as a repository keeps it. */
const settingsFile = (root: string, content: unknown) => {
  writeFileSync(join(root, ".spool", "config.json"), typeof content === "string" ? content : JSON.stringify(content, null, 2))
  git(root, "add", "-A")
  git(root, "commit", "-qm", "settings")
}

interface Case {
  readonly name: string
  readonly args: (root: string) => ReadonlyArray<string>
  readonly setup?: (root: string) => void
  readonly env?: Record<string, string>
  /** Run outside any spool workspace. */
  readonly outside?: boolean
  /** Run in a spool workspace that is no git repository. */
  readonly gitless?: boolean
  /** `args` is the whole command line, not the arguments of `spool ralph`. */
  readonly bare?: boolean
  readonly message: string | RegExp
  readonly code: number
}

const run = ["--harness", "command", "--harness-command", "node -e 0", "--no-interactive"]

const cases: ReadonlyArray<Case> = [
  { name: "unknown change", args: () => ["go", "--change", "999-99_nope", ...run], message: "unknown change '999-99_nope'; active changes: 001-01_greeting-cli", code: 2 },
  { name: "change without proposal.md", setup: (r) => void addChange(r, "001-02_empty", null), args: () => ["go", "--change", "001-02_empty", ...run], message: "change '001-02_empty' has no proposal.md", code: 2 },
  { name: "ambiguous prefix", setup: (r) => void addChange(r, "001-02_other"), args: () => ["go", "--change", "001-0", ...run], message: "change '001-0' is ambiguous; it matches: 001-01_greeting-cli, 001-02_other", code: 2 },
  { name: "change id with a slash", args: () => ["go", "--change", "../001-01_greeting-cli", ...run], message: "invalid change id '../001-01_greeting-cli'", code: 2 },
  { name: "change id with a backslash", args: () => ["go", "--change", "001-01\\x", ...run], message: "invalid change id", code: 2 },
  { name: "change id with ..", args: () => ["go", "--change", "001..01", ...run], message: "invalid change id '001..01'", code: 2 },
  { name: "absolute path as change id", args: () => ["go", "--change", "/etc/passwd", ...run], message: "invalid change id '/etc/passwd'", code: 2 },
  { name: "no .spool/ found", outside: true, args: () => ["go", "--change", "001-01", ...run], message: /no \.spool\/ directory \(nor \.ito\/, openspec\/ or \.specify\/\) found in .* or any parent directory; run spool in your repository, or start one with: mkdir -p \.spool\/changes\/001-01_my-change && echo '# My change' > \.spool\/changes\/001-01_my-change\/proposal\.md$/, code: 2 },
  { name: "no active change", setup: (r) => rmSync(join(r, ".spool", "changes", "001-01_greeting-cli"), { recursive: true }), args: () => ["go", ...run], message: "there are no active changes under .spool/changes/; start one with: mkdir -p .spool/changes/001-01_my-change && echo '# My change' > .spool/changes/001-01_my-change/proposal.md", code: 2 },
  { name: "prompt given twice", setup: (r) => writeFileSync(join(r, "p.txt"), "do it"), args: (r) => ["go", "--prompt-file", join(r, "p.txt"), "--change", "001-01", ...run], message: "give the prompt either as arguments or with --prompt-file, not both", code: 2 },
  { name: "missing prompt file", args: (r) => ["--prompt-file", join(r, "missing.txt"), "--change", "001-01", ...run], message: /--prompt-file .*missing\.txt does not exist; check the path/, code: 2 },
  { name: "prompt file is a directory", setup: (r) => mkdirSync(join(r, "adir")), args: (r) => ["--prompt-file", join(r, "adir"), "--change", "001-01", ...run], message: /--prompt-file: cannot read .*adir: it is a directory/, code: 2 },
  { name: "empty prompt file", setup: (r) => writeFileSync(join(r, "empty.txt"), " \n"), args: (r) => ["--prompt-file", join(r, "empty.txt"), "--change", "001-01", ...run], message: /--prompt-file .*empty\.txt is empty/, code: 2 },
  { name: "non-numeric --max-iterations", args: () => ["go", "--change", "001-01", "--max-iterations", "ten", ...run], message: "--max-iterations must be a positive whole number, got 'ten'; e.g. --max-iterations 20", code: 2 },
  { name: "zero --max-iterations", args: () => ["go", "--change", "001-01", "--max-iterations", "0", ...run], message: "--max-iterations must be a positive whole number", code: 2 },
  { name: "zero --min-iterations", args: () => ["go", "--change", "001-01", "--min-iterations", "0", ...run], message: "--min-iterations must be a positive whole number", code: 2 },
  { name: "fractional --min-iterations", args: () => ["go", "--change", "001-01", "--min-iterations", "1.5", ...run], message: "--min-iterations must be a positive whole number, got '1.5'", code: 2 },
  { name: "--min-iterations above --max-iterations", args: () => ["go", "--change", "001-01", "--min-iterations", "5", "--max-iterations", "3", ...run], message: "--min-iterations (5) must not be above the maximum number of iterations (3)", code: 2 },
  { name: "unknown harness", args: () => ["go", "--change", "001-01", "--harness", "nope", "--no-interactive"], message: "unknown harness 'nope'; known harnesses: opencode, claude, codex, gemini, pi, copilot, qwen, command", code: 2 },
  { name: "empty --completion-promise", args: () => ["go", "--change", "001-01", "--completion-promise", "", ...run], message: "--completion-promise must not be empty", code: 2 },
  { name: "blank --completion-promise", args: () => ["go", "--change", "001-01", "--completion-promise", "   ", ...run], message: "--completion-promise must not be empty", code: 2 },
  { name: "--completion-promise with a tag character", args: () => ["go", "--change", "001-01", "--completion-promise", "</promise>", ...run], message: "--completion-promise must not contain '<' or '>'", code: 2 },
  { name: "--add-context with empty text", args: () => ["--add-context", "", "--change", "001-01"], message: "--add-context needs some text", code: 2 },
  { name: "--add-context with blank text", args: () => ["--add-context", "  \n ", "--change", "001-01"], message: "--add-context needs some text", code: 2 },
  { name: "no --change without a terminal", args: () => ["go", ...run], message: "--change is required when spool cannot ask (no terminal, --no-interactive or CI); active changes: 001-01_greeting-cli", code: 2 },
  { name: "no --change under CI", env: { CI: "true" }, args: () => ["go", "--harness", "command", "--harness-command", "node -e 0"], message: "--change is required when spool cannot ask", code: 2 },
  { name: "unknown option", args: () => ["go", "--change", "001-01", "--max-iteration", "3", ...run], message: "unknown option '--max-iteration'; did you mean --max-iterations?", code: 2 },
  { name: "option missing its value", args: () => ["--change"], message: "--change needs a value, e.g. --change 002-01", code: 2 },
  // The command line itself: every mistake names what to do, exits 2 and writes nothing.
  { name: "unknown command close to one", bare: true, args: () => ["ralf", "go"], message: "unknown command 'ralf'; did you mean spool ralph?", code: 2 },
  { name: "unknown command close to the alias", bare: true, args: () => ["lop"], message: "unknown command 'lop'; did you mean spool loop?", code: 2 },
  { name: "unknown command far from any", bare: true, args: () => ["deploy"], message: "unknown command 'deploy'; the commands are ralph, loop (see spool --help)", code: 2 },
  { name: "unknown option before the command", bare: true, args: () => ["--verison"], message: "unknown option '--verison'; did you mean --version?", code: 2 },
  { name: "a command's option before the command", bare: true, args: () => ["--change", "001-01", "ralph"], message: "--change goes after the command: spool ralph --change ...", code: 2 },
  { name: "--completions without a shell", bare: true, args: () => ["--completions"], message: "--completions needs a shell: bash, zsh, fish, e.g. spool --completions bash", code: 2 },
  { name: "--completions for an unknown shell", bare: true, args: () => ["--completions", "tcsh"], message: "--completions needs a shell: bash, zsh, fish", code: 2 },
  { name: "--completions after the command", args: () => ["--completions", "bash"], message: "--completions goes before the command: spool --completions ...", code: 2 },
  { name: "unknown option of loop", bare: true, args: () => ["loop", "--chnage", "001-01"], message: "unknown option '--chnage'; did you mean --change?", code: 2 },
  { name: "option in the wrong case", args: () => ["--Change", "001-01"], message: "unknown option '--Change'; did you mean --change?", code: 2 },
  { name: "unknown short option", args: () => ["-x", "--change", "001-01", ...run], message: "unknown option '-x'; see spool ralph --help (prompt words that start with '-' go after --)", code: 2 },
  { name: "option far from any", args: () => ["--frobnicate", "--change", "001-01", ...run], message: "unknown option '--frobnicate'; see spool ralph --help", code: 2 },
  { name: "@effect/cli's --wizard is not spool's", args: () => ["--wizard"], message: "unknown option '--wizard'", code: 2 },
  { name: "a switch given a value", args: () => ["go", "--change", "001-01", "--allow-all=maybe", ...run], message: "--allow-all takes no value; write --allow-all alone, without '=maybe'", code: 2 },
  { name: "a switch given true", args: () => ["--status=true", "--change", "001-01"], message: "--status takes no value; write --status alone, without '=true'", code: 2 },
  { name: "an alias of a switch given a value", args: () => ["go", "--change", "001-01", "--yolo=no", ...run], message: "--yolo takes no value", code: 2 },
  { name: "option given twice", args: () => ["go", "--change", "001-01", "--module", "001", "--module", "001", ...run], message: "--module is given twice; give it once", code: 2 },
  { name: "a switch and its alias", args: () => ["go", "--change", "001-01", "--allow-all", "--yolo", ...run], message: "--allow-all and --yolo are the same option; give it once", code: 2 },
  { name: "value option followed by another option", args: () => ["go", "--change", "--no-interactive"], message: "--change needs a value, e.g. --change 002-01", code: 2 },
  { name: "short option missing its value", args: () => ["go", "-c"], message: "-c needs a value, e.g. --change 002-01", code: 2 },
  { name: "value option with = and a bad number", args: () => ["go", "--change", "001-01", "--history-commits=many", ...run], message: "--history-commits must be a whole number (0 or more), got 'many'; e.g. --history-commits 10", code: 2 },
  { name: "command harness without a command", args: () => ["go", "--change", "001-01", "--harness", "command", "--no-interactive"], message: "--harness command needs --harness-command", code: 2 },
  { name: "harness command with an open quote", args: () => ["go", "--change", "001-01", "--harness", "command", "--harness-command", "node 'x", "--no-interactive"], message: "--harness-command has an unterminated quote", code: 2 },
  { name: "bad --inactivity-timeout", args: () => ["go", "--change", "001-01", "--inactivity-timeout", "5 minutes", ...run], message: "--inactivity-timeout must be a duration like 30s, 5m, 1h30m or 2d, got '5 minutes'", code: 2 },
  // The guards: caps and breakers that make no sense, or a cap the harness cannot report.
  ...["0", "-1", "$5", "NaN", "1e3", "five"].map((value) => ({ name: `--max-cost ${value}`, args: () => ["go", "--change", "001-01", "--max-cost", value, ...run], message: `--max-cost must be an amount of US dollars above 0, without a '$' (like 5 or 2.50), got '${value}'`, code: 2 })),
  { name: "fractional --max-tokens", args: () => ["go", "--change", "001-01", "--max-tokens", "1.5", ...run], message: "--max-tokens must be a positive whole number, got '1.5'; e.g. --max-tokens 2000000", code: 2 },
  { name: "zero --max-tokens", args: () => ["go", "--change", "001-01", "--max-tokens", "0", ...run], message: "--max-tokens must be a positive whole number, got '0'", code: 2 },
  { name: "--max-limit-wait over a week", args: () => ["go", "--change", "001-01", "--max-limit-wait", "30d", ...run], message: "--max-limit-wait must be at most 7d, got '30d'", code: 2 },
  { name: "bad --max-limit-wait", args: () => ["go", "--change", "001-01", "--max-limit-wait", "soon", ...run], message: "--max-limit-wait must be a duration like 30s, 5m, 1h30m or 2d (or 0), got 'soon'", code: 2 },
  { name: "zero --max-duration", args: () => ["go", "--change", "001-01", "--max-duration", "0", ...run], message: "--max-duration must be a duration like 30s, 5m, 1h30m or 2d, got '0'", code: 2 },
  { name: "negative --stall-iterations", args: () => ["go", "--change", "001-01", "--stall-iterations", "-1", ...run], message: "--stall-iterations must be a whole number (0 or more), got '-1'; e.g. --stall-iterations 5", code: 2 },
  { name: "negative --max-consecutive-failures", args: () => ["go", "--change", "001-01", "--max-consecutive-failures", "-1", ...run], message: "--max-consecutive-failures must be a whole number (0 or more), got '-1'; e.g. --max-consecutive-failures 5", code: 2 },
  { name: "--fail-fast with the failure breaker off", args: () => ["go", "--change", "001-01", "--fail-fast", "--max-consecutive-failures", "0", ...run], message: "--fail-fast means --max-consecutive-failures 1, not 0; give one of them", code: 2 },
  { name: "--fail-fast with another failure count", args: () => ["go", "--change", "001-01", "--fail-fast", "--max-consecutive-failures", "3", ...run], message: "--fail-fast means --max-consecutive-failures 1, not 3; give one of them", code: 2 },
  { name: "--max-cost with the command harness", args: () => ["go", "--change", "001-01", "--max-cost", "5", ...run], message: "--max-cost needs a harness that reports cost, and the command harness does not; drop --max-cost, or cap --max-tokens or --max-duration instead", code: 2 },
  { name: "--max-tokens with the command harness", args: () => ["go", "--change", "001-01", "--max-tokens", "1000", ...run], message: "--max-tokens needs a harness that reports tokens, and the command harness does not", code: 2 },
  { name: "bad --history-commits", args: () => ["go", "--change", "001-01", "--history-commits", "-"], message: "--history-commits must be a whole number", code: 2 },
  { name: "a count too large to be exact", args: () => ["go", "--change", "001-01", "--max-iterations", "99999999999999999999999", ...run], message: "--max-iterations must be a positive whole number, got '99999999999999999999999'; e.g. --max-iterations 20", code: 2 },
  { name: "bad --error-history", args: () => ["go", "--change", "001-01", "--error-history", "some", ...run], message: "--error-history must be a whole number (0 or more), got 'some'", code: 2 },
  { name: "--json without --status", args: () => ["--json", "--change", "001-01"], message: "--json goes with --status or --list: spool ralph --list --json", code: 2 },
  { name: "two modes at once", args: () => ["--status", "--clear-context", "--change", "001-01"], message: "use only one of --status, --list, --add-context, --clear-context, --remove, --approve and --reject at a time", code: 2 },
  { name: "--remove without --worktree", args: () => ["--remove", "--change", "001-01"], message: "--remove goes with --worktree: spool ralph --change <id> --worktree --remove", code: 2 },
  { name: "--lease-ttl without --remote", args: () => ["go", "--change", "001-01", "--lease-ttl", "30m", ...run], message: "--lease-ttl goes with --remote: spool ralph --change <id> --remote origin --lease-ttl 30m", code: 2 },
  { name: "--lease-ttl without --remote in a sweep", args: () => ["go", "--continue-ready", "--lease-ttl", "30m", ...run], message: "--lease-ttl goes with --remote: spool ralph --change <id> --remote origin --lease-ttl 30m", code: 2 },
  { name: "--max-parallel 2 outside a git repository", gitless: true, args: () => ["go", "--continue-ready", "--max-parallel", "2", ...run], message: /^spool: --max-parallel 2 runs each loop in a git worktree of its own, and \S+ is not inside a git repository; run git init and commit, or sweep one change at a time \(--max-parallel 1\)$/, code: 2 },
  { name: "--remove with no worktree", args: () => ["--worktree", "--remove", "--change", "001-01"], message: /^spool: change 001-01_greeting-cli has no worktree at .*\.spool\/\.state\/worktrees\/001-01_greeting-cli; nothing to remove$/, code: 2 },
  { name: "--remove while a loop runs on the change", setup: (r) => writeFileSync(join(changeState(r), "lock"), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: "2026-11-22T01:00:00.000Z" })), args: () => ["--worktree", "--remove", "--change", "001-01"], message: `a loop is running on 001-01_greeting-cli (pid ${process.pid}); stop it before removing its worktree`, code: 2 },
  { name: "--worktree on an uncommitted change", setup: (r) => void addChange(r, "001-02_draft"), args: () => ["go", "--change", "001-02", "--worktree", ...run], message: ".spool/changes/001-02_draft/proposal.md is not committed in HEAD, and the worktree is a checkout of it; commit the change first", code: 2 },
  { name: "--module that does not own the change", args: () => ["go", "--change", "001-01", "--module", "002", ...run], message: "change 001-01_greeting-cli belongs to module 001, not 002", code: 2 },
  { name: "--module with no active changes", args: () => ["go", "--module", "007", ...run], message: "module 007 has no active changes; active changes: 001-01_greeting-cli", code: 2 },
  { name: "damaged state.json", setup: (r) => writeFileSync(join(changeState(r), "state.json"), "{\"changeId\": \"001-01_greeting-cli\", \"run\":"), args: () => ["--status", "--change", "001-01"], message: /state\.json is damaged: .* \(fix or delete the file\)/, code: 1 },
  { name: "binary context.txt", setup: (r) => writeFileSync(join(changeState(r), "context.txt"), Buffer.from([0x89, 0x50, 0x00, 0x00, 0xff])), args: () => ["go", "--change", "001-01", ...run], message: /context\.txt is not a text file .*--clear-context/, code: 1 },
  { name: "huge context.txt", setup: (r) => writeFileSync(join(changeState(r), "context.txt"), "x".repeat(2 * 1024 * 1024)), args: () => ["go", "--change", "001-01", ...run], message: /context\.txt is too large: 2097152 bytes, over the limit of 1048576/, code: 1 },
  { name: "binary proposal.md", setup: (r) => writeFileSync(proposal(r), Buffer.from("# P\u0000\u0001")), args: () => ["go", "--change", "001-01", ...run], message: /proposal\.md is not a text file/, code: 1 },
  { name: "huge proposal.md", setup: (r) => writeFileSync(proposal(r), "p".repeat(9 * 1024 * 1024)), args: () => ["go", "--change", "001-01", ...run], message: /proposal\.md is too large/, code: 1 },
  { name: "binary prompt file", setup: (r) => writeFileSync(join(r, "p.bin"), Buffer.from([0, 1, 2])), args: (r) => ["--prompt-file", join(r, "p.bin"), "--change", "001-01", ...run], message: /--prompt-file: .*p\.bin is not a text file/, code: 2 },
  { name: "state directory cannot be made (.spool/.state is a file)", setup: (r) => writeFileSync(join(r, ".spool", ".state"), "not a directory"), args: () => ["go", "--change", "001-01", ...run], message: /cannot read .*\.spool\/\.state\/ralph\/001-01_greeting-cli\/context\.txt: a parent path is not a directory/, code: 1 },
  { name: "state directory is a symlink out of the repository", setup: (r) => symlinkSync(outsideDir, join(r, ".spool", ".state")), args: () => ["go", "--change", "001-01", ...run], message: /\.state\/ralph\/001-01_greeting-cli leads outside the repository \(it resolves to .*spool-outside-target-/, code: 1 },
  { name: "change directory is a symlink out of the repository", setup: (r) => { const target = mkdtempSync(join(tmpdir(), "spool-evil-")); writeFileSync(join(target, "proposal.md"), "# evil\n"); symlinkSync(target, join(r, ".spool", "changes", "009-01_evil")) }, args: () => ["go", "--change", "009-01_evil", ...run], message: "change '009-01_evil' leads outside the repository", code: 2 },
  { name: "--module that is not a module id", args: () => ["go", "--module", "../002", ...run], message: "invalid module id '../002': use the module's number, e.g. --module 002", code: 2 },
  { name: "a loop already runs on the change", setup: (r) => writeFileSync(join(changeState(r), "lock"), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: "2026-11-22T01:00:00.000Z" })), args: () => ["go", "--change", "001-01", ...run], message: /a loop is already running on 001-01_greeting-cli \(pid \d+ on .*, since 2026-11-22T01:00:00\.000Z\); see spool ralph --status --change 001-01_greeting-cli/, code: 73 },
  { name: "SPOOL_OPENCODE_BIN names no file", env: { SPOOL_OPENCODE_BIN: "/nonexistent/opencode" }, args: () => ["go", "--change", "001-01", "--no-interactive"], message: "SPOOL_OPENCODE_BIN is '/nonexistent/opencode', which does not exist; install it with `npm install -g opencode-ai`", code: 1 },
  { name: "opencode not on PATH", env: { PATH: "/nonexistent-bin" }, args: () => ["go", "--change", "001-01", "--no-interactive"], message: "opencode harness cannot start: 'opencode' was not found on PATH; install it with `npm install -g opencode-ai`", code: 1 },
  { name: "--worktree with an agent that cannot start", env: { PATH: "/nonexistent-bin" }, args: () => ["go", "--change", "001-01", "--worktree", "--no-interactive"], message: "opencode harness cannot start: 'opencode' was not found on PATH; install it with `npm install -g opencode-ai`", code: 1 },
  { name: "SPOOL_CLAUDE_BIN names no file", env: { SPOOL_CLAUDE_BIN: "/nonexistent/claude" }, args: () => ["go", "--change", "001-01", "--harness", "claude", "--no-interactive"], message: "SPOOL_CLAUDE_BIN is '/nonexistent/claude', which does not exist; install it with `npm install -g @anthropic-ai/claude-code`", code: 1 },
  { name: "claude not on PATH", env: { PATH: "/nonexistent-bin" }, args: () => ["go", "--change", "001-01", "--harness", "claude", "--no-interactive"], message: "claude harness cannot start: 'claude' was not found on PATH; install it with `npm install -g @anthropic-ai/claude-code`", code: 1 },
  // claude refuses --dangerously-skip-permissions as root: only a root user can see spool say so first.
  ...(process.getuid?.() === 0
    ? [{ name: "claude --allow-all as root without IS_SANDBOX=1", env: { SPOOL_CLAUDE_BIN: CLAUDE_BIN, IS_SANDBOX: "" }, args: () => ["go", "--change", "001-01", "--harness", "claude", "--allow-all", "--no-interactive"], message: "claude harness cannot start: --allow-all: claude refuses --dangerously-skip-permissions as root; set IS_SANDBOX=1 if this machine is a sandbox, or run as a non-root user", code: 1 }]
    : []),
  { name: "harness program not executable", setup: (r) => { writeFileSync(join(r, "agent.sh"), "echo hi\n"); chmodSync(join(r, "agent.sh"), 0o644) }, args: (r) => ["go", "--change", "001-01", "--harness", "command", "--harness-command", join(r, "agent.sh"), "--no-interactive"], message: /command harness cannot start: '.*agent\.sh' is not executable \(chmod \+x it\)/, code: 1 },
  // The sandbox's options: a host, a name or a path that cannot be one, or one without --sandbox.
  { name: "--allow-host without --sandbox", args: () => ["go", "--change", "001-01", "--allow-host", "example.com", ...run], message: "--allow-host goes with --sandbox: spool ralph --sandbox --allow-host registry.npmjs.org ...", code: 2 },
  { name: "--pass-env without --sandbox", args: () => ["go", "--change", "001-01", "--pass-env", "NPM_TOKEN", ...run], message: "--pass-env goes with --sandbox: spool ralph --sandbox --pass-env NPM_TOKEN ...", code: 2 },
  { name: "--allow-host that is a URL", args: () => ["go", "--change", "001-01", "--sandbox", "--allow-host", "https://example.com/x", ...run], message: "--allow-host takes a host name or address, with a port if you like (registry.npmjs.org, 127.0.0.1:8080), got 'https://example.com/x'", code: 2 },
  { name: "--allow-host of every host", args: () => ["go", "--change", "001-01", "--sandbox", "--allow-host", "*", ...run], message: "--allow-host takes a host name or address, with a port if you like (registry.npmjs.org, 127.0.0.1:8080), got '*'", code: 2 },
  { name: "--allow-host with a port out of range", args: () => ["go", "--change", "001-01", "--sandbox", "--allow-host", "127.0.0.1:70000", ...run], message: "--allow-host takes a host name or address, with a port if you like (registry.npmjs.org, 127.0.0.1:8080), got '127.0.0.1:70000'", code: 2 },
  { name: "--pass-env that is not a name", args: () => ["go", "--change", "001-01", "--sandbox", "--pass-env", "A=B", ...run], message: "--pass-env takes a variable's name (NPM_TOKEN) or a prefix of names (NPM_*), got 'A=B'", code: 2 },
  { name: "--pass-env of every variable", args: () => ["go", "--change", "001-01", "--sandbox", "--pass-env", "*", ...run], message: "--pass-env takes a variable's name (NPM_TOKEN) or a prefix of names (NPM_*), got '*'", code: 2 },
  { name: "settings file's allow-host without sandbox", setup: (r) => settingsFile(r, { ralph: { "allow-host": ["example.com"] } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json, \"ralph\".\"allow-host\": --allow-host goes with --sandbox: spool ralph --sandbox --allow-host registry.npmjs.org ...", code: 2 },
  // --verify, and the settings file: its mistakes name the file and the key, and nothing runs.
  { name: "blank --verify", args: () => ["go", "--change", "001-01", "--verify", " ", ...run], message: "--verify needs a value, e.g. --verify \"pnpm test\"", code: 2 },
  { name: "empty --verify", args: () => ["go", "--change", "001-01", "--verify", "", ...run], message: "--verify needs a value, e.g. --verify \"pnpm test\"", code: 2 },
  // --fallback: an empty agent is the command line's mistake; what the agents are, the app checks.
  { name: "empty --fallback", args: () => ["go", "--change", "001-01", "--fallback", "", ...run], message: "--fallback needs a value, e.g. --fallback codex:gpt-5.5", code: 2 },
  { name: "blank --fallback", args: () => ["go", "--change", "001-01", "--fallback", "  ", ...run], message: "--fallback needs a value, e.g. --fallback codex:gpt-5.5", code: 2 },
  { name: "--fallback with an unknown harness", args: () => ["go", "--change", "001-01", "--fallback", "nope:fast", ...run], message: "--fallback 'nope:fast': unknown harness 'nope'; known harnesses: opencode, claude, codex, gemini, pi, copilot, qwen, command", code: 2 },
  { name: "--fallback naming the loop's own agent", args: () => ["go", "--change", "001-01", "--harness", "claude", "--fallback", "claude", "--no-interactive"], message: "--fallback names claude twice (the loop's --harness/--model is the first agent); give each agent once", code: 2 },
  { name: "--fallback naming an agent twice", args: () => ["go", "--change", "001-01", "--fallback", "codex:gpt-5.5", "--fallback", "codex:gpt-5.5", ...run], message: "--fallback names codex:gpt-5.5 twice", code: 2 },
  { name: "--fallback command without its command line", args: () => ["go", "--change", "001-01", "--fallback", "command", ...run], message: "--fallback command needs its command line in the model's place: --fallback 'command:<program> <args>'", code: 2 },
  { name: "--rotate without --fallback", args: () => ["go", "--change", "001-01", "--rotate", ...run], message: "--rotate takes the loop's agent and its fallbacks in turn; name one with --fallback <harness>[:<model>]", code: 2 },
  // --review: reviewers are named as fallbacks are, and checked before anything runs.
  { name: "--review with an unknown harness", args: () => ["go", "--change", "001-01", "--review", "nope", ...run], message: "--review 'nope': unknown harness 'nope'; known harnesses: opencode, claude, codex, gemini, pi, copilot, qwen, command", code: 2 },
  { name: "--review naming a reviewer twice", args: () => ["go", "--change", "001-01", "--review", "codex", "--review", "codex", ...run], message: "--review names codex twice; give each reviewer once", code: 2 },
  { name: "--review command without its command line", args: () => ["go", "--change", "001-01", "--review", "command", ...run], message: "--review command needs its command line in the model's place: --review 'command:<program> <args>'", code: 2 },
  { name: "zero --max-reviews", args: () => ["go", "--change", "001-01", "--review", "codex", "--max-reviews", "0", ...run], message: "--max-reviews must be a positive whole number", code: 2 },
  { name: "--review outside a git repository", gitless: true, args: () => ["go", "--change", "001-01", "--review", "command:node -e 0", ...run], message: "--review reads the work under review from git: run it in a git repository (git init, then commit)", code: 2 },
  { name: "--review whose binary SPOOL_CODEX_BIN names no file", env: { SPOOL_CODEX_BIN: "/nonexistent/codex" }, args: () => ["go", "--change", "001-01", "--review", "codex", ...run], message: "SPOOL_CODEX_BIN is '/nonexistent/codex', which does not exist; install it with `npm install -g @openai/codex`", code: 1 },
  // A fallback is checked as the loop's own agent is, before the first iteration: the same line, the same exit code.
  { name: "--fallback whose binary SPOOL_CODEX_BIN names no file", env: { SPOOL_CODEX_BIN: "/nonexistent/codex" }, args: () => ["go", "--change", "001-01", "--fallback", "codex", ...run], message: "SPOOL_CODEX_BIN is '/nonexistent/codex', which does not exist; install it with `npm install -g @openai/codex`", code: 1 },
  { name: "SPOOL_CODEX_BIN names no file", env: { SPOOL_CODEX_BIN: "/nonexistent/codex" }, args: () => ["go", "--change", "001-01", "--harness", "codex", "--no-interactive"], message: "SPOOL_CODEX_BIN is '/nonexistent/codex', which does not exist; install it with `npm install -g @openai/codex`", code: 1 },
  { name: "settings file with an empty list of fallback agents", setup: (r) => settingsFile(r, { ralph: { fallback: [] } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\".\"fallback\" must be a list of strings (not empty), e.g. [codex:gpt-5.5], got []", code: 2 },
  { name: "settings file with rotate that is no switch", setup: (r) => settingsFile(r, { ralph: { fallback: "codex", rotate: "yes" } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\".\"rotate\" must be true or false, got \"yes\"", code: 2 },
  { name: "bad --verify-timeout", args: () => ["go", "--change", "001-01", "--verify", "true", "--verify-timeout", "ten minutes", ...run], message: "--verify-timeout must be a duration like 30s, 5m, 1h30m or 2d, got 'ten minutes'", code: 2 },
  { name: "settings file that is not JSON", setup: (r) => settingsFile(r, "{\"ralph\": {\"verify\": [\"pnpm test\"],}}"), args: () => ["go", "--change", "001-01", ...run], message: /^spool: \.spool\/config\.json is not valid JSON \(.*\); fix the file$/, code: 2 },
  { name: "settings file with an unknown key", setup: (r) => settingsFile(r, { tools: {}, ralph: { "max-iteration": 3 } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: unknown key \"ralph\".\"max-iteration\"; did you mean \"max-iterations\"?", code: 2 },
  { name: "settings file with a key like no option", setup: (r) => settingsFile(r, { ralph: { colour: "always" } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: unknown key \"ralph\".\"colour\"; the keys are the long options of spool ralph without the leading --", code: 2 },
  { name: "settings file with a number of the wrong kind", setup: (r) => settingsFile(r, { ralph: { "max-iterations": true } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\".\"max-iterations\" must be a string or a number, e.g. 20, got true", code: 2 },
  { name: "settings file with a switch of the wrong kind", setup: (r) => settingsFile(r, { ralph: { "no-commit": "yes" } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\".\"no-commit\" must be true or false, got \"yes\"", code: 2 },
  { name: "settings file with a list of the wrong kind", setup: (r) => settingsFile(r, { ralph: { verify: ["pnpm test", 3] } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\".\"verify\" must be a list of strings (not empty), e.g. [\"pnpm test\"], got [\"pnpm test\",3]", code: 2 },
  { name: "settings file with an action", setup: (r) => settingsFile(r, { ralph: { status: true } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\".\"status\" is an action, not a setting; give --status on the command line", code: 2 },
  { name: "settings file whose ralph section is not an object", setup: (r) => settingsFile(r, { ralph: ["--verify", "pnpm test"] }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\" must be an object of spool ralph options", code: 2 },
  { name: "settings file with a value out of range", setup: (r) => settingsFile(r, { ralph: { "max-iterations": 0 } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json, \"ralph\".\"max-iterations\": --max-iterations must be a positive whole number, got '0'", code: 2 },
  { name: "settings file with a bad duration", setup: (r) => settingsFile(r, { ralph: { verify: "true", "verify-timeout": 600 } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json, \"ralph\".\"verify-timeout\": --verify-timeout must be a duration like 30s, 5m, 1h30m or 2d, got '600'", code: 2 },
  { name: "settings file with a harness spool does not know", setup: (r) => settingsFile(r, { ralph: { harness: "nope" } }), args: () => ["go", "--change", "001-01", "--no-interactive"], message: "spool: .spool/config.json, \"ralph\".\"harness\": unknown harness 'nope'; known harnesses: opencode, claude, codex, gemini, pi, copilot, qwen, command", code: 2 },
  { name: "settings file with a harness the command line replaces", setup: (r) => settingsFile(r, { ralph: { harness: "claude" } }), args: () => ["go", "--change", "001-01", "--harness", "nope", "--no-interactive"], message: "spool: unknown harness 'nope'; known harnesses:", code: 2 },
  { name: "settings file with an empty check", setup: (r) => settingsFile(r, { ralph: { verify: ["pnpm test", ""] } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"ralph\".\"verify\" must be a list of strings (not empty), e.g. [\"pnpm test\"], got [\"pnpm test\",\"\"]", code: 2 },
  { name: "settings file with an option given twice under two names", setup: (r) => settingsFile(r, { ralph: { "allow-all": true, yolo: true } }), args: () => ["go", "--change", "001-01", ...run], message: ".spool/config.json: \"allow-all\" and \"yolo\" are the same option; keep one", code: 2 },
  { name: "--approve in a sweep without --merge", args: () => ["go", "--continue-ready", "--approve", ...run], message: "spool: --approve goes with --merge: a completed change waits for a person's approval before its merge (spool ralph --continue-ready --merge --approve)", code: 2 },
  { name: "--approve of a change no loop has run on", args: () => ["--approve", "001-01"], message: "spool: --approve 001-01_greeting-cli: it is not awaiting approval (no loop has run on it); spool ralph --list shows the changes that are", code: 2 },
  { name: "--reject of a change whose loop completed outside an --approve sweep", setup: (r) => writeFileSync(join(changeState(r), "state.json"), JSON.stringify({ changeId: "001-01_greeting-cli", run: "r1", status: "complete", iteration: 1, minIterations: 1, maxIterations: 20, startedAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z", pid: 1 })), args: () => ["--reject", "001-01", "too rough"], message: "spool: --reject 001-01_greeting-cli: it is not awaiting approval (its loop completed outside a --merge --approve sweep)", code: 2 },
  { name: "--reject without a reason", args: () => ["--reject", "001-01"], message: "spool: --reject needs the reason, for the next run's prompt: spool ralph --reject <change> \"<why>\"", code: 2 },
  { name: "--approve without a change", args: () => ["--approve"], message: "spool: --approve needs the change awaiting approval: spool ralph --approve <change> (spool ralph --list shows them)", code: 2 },
  { name: "--reject in a sweep", args: () => ["go", "--continue-ready", "--merge", "--reject", ...run], message: "give --status, --list, --add-context, --clear-context, --remove and --reject without it", code: 2 },
  { name: "--approve beside --status", args: () => ["--approve", "--status", "--change", "001-01"], message: "spool: use only one of --status, --list, --add-context, --clear-context, --remove, --approve and --reject at a time", code: 2 },
  { name: "missing harness program", args: () => ["go", "--change", "001-01", "--harness", "command", "--harness-command", "definitely-not-a-program-xyz", "--no-interactive"], message: "command harness cannot start: 'definitely-not-a-program-xyz' was not found on PATH", code: 1 }
]

describe("bad input: one clear line, a failing exit code, nothing written", () => {
  it.each(cases)("$name", async (testCase) => {
    const root = testCase.outside ? mkdtempSync(join(tmpdir(), "spool-outside-")) : makeWorkspace({ git: testCase.gitless !== true })
    testCase.setup?.(root)
    const withGit = !testCase.outside && !testCase.gitless
    const before = withGit ? git(root, "status", "--porcelain") : ""
    const files = snapshot(root)
    const outsideBefore = snapshot(outsideDir)
    const result = await spool([...(testCase.bare ? [] : ["ralph"]), ...testCase.args(root)], { cwd: root, ...(testCase.env ? { env: testCase.env } : {}) })

    expect(result.code).toBe(testCase.code)
    const lines = result.stderr.split("\n").filter((line) => line.trim() !== "")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^spool: /)
    if (typeof testCase.message === "string") expect(lines[0]).toContain(testCase.message)
    else expect(lines[0]).toMatch(testCase.message)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(result.stdout).toBe("")
    expect(snapshot(root)).toEqual(files)
    expect(snapshot(outsideDir)).toEqual(outsideBefore)
    if (withGit) expect(git(root, "status", "--porcelain")).toBe(before)
  })

  it("takes the settings file's lease-ttl without --remote as the setting of runs with --remote, not as a mistake", async () => {
    const root = makeWorkspace()
    settingsFile(root, { ralph: { "lease-ttl": "30m" } })
    const result = await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })
    expect([result.code, result.stderr]).toEqual([0, ""])
  })
})
