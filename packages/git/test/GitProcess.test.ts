import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { Duration, Effect, Exit, Fiber } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { createServer, type Server, type Socket } from "node:net"
import * as GitCommand from "../src/GitCommand.js"
import { runGit } from "../src/GitProcess.js"
import { hasRemote } from "../src/GitRemoteHome.js"
import { remoteGit } from "../src/RemoteGit.js"
import { isolateGitEnvironment, removeTemporaryDirectories, temporaryDirectory } from "./fixtures.js"

// A git remote that takes connections and never answers, as one behind a dead link does.
let server: Server
let port = 0
const connections: Array<Socket> = []
beforeAll(async () => {
  isolateGitEnvironment()
  server = createServer((socket) => void connections.push(socket))
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
  port = (server.address() as { port: number }).port
})
afterAll(async () => {
  connections.forEach((socket) => socket.destroy())
  await new Promise((closed) => server.close(closed))
  removeTemporaryDirectories()
})

/** The git processes still running whose command line names the silent remote. */
const gitsOnSilentRemote = () =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8")
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      return cmdline.includes(`127.0.0.1:${port}/`) && !/^\d+ \(.*\) [ZX]/.test(stat)
    } catch {
      return false
    }
  })

const silentUrl = () => `git://127.0.0.1:${port}/silent.git`
const options = (within: Duration.DurationInput) => ({ cwd: temporaryDirectory(), env: process.env, within })

describe("git as a process (GitProcess)", () => {
  it.live("answers with the exit code and the output, whole", () =>
    Effect.gen(function*() {
      const ran = yield* runGit(["hash-object", "--stdin"], { ...options("1 minute"), input: "spool\n" })
      expect(ran.exitCode).toBe(0)
      expect(ran.stdout.toString("utf8")).toBe(execFileSync("git", ["hash-object", "--stdin"], { input: "spool\n", encoding: "utf8" }))
      const repository = options("1 minute")
      execFileSync("git", ["init", "-q", repository.cwd])
      const refused = yield* runGit(["rev-parse", "--verify", "-q", "no-such-ref"], repository)
      expect(refused.exitCode).toBe(1)
      const failed = yield* runGit(["no-such-command"], options("1 minute"))
      expect(failed.exitCode).toBe(1)
      expect(failed.stderr).toContain("'no-such-command' is not a git command")
    }))

  it.live("stops a git that does not answer once its bound is over, and leaves no process behind", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(runGit(["ls-remote", silentUrl()], options("1 second")))
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("GitTimedOut")
      expect(gitsOnSilentRemote()).toEqual([])
    }))

  it.live("is interrupted at once, and leaves no process behind", () =>
    Effect.gen(function*() {
      const before = connections.length
      const fiber = yield* Effect.fork(runGit(["ls-remote", silentUrl()], options("1 hour")))
      // Interrupted once git is waiting on the remote.
      while (connections.length === before) yield* Effect.sleep("20 millis")
      expect(gitsOnSilentRemote()).not.toEqual([])
      yield* Fiber.interrupt(fiber)
      expect(gitsOnSilentRemote()).toEqual([])
    }))

  it.live("through simple-git (GitCommand.run) and directly (runQuiet) alike, is interrupted at once and leaves no process behind", () =>
    Effect.gen(function*() {
      const command = yield* GitCommand.make(temporaryDirectory())
      for (const run of [command.run, command.runQuiet]) {
        const before = connections.length
        const fiber = yield* Effect.fork(run("list", ["ls-remote", silentUrl()]))
        while (connections.length === before) yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(fiber)
        // simple-git's kill is sent as the interrupt comes; the process takes a moment to go.
        for (let i = 0; i < 250 && gitsOnSilentRemote().length > 0; i++) yield* Effect.sleep("20 millis")
        expect(gitsOnSilentRemote()).toEqual([])
      }
      // The command goes on working after an interrupt.
      expect((yield* command.run("version", ["--version"])).startsWith("git version")).toBe(true)
    }))

  it.live("a remote that does not answer is a RemoteError naming the remote, the command and the bound", () =>
    Effect.gen(function*() {
      const root = temporaryDirectory()
      execFileSync("git", ["init", "-q", root])
      expect(yield* hasRemote({ root, remote: "origin", env: process.env })).toBe(false)
      execFileSync("git", ["remote", "add", "origin", silentUrl()], { cwd: root })
      expect(yield* hasRemote({ root, remote: "origin", env: process.env })).toBe(true)
      const git = remoteGit({ root, remote: "origin", env: process.env, within: "1 second" })
      const error = yield* Effect.flip(git.must("list the loops", ["ls-remote", "origin"]))
      expect(error._tag).toBe("RemoteError")
      expect(error.message).toBe(
        "could not list the loops on the remote origin: `git ls-remote` did not finish within 1s; check that it can be reached (git fetch origin), then run again with --resume"
      )
      expect(gitsOnSilentRemote()).toEqual([])
    }))
})
