import type { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { type LayoutName, MARKERS, type Marker, recognise } from "./Layout.js"

/** The nearest directory holding a tree of changes, and the trees it holds. */
export interface FoundTrees {
  readonly root: string
  readonly found: ReadonlyArray<LayoutName>
}

const isDirectory = (fs: FileSystem.FileSystem, p: string) =>
  fs.stat(p).pipe(
    Effect.map((info) => info.type === "Directory"),
    Effect.orElseSucceed(() => false)
  )

/** The trees `dir` holds. */
export const treesIn = (fs: FileSystem.FileSystem, path: Path.Path, dir: string) =>
  Effect.map(
    Effect.forEach(MARKERS, (marker) => isDirectory(fs, path.join(dir, marker)), { concurrency: MARKERS.length }),
    (present) => recognise((marker: Marker) => present[MARKERS.indexOf(marker)]!)
  )

/**
 * `cwd` or its nearest ancestor holding a tree, as git finds `.git` (with `requested`, the nearest
 * holding that tree); null when there is none.
 */
export const findTrees = (fs: FileSystem.FileSystem, path: Path.Path, cwd: string, requested: LayoutName | null = null) =>
  Effect.gen(function*() {
    let dir = path.resolve(cwd)
    while (true) {
      const found = yield* treesIn(fs, path, dir)
      if (requested === null ? found.length > 0 : found.includes(requested)) return { root: dir, found } satisfies FoundTrees
      const parent = path.dirname(dir)
      if (parent === dir) return null
      dir = parent
    }
  })
