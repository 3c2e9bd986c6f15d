import { createHash } from "node:crypto"
import { closeSync, linkSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs"
import * as Path from "node:path"
import { deflateSync } from "node:zlib"

/**
 * Git objects written straight into a repository's object store, as loose objects: what `git
 * hash-object -w`, `mktree` and `commit-tree` would write, without starting a process for each.
 * Only for SHA-1 repositories (git's default); others go through git itself.
 */
export interface ObjectStore {
  readonly blob: (content: Uint8Array) => string
  /** A tree of files (mode 100644), by name. */
  readonly tree: (files: ReadonlyArray<{ readonly name: string; readonly blob: string }>) => string
  readonly commit: (input: { readonly tree: string; readonly parent: string | null; readonly message: string; readonly when: string }) => string
}

export const looseObjects = (objectsDir: string): ObjectStore => {
  const write = (type: string, body: Uint8Array) => {
    const object = Buffer.concat([Buffer.from(`${type} ${body.length}\0`, "utf8"), body])
    const sha = createHash("sha1").update(object).digest("hex")
    const dir = Path.join(objectsDir, sha.slice(0, 2))
    const file = Path.join(dir, sha.slice(2))
    mkdirSync(dir, { recursive: true })
    // Written whole beside it, then linked into place (as git writes loose objects, without fsync):
    // an object never exists half-written, and
    // one already there (the same content) is left as it is.
    const tmp = Path.join(dir, `.tmp-spool-${process.pid}-${sha.slice(2, 10)}`)
    const fd = openSync(tmp, "w", 0o444)
    try {
      writeSync(fd, deflateSync(object))
    } finally {
      closeSync(fd)
    }
    try {
      linkSync(tmp, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    } finally {
      rmSync(tmp, { force: true })
    }
    return sha
  }
  return {
    blob: (content) => write("blob", content),
    tree: (files) =>
      write(
        "tree",
        Buffer.concat(
          [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).flatMap((file) => [
            Buffer.from(`100644 ${file.name}\0`, "utf8"),
            Buffer.from(file.blob, "hex")
          ])
        )
      ),
    commit: ({ message, parent, tree, when }) =>
      write(
        "commit",
        Buffer.from(
          `tree ${tree}\n${parent === null ? "" : `parent ${parent}\n`}author spool <spool@localhost> ${when}\ncommitter spool <spool@localhost> ${when}\n\n${message}\n`,
          "utf8"
        )
      )
  }
}
