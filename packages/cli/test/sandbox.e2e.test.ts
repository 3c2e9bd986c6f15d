import { describe, expect, it } from "@effect/vitest"
import { startGitDaemon, tryGit } from "@spool/testkit/gitDaemon"
import { processesMentioning, remaining } from "@spool/testkit/processes"
import { randomUUID } from "node:crypto"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { attackScene, countingServer, fixture, leaksOf, pathOf, textUnder } from "./sandboxSupport.js"
import { agentScript, git, makeWorkspace, repositoryOf, spool, stateDir } from "./support.js"

// `--sandbox` proven by attack, end to end: the built spool runs a hostile agent and a hostile
// check, and every attempt to reach past the walls fails, by the scripts' own account (committed)
// and by what the test sees for itself, while the agent's allowed work is committed and the loop completes.

const change = "001-01_greeting-cli"
const harness = (command: string) => ["--harness", "command", "--harness-command", command, "--no-interactive"]
const lines = (text: string) => text.split("\n").filter(Boolean)

const statusJson = async (root: string) => {
  const result = await spool(["ralph", "--status", "--json", "--change", "001-01"], { cwd: root })
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

describe("spool ralph --sandbox, attacked (the built binary)", () => {
  it("refuses every attack of a hostile agent and of its check, commits the agent's work and completes; exit 0", async () => {
    const sshSecret = `ssh-secret-${randomUUID()}`
    const awsSecret = `aws-secret-${randomUUID()}`
    const mark = `spool-attack-${randomUUID()}`
    const { base, root, home } = attackScene(sshSecret)
    // The loop's remote: a git daemon on loopback serving a bare repository beside the work tree.
    const daemon = await startGitDaemon({ base: join(base, "remote") })
    const bare = daemon.createBare("origin", root)
    git(root, "remote", "add", "origin", daemon.url("origin"))
    const remoteRefs = git(bare, "for-each-ref", "--format=%(refname) %(objectname)")
    const allowed = await countingServer("127.0.0.1")
    const deniedHost = await countingServer("127.0.0.2")
    const deniedPort = await countingServer("127.0.0.1")
    try {
      const agent = `bash ${fixture("hostile-agent.sh")} ${base} ${allowed.address} ${deniedHost.address} ${deniedPort.address} ${bare} ${mark}`
      const check = `sh ${fixture("hostile-check.sh")} ${base} ${allowed.address} ${deniedHost.address}`
      const result = await spool(
        ["ralph", "x", "--change", "001-01", "--sandbox", "--allow-host", allowed.address, ...harness(agent), "--verify", check],
        { cwd: root, env: { HOME: home, AWS_SECRET_ACCESS_KEY: awsSecret } }
      )

      // Should a secret have reached spool's output, a failure shows it masked.
      const shown = (result.stdout + result.stderr).replaceAll(sshSecret, "<ssh key>").replaceAll(awsSecret, "<aws key>")
      // 8. spool was neither seen nor stopped by the agent's kills: it finished its loop.
      expect(result.code, shown).toBe(0)
      expect(result.stdout).toContain("complete: the promise was accepted at iteration 2")
      const status = await statusJson(root)
      expect(status.status).toBe("complete")
      expect(status.history.map((r: { iteration: number; outcome: string }) => [r.iteration, r.outcome])).toEqual([[1, "continue"], [2, "complete"]])
      // Seen: the run's walls in --status, as text and JSON, and in every iteration's record.
      expect(status.sandbox).toEqual({ runtime: "bubblewrap", hosts: [allowed.address], denyRead: [], passEnv: [] })
      expect(status.history.map((r: { sandboxed?: boolean }) => r.sandboxed)).toEqual([true, true])
      const text = await spool(["ralph", "--status", "--change", "001-01"], { cwd: root })
      expect(lines(text.stdout)).toContain(`sandbox:   bubblewrap; hosts ${allowed.address}`)
      // The agent's own work is committed, iteration by iteration, the record of its attacks with it.
      expect(status.history.map((r: { git: { files: Array<string> } }) => r.git.files)).toEqual([
        [".myhooks/post-commit", "attacks.txt", "stolen.txt", "work-1.txt"],
        ["work-2.txt"]
      ])
      expect(git(root, "log", "--format=%s")).toBe(`spool ralph: ${change} iteration 2\nspool ralph: ${change} iteration 1\ninitial`)

      // What the agent saw of each attempt, as spool committed it.
      expect(lines(git(root, "show", "HEAD:attacks.txt"))).toEqual([
        "write-parent: refused",
        "write-home: refused",
        "write-gitconfig: refused",
        "ssh-key: refused",
        "aws-env: refused",
        "aws-other-process: refused",
        "net-denied-host: refused",
        "net-denied-port: refused",
        "net-direct: refused",
        "net-allowed: reached",
        "push-origin: refused",
        "push-file: refused",
        "hook-plant: refused",
        "hook-config: refused",
        "hook-rename: refused",
        "git-rename: refused",
        "state-write: refused",
        "history-write: refused",
        "state-remove: refused",
        "state-rename: refused",
        "spool-visible: refused",
        "host-processes-visible: refused",
        "kill: tried",
        "background: running"
      ])
      // What the check saw, left in the work tree (spool commits no check's output); it passed, all refused.
      expect(lines(readFileSync(join(root, "check-report.txt"), "utf8"))).toEqual([
        "write-parent: refused",
        "ssh-key: refused",
        "aws-env: refused",
        "net-denied-host: refused",
        "hook-plant: refused",
        "net-allowed: reached"
      ])
      expect(status.history[1].verify).toEqual([{ command: check, exitCode: 0, signal: null, timedOut: false, durationMs: expect.any(Number), passed: true }])

      // And what the test sees for itself.
      // 1. Nothing written beside the repository, nor in the home (no escape file, no hook's marker, no .gitconfig).
      expect(readdirSync(base).sort()).toEqual(["home", "remote", "repo"])
      expect(readdirSync(home)).toEqual([".ssh"])
      expect(readdirSync(join(home, ".ssh"))).toEqual(["id_ed25519"])
      // 3. The allowed server answered the agent and the check; the denied ones were never reached.
      expect(allowed.requests()).toBe(2)
      expect([deniedHost.requests(), deniedPort.requests()]).toEqual([0, 0])
      // 4. The remote is as it was.
      expect(git(bare, "for-each-ref", "--format=%(refname) %(objectname)")).toBe(remoteRefs)
      // 5. No hook planted, no hooks path set, git's directory where it was: spool's commits ran no hook.
      expect(readdirSync(join(root, ".git", "hooks")).filter((name) => !name.endsWith(".sample"))).toEqual([])
      expect(tryGit(root, "config", "--get", "core.hooksPath").status).toBe(1)
      expect(readdirSync(root).filter((name) => name.endsWith("-moved"))).toEqual([])
      expect(readdirSync(join(root, ".git")).filter((name) => name.endsWith("-moved"))).toEqual([])
      // 6. spool's state is its own: nothing forged in it, its history whole.
      const state = stateDir(root, change)
      expect(textUnder(join(root, ".spool", ".state")).includes(mark), "forged text in spool's state").toBe(false)
      expect(JSON.parse(readFileSync(join(state, "state.json"), "utf8"))).toMatchObject({ status: "complete" })
      expect(lines(readFileSync(join(state, "history.jsonl"), "utf8")).map((line) => JSON.parse(line).iteration)).toEqual([1, 2])
      // 2, 7. Neither secret anywhere: spool's output, the agent's logged output, the commits, the work tree.
      const logs = textUnder(state)
      expect(logs.includes("key= aws=\n"), "the agent's output, logged, with nothing in it").toBe(true)
      const places = {
        stdout: result.stdout,
        stderr: result.stderr,
        "spool's state and logs": logs,
        commits: git(root, "log", "--all", "-p", "--format=%B"),
        "work tree": textUnder(root, ".git")
      }
      expect(leaksOf(sshSecret, places), "the ssh key leaked to").toEqual([])
      expect(leaksOf(awsSecret, places), "AWS_SECRET_ACCESS_KEY leaked to").toEqual([])
      // 9. Nothing the agent left running outlived its iteration.
      expect(await remaining(() => processesMentioning(`${mark}-`)), "processes left behind").toEqual([])
    } finally {
      // Were the walls down, what the agent left would ignore SIGTERM.
      for (const { pid } of processesMentioning(`${mark}-`)) process.kill(pid, "SIGKILL")
      await Promise.all([allowed.close(), deniedHost.close(), deniedPort.close(), daemon.stop()])
    }
  })

  it("keeps each loop of a --max-parallel 2 sweep out of the other's worktree and out of the main work tree; exit 0", async () => {
    const root = repositoryOf({ "001-01_alpha": {}, "001-02_beta": {} })
    const worktree = (id: string) => join(root, ".spool", ".state", "worktrees", id)
    // Each agent waits for the other's worktree, then writes into it and into the main work tree.
    const agent = agentScript(`
import { existsSync, writeFileSync } from "node:fs"
const id = process.env.SPOOL_CHANGE
const theirs = ${JSON.stringify(join(root, ".spool", ".state", "worktrees"))} + "/" + (id === "001-01_alpha" ? "001-02_beta" : "001-01_alpha")
for (let i = 0; !existsSync(theirs + "/.git"); i++) {
  if (i > 6000) { console.error("the other worktree never came"); process.exit(1) }
  await new Promise((r) => setTimeout(r, 20))
}
const attempt = (name, path) => {
  try { writeFileSync(path, "from " + id + "\\n"); return name + ": ESCAPED" } catch (e) { return name + ": refused (" + e.code + ")" }
}
writeFileSync("attacks.txt", attempt("other-worktree", theirs + "/from-" + id + ".txt") + "\\n" + attempt("main-work-tree", ${JSON.stringify(root)} + "/from-" + id + ".txt") + "\\n")
writeFileSync(id + ".txt", "done\\n")
console.log(id + " is done\\n<promise>COMPLETE</promise>")
`)
    const result = await spool(["ralph", "--continue-ready", "--max-parallel", "2", "--sandbox", ...harness(agent)], { cwd: root })
    expect(result.code, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toContain("=== sweep: 2 changes: 2 complete ===")
    for (const id of ["001-01_alpha", "001-02_beta"]) {
      expect(git(root, "show", `spool/${id}:attacks.txt`)).toBe("other-worktree: refused (EROFS)\nmain-work-tree: refused (EROFS)")
      expect(git(root, "log", "-1", "--format=%s", `spool/${id}`)).toBe(`spool ralph: ${id} iteration 1`)
      expect(git(root, "show", "--name-only", "--format=", `spool/${id}`).split("\n").sort()).toEqual([`${id}.txt`, "attacks.txt"])
      // In neither worktree, nor the main one, is there a file the other loop wrote.
      expect(readdirSync(worktree(id)).filter((name) => name.startsWith("from-"))).toEqual([])
      expect(git(worktree(id), "status", "--porcelain")).toBe("")
    }
    expect(readdirSync(root).filter((name) => name.startsWith("from-"))).toEqual([])
    expect(git(root, "status", "--porcelain")).toBe("")
    expect(git(root, "log", "--format=%s", "main")).toBe("initial")
  })

  it("walls a hostile reviewer in too: it reads the work and may write in its own tree, but cannot write in the loop's work tree, move a branch, nor read a secret; exit 0", async () => {
    const sshSecret = `ssh-secret-${randomUUID()}`
    const { root, home } = attackScene(sshSecret)
    const agent = agentScript(`
import { readFileSync, writeFileSync } from "node:fs"
readFileSync(0, "utf8")
writeFileSync("work.txt", "the agent's work\\n")
console.log("Done. <promise>COMPLETE</promise>")
`)
    const reviewer = agentScript(`
import { readFileSync, writeFileSync } from "node:fs"
import { execFileSync } from "node:child_process"
readFileSync(0, "utf8")
const attempt = (what, act) => { try { act(); console.log(what + ": done") } catch (e) { console.log(what + ": refused (" + (e.code ?? "exit " + e.status) + ")") } }
console.log("work: " + readFileSync("work.txt", "utf8").trim())
attempt("own tree write", () => writeFileSync("scribble.txt", "x"))
attempt("work tree write", () => writeFileSync(${JSON.stringify(join(root, "pwned.txt"))}, "x"))
attempt("branch move", () => execFileSync("git", ["update-ref", "refs/heads/main", "HEAD~1"], { stdio: "pipe" }))
attempt("secret read", () => readFileSync(${JSON.stringify(join(home, ".ssh", "id_ed25519"))}, "utf8"))
console.log("Looked at it all.\\n<verdict>approve</verdict>")
`)
    const result = await spool(["ralph", "x", "--change", "001-01", "--sandbox", ...harness(agent), "--review", `command:${reviewer}`], { cwd: root, env: { HOME: home } })
    const shown = (result.stdout + result.stderr).replaceAll(sshSecret, "<ssh key>")
    expect(result.code, shown).toBe(0)
    expect(result.stdout).toContain("work: the agent's work")
    expect(result.stdout).toContain("own tree write: done")
    expect(result.stdout).toMatch(/work tree write: refused \(E\w+\)/)
    expect(result.stdout).toMatch(/secret read: refused \(E\w+\)/)
    expect(result.stdout).toMatch(/branch move: refused \(exit \d+\)/)
    expect(git(root, "log", "--format=%s", "-1")).toMatch(/^spool ralph: 001-01_greeting-cli iteration 1/)
    expect(shown).not.toContain("<ssh key>")
    expect(existsSync(join(root, "pwned.txt"))).toBe(false)
    expect(result.stdout).toContain("complete: the promise was accepted at iteration 1 and approved by its review")
  })

  it("without bubblewrap on the PATH stops before anything runs, with one line naming it and how to install it; exit 2", async () => {
    const root = makeWorkspace()
    // Everything spool and the runtime's check look for, but bwrap.
    const path = pathOf(["git", "sh", "bash", "which", "rg", "socat"])
    const result = await spool(["ralph", "x", "--change", "001-01", "--sandbox", ...harness("bash -c 'echo ran > ran.txt'")], {
      cwd: root,
      env: { PATH: path }
    })
    expect(result.code, result.stdout).toBe(2)
    expect(result.stderr).toBe(
      "spool: --sandbox cannot run here: bubblewrap (bwrap) not installed; on Debian or Ubuntu: sudo apt-get install -y bubblewrap socat ripgrep\n"
    )
    expect(result.stdout).toBe("")
    // Nothing ran: no agent's file, no commit, no state.
    expect(existsSync(join(root, "ran.txt"))).toBe(false)
    expect(git(root, "log", "--format=%s")).toBe("initial")
    expect(git(root, "status", "--porcelain", "--ignored")).toBe("")
    expect(existsSync(join(root, ".spool", ".state"))).toBe(false)
  })
})
