// Repositories the benchmarks run in: copies of the example workspace, and a generated large
// repository (20,000 files, 2,000 commits) built with one `git fast-import` stream and cached.
import { spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { benchDir, examplesDir } from "./paths.mjs"

const IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.invalid"]

export const git = (cwd, ...args) => {
  const result = spawnSync("git", args, { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
  if (result.status !== 0) throw new Error(`git ${args.join(" ")} in ${cwd}: ${result.stderr}`)
  return result.stdout
}

const initRepository = (dir) => {
  git(dir, "init", "-q", "-b", "main")
  git(dir, "config", "user.name", "Bench")
  git(dir, "config", "user.email", "bench@example.invalid")
}

const temporary = []
process.on("exit", () => temporary.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** A new empty temporary directory, removed at exit. */
export const temporaryDirectory = (prefix = "spool-bench-") => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temporary.push(dir)
  return dir
}

/** A copy of the example workspace (change 001-01) in a fresh temporary git repository with one commit, removed at exit. */
export const smallWorkspace = () => {
  const dir = temporaryDirectory()
  cpSync(join(examplesDir, "workspace"), dir, { recursive: true })
  initRepository(dir)
  git(dir, ...IDENTITY, "add", "-A")
  git(dir, ...IDENTITY, "commit", "-qm", "Example workspace")
  return dir
}

/** Removes what a loop left behind in a workspace: its state, so each run starts alike. */
export const clearLoopState = (dir) => rmSync(join(dir, ".spool", ".state"), { recursive: true, force: true })

const listFiles = (root) =>
  readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((name) => statSync(join(root, name)).isFile())
    .map((name) => ({ path: relative(root, join(root, name)), content: readFileSync(join(root, name)) }))

/** File contents that look like source text, deterministic in (file, version). */
const fileContent = (index, version) => {
  const lines = [`// file ${index}, version ${version}`]
  for (let line = 0; line < 8 + (index % 13); line++) {
    lines.push(`export const value${line} = ${(index * 31 + line * 7 + version) % 9973} // ${"x".repeat((index + line) % 40)}`)
  }
  return `${lines.join("\n")}\n`
}

const filePath = (index) => {
  const dir = index % 1000
  return `src/m${String(Math.floor(dir / 25)).padStart(2, "0")}/p${String(dir % 25).padStart(2, "0")}/f${String(index).padStart(5, "0")}.ts`
}

/** The whole history as one fast-import stream: each commit adds `files / commits` files and edits 5 older ones. */
const fastImportStream = ({ files, commits }) => {
  const parts = []
  const data = (content) => {
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content)
    parts.push(Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from("\n"))
  }
  const versions = new Uint16Array(files)
  const perCommit = Math.ceil(files / commits)
  let created = 0
  let seed = 12345
  const random = (n) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed % n
  }
  for (let c = 0; c < commits; c++) {
    const time = 1_700_000_000 + c * 600
    parts.push(Buffer.from(`commit refs/heads/main\nmark :${c + 1}\ncommitter Bench <bench@example.invalid> ${time} +0000\n`))
    data(`Commit ${c + 1}: add ${perCommit} files, edit 5\n`)
    if (c > 0) parts.push(Buffer.from(`from :${c}\n`))
    if (c === 0) {
      for (const file of listFiles(join(examplesDir, "workspace"))) {
        parts.push(Buffer.from(`M 100644 inline ${file.path}\n`))
        data(file.content)
      }
    }
    for (let k = 0; k < perCommit && created < files; k++, created++) {
      parts.push(Buffer.from(`M 100644 inline ${filePath(created)}\n`))
      data(fileContent(created, 0))
    }
    for (let k = 0; k < 5 && created > 0; k++) {
      const index = random(created)
      versions[index]++
      parts.push(Buffer.from(`M 100644 inline ${filePath(index)}\n`))
      data(fileContent(index, versions[index]))
    }
  }
  parts.push(Buffer.from("done\n"))
  return Buffer.concat(parts)
}

/**
 * The large repository, generated once and reused while its shape is unchanged (the version is
 * part of the directory name). Returns its path with a clean work tree and no loop state.
 */
export const largeRepository = ({ files = 20_000, commits = 2_000 } = {}) => {
  const name = `repo-${files}f-${commits}c-v2`
  const dir = join(benchDir, name)
  const ready = join(benchDir, `${name}.ready`)
  if (existsSync(ready)) {
    clearLoopState(dir)
    if (git(dir, "status", "--porcelain") === "") return { dir, generated: false }
  }
  rmSync(dir, { recursive: true, force: true })
  rmSync(ready, { force: true })
  mkdirSync(dir, { recursive: true })
  initRepository(dir)
  const result = spawnSync("git", ["fast-import", "--quiet", "--done"], {
    cwd: dir,
    input: fastImportStream({ files, commits }),
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024
  })
  if (result.status !== 0) throw new Error(`git fast-import: ${result.stderr}`)
  git(dir, "reset", "--hard", "-q", "main")
  // Files a day older than the index, as in a repository someone works in: none is "racily clean"
  // (as new as the index), which would make git re-read it on every scan. `status` refreshes the index.
  const dayAgo = new Date(Date.now() - 86_400_000)
  for (const name of git(dir, "ls-files", "-z").split("\0")) if (name !== "") utimesSync(join(dir, name), dayAgo, dayAgo)
  git(dir, "status", "--porcelain")
  writeFileSync(ready, `${new Date().toISOString()}\n`)
  return { dir, generated: true }
}

/** Adds `count` changes (`009-01_bench-1` ...) with a proposal each, committed. */
export const addChanges = (dir, count, module = "009") => {
  const ids = Array.from({ length: count }, (_, i) => `${module}-${String(i + 1).padStart(2, "0")}_bench-${i + 1}`)
  for (const id of ids) {
    mkdirSync(join(dir, ".spool", "changes", id), { recursive: true })
    writeFileSync(join(dir, ".spool", "changes", id, "proposal.md"), `# ${id}\n`)
  }
  git(dir, ...IDENTITY, "add", "-A")
  git(dir, ...IDENTITY, "commit", "-qm", `${count} changes to sweep`)
  return ids
}

