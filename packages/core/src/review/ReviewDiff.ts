/** The run's work as a reviewer reads it: the diff, file by file, cut to a size a model takes. */

/** One file's part of the diff. */
export interface FileDiff {
  readonly path: string
  /** Lines added and deleted; null for a binary file. */
  readonly added: number | null
  readonly deleted: number | null
  /** Its patch (`diff --git` ... hunks), as git prints it. */
  readonly patch: string
}

/** How much diff text a review prompt carries, at most (about 25k tokens). */
export const REVIEW_DIFF_BUDGET = 100_000

const stat = (file: FileDiff) => (file.added === null ? "binary" : `+${file.added} -${file.deleted}`)

/**
 * The diff for the prompt: every file's line counts first, then the patches in order while they fit
 * `budget` characters; a patch that does not fit is left out whole and named, so the reviewer knows
 * what it did not see (it can read the file in its work tree).
 */
export const cutDiff = (files: ReadonlyArray<FileDiff>, budget = REVIEW_DIFF_BUDGET): string => {
  if (files.length === 0) return "(no changes: the run's work is empty)"
  const shown: Array<string> = []
  const left: Array<FileDiff> = []
  let used = 0
  for (const file of files) {
    if (used + file.patch.length <= budget) {
      shown.push(file.patch.endsWith("\n") ? file.patch : `${file.patch}\n`)
      used += file.patch.length
    } else {
      left.push(file)
    }
  }
  const summary = files.map((file) => `- ${file.path} (${stat(file)})`).join("\n")
  const cut = left.length === 0
    ? ""
    : `\n\nLeft out of the diff below to keep it to size (${left.length} of ${files.length} files; read them in your work tree):\n` +
      left.map((file) => `- ${file.path} (${stat(file)}, ${file.patch.length} characters of diff)`).join("\n")
  return `Files changed:\n${summary}${cut}\n\n\`\`\`diff\n${shown.join("")}\`\`\``
}
