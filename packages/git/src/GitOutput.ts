import type { CommitInfo, GitChangeSummary } from "@spool/core"

/** More paths than this are counted but not listed, so an iteration record stays small. */
export const MAX_LISTED_FILES = 200

const FIELD = "\x1f"
const RECORD = "\x1e"

/** Git writes a line feed after each record's separator; it starts the next record. */
// Stryker disable next-line Regex: the line feed git writes between records is the only one a record holds (%s joins a subject's lines)
const LEADING_LINE_FEED = /^\n/

/** `git log --format` for `parseLog`: unit separators, so a subject may hold any printable character. */
export const LOG_FORMAT = `--format=%h%x1f%s%x1f%an%x1f%aI%x1e`

const NUMSTAT = /^(\d+|-)\t(\d+|-)\t([\s\S]*)$/

/** A diff as the loop records it, and every path it touches (both sides of a rename, none left out): what a commit of it stages. */
export interface ParsedDiff {
  readonly summary: GitChangeSummary
  readonly paths: ReadonlyArray<string>
}

/**
 * Parses `git diff-tree -r -M --numstat -z`: `added\tdeleted\tpath\0`, or for a rename
 * `added\tdeleted\t\0old\0new\0`; binary files show `-` for both counts.
 */
export const parseNumstat = (output: string): ParsedDiff => {
  const tokens = output.split("\0")
  const files: Array<string> = []
  const paths: Array<string> = []
  let changedFiles = 0
  let insertions = 0
  let deletions = 0
  for (let i = 0; i < tokens.length; i++) {
    const match = NUMSTAT.exec(tokens[i]!)
    if (match === null) continue
    const [, added, deleted, path] = match
    let file = path!
    if (file === "") {
      // A rename is one changed file, known by its new path; its commit removes the old one.
      const from = tokens[i + 1] ?? ""
      if (from !== "") paths.push(from)
      file = tokens[i + 2] ?? ""
      i += 2
    }
    paths.push(file)
    changedFiles++
    if (files.length < MAX_LISTED_FILES) files.push(file)
    if (added !== "-") insertions += Number(added)
    if (deleted !== "-") deletions += Number(deleted)
  }
  return { summary: { changedFiles, files, insertions, deletions }, paths }
}

/** Parses `git log` output written with `LOG_FORMAT`. */
export const parseLog = (output: string): ReadonlyArray<CommitInfo> =>
  output
    .split(RECORD)
    .map((record) => record.replace(LEADING_LINE_FEED, ""))
    .filter((record) => record.length > 0)
    .map((record) => {
      const [hash = "", subject = "", author = "", date = ""] = record.split(FIELD)
      return { hash, subject, author, date }
    })

/** One worktree of `git worktree list --porcelain`. */
export interface WorktreeEntry {
  readonly path: string
  /** `refs/heads/<name>`, or null for a detached HEAD or a bare repository. */
  readonly branch: string | null
  /** Git knows its directory is gone (`git worktree prune` would forget it). */
  readonly prunable: boolean
}

/** Parses `git worktree list --porcelain`: blocks of `key value` lines separated by a blank line. */
export const parseWorktreeList = (output: string): ReadonlyArray<WorktreeEntry> =>
  output
    // Git ends every block, the last one too, with one blank line.
    .split("\n\n")
    .map((block) => block.split("\n"))
    .filter((lines) => lines[0]!.startsWith("worktree "))
    .map((lines) => {
      // Only keys git always writes with a value (`prunable` with its reason) are read.
      const value = (key: string) => {
        const line = lines.find((l) => l.startsWith(`${key} `))
        return line === undefined ? null : line.slice(key.length + 1)
      }
      return { path: value("worktree")!, branch: value("branch"), prunable: value("prunable") !== null }
    })
