import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const roots: Array<string> = []

/** A fresh directory under the system temp dir, removed by `removeTemporaryDirectories`. */
export const temporaryDirectory = (prefix = "spool-git-test-"): string => {
  const dir = Fs.realpathSync(Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix)))
  roots.push(dir)
  return dir
}

export const removeTemporaryDirectories = () => {
  for (const dir of roots.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
}

/** Keeps the tests away from the machine's git configuration and any identity in the environment. */
export const isolateGitEnvironment = () => {
  const home = temporaryDirectory("spool-git-home-")
  const globalConfig = Path.join(home, ".gitconfig")
  Fs.writeFileSync(globalConfig, "")
  process.env.GIT_CONFIG_NOSYSTEM = "1"
  process.env.GIT_CONFIG_GLOBAL = globalConfig
  process.env.HOME = home
  for (const name of Object.keys(process.env)) {
    if (/^GIT_(AUTHOR|COMMITTER)_|^GIT_(DIR|WORK_TREE|INDEX_FILE|CEILING_DIRECTORIES)$/.test(name)) {
      delete process.env[name]
    }
  }
}

export const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

export const write = (root: string, file: string, content: string | Uint8Array) => {
  const full = Path.join(root, file)
  Fs.mkdirSync(Path.dirname(full), { recursive: true })
  Fs.writeFileSync(full, content)
}

export const read = (root: string, file: string): string => Fs.readFileSync(Path.join(root, file), "utf8")

export const remove = (root: string, file: string) => Fs.rmSync(Path.join(root, file))

/** An empty repository on an unborn `main` branch with a local identity. */
export const emptyRepository = (): string => {
  const dir = temporaryDirectory()
  git(dir, "init", "-q", "-b", "main")
  git(dir, "config", "user.name", "Spool Test")
  git(dir, "config", "user.email", "spool@example.com")
  git(dir, "config", "commit.gpgsign", "false")
  return dir
}

/** A repository with one commit holding `files`. */
export const repository = (files: Record<string, string> = { "README.md": "hello\n" }): string => {
  const dir = emptyRepository()
  for (const [file, content] of Object.entries(files)) write(dir, file, content)
  commit(dir, "initial")
  return dir
}

let clock = Date.parse("2024-01-01T00:00:00Z") / 1000

/** A git command that creates a commit one second after the previous one, so history order never ties. */
export const gitCommitting = (dir: string, ...args: Array<string>) => {
  const date = `${++clock} +0000`
  execFileSync("git", args, {
    cwd: dir,
    stdio: "ignore",
    env: { ...process.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }
  })
}

export const commit = (dir: string, message: string) => {
  git(dir, "add", "-A")
  gitCommitting(dir, "commit", "-q", "-m", message)
}

export const head = (dir: string): string => git(dir, "rev-parse", "HEAD").trim()
