import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const packages = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")

const sourcesIn = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sourcesIn(path) : path.endsWith(".ts") ? [path] : []
  })

/** Every `from "…"` and `import("…")` of a module, type-only imports included. */
const importsOf = (file: string): Array<string> =>
  [...readFileSync(file, "utf8").matchAll(/(?:from |import\()"([^"]+)"/g)].map((match) => match[1]!)

/** The module graph of one package's `src`: each module and the modules of the package it imports. */
const graphOf = (pkg: string) => {
  const src = join(packages, pkg, "src")
  const graph = new Map<string, Array<string>>()
  for (const file of sourcesIn(src)) {
    const local = importsOf(file).filter((spec) => spec.startsWith("."))
    graph.set(relative(src, file), local.map((spec) => relative(src, resolve(dirname(file), spec.replace(/\.js$/, ".ts")))))
  }
  return graph
}

/** The first import circle found, as the modules around it, or null. */
export const findCircle = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<string> | null => {
  const state = new Map<string, "open" | "done">()
  const path: Array<string> = []
  const visit = (node: string): Array<string> | null => {
    if (state.get(node) === "done") return null
    if (state.get(node) === "open") return [...path.slice(path.indexOf(node)), node]
    state.set(node, "open")
    path.push(node)
    for (const next of graph.get(node) ?? []) {
      const circle = visit(next)
      if (circle !== null) return circle
    }
    path.pop()
    state.set(node, "done")
    return null
  }
  for (const node of graph.keys()) {
    const circle = visit(node)
    if (circle !== null) return circle
  }
  return null
}

const workspacePackages = readdirSync(packages).filter((name) => statSync(join(packages, name, "src"), { throwIfNoEntry: false })?.isDirectory())

describe("the code's layout", () => {
  it("finds a circle when there is one (the check can fail)", () => {
    const graph = new Map([["a.ts", ["b.ts"]], ["b.ts", ["c.ts"]], ["c.ts", ["a.ts"]], ["d.ts", ["a.ts"]]])
    expect(findCircle(graph)).toEqual(["a.ts", "b.ts", "c.ts", "a.ts"])
    expect(findCircle(new Map([["a.ts", ["b.ts"]], ["b.ts", []]]))).toBeNull()
  })

  it.each(workspacePackages)("%s has no import circle", (pkg) => {
    expect(findCircle(graphOf(pkg))).toBeNull()
  })

  it("core's rooms import one another one way: no circle between rooms either", () => {
    const rooms = new Map<string, Array<string>>()
    for (const [module, imports] of graphOf("core")) {
      const room = module.split("/")[0]!
      const others = imports.map((target) => target.split("/")[0]!).filter((other) => other !== room)
      rooms.set(room, [...new Set([...(rooms.get(room) ?? []), ...others])])
    }
    expect(rooms.size).toBeGreaterThan(10)
    expect(findCircle(rooms)).toBeNull()
  })

  it("only the CLI's entry points read the process: its directory, environment, streams, arguments and exit code; the application never does", () => {
    // The entry points, and the one module that reads the process for them (`edge/Started`).
    const entryPoints = new Set(["cli/src/bin.ts", "cli/src/loader.ts", "cli/src/statusMain.ts", "cli/src/edge/Started.ts"])
    const readers = [...sourcesIn(join(packages, "cli", "src")), ...sourcesIn(join(packages, "app", "src"))]
      .map((file) => relative(packages, file))
      .filter((file) => !entryPoints.has(file))
      .filter((file) => /\bprocess\.(cwd|env|exitCode|stdout|stderr|stdin|argv|pid)\b/.test(readFileSync(join(packages, file), "utf8")))
    expect(readers).toEqual([])
  })

  it("packages import one way: the application below the CLI, never the CLI; nothing below it imports the application", () => {
    const spoolImports = (pkg: string) =>
      sourcesIn(join(packages, pkg, "src")).flatMap((file) => importsOf(file).filter((spec) => spec.startsWith("@spool/") || spec === "spool-ralph"))
    expect(spoolImports("app").filter((spec) => !/^@spool\/(core|git|sandbox|harness-\w+)$/.test(spec))).toEqual([])
    for (const pkg of workspacePackages.filter((name) => name !== "app" && name !== "cli")) {
      expect(spoolImports(pkg).filter((spec) => spec.startsWith("@spool/app")), pkg).toEqual([])
    }
  })

  it("core imports only effect, @effect/platform and itself", () => {
    const foreign = sourcesIn(join(packages, "core", "src")).flatMap((file) =>
      importsOf(file)
        .filter((spec) => !spec.startsWith(".") && spec !== "effect" && !spec.startsWith("effect/") && !spec.startsWith("@effect/platform"))
        .map((spec) => `${relative(packages, file)}: ${spec}`)
    )
    expect(foreign).toEqual([])
  })

  it("the map of core's tests (test/README.md) names every module, in its room", () => {
    const map = readFileSync(join(packages, "core", "test", "README.md"), "utf8")
    const named = new Set(
      [...map.matchAll(/^\| (\w+) \| (.+?) \|/gm)].flatMap((row) => [...row[2]!.matchAll(/`(\w+)`/g)].map((name) => `${row[1]}/${name[1]}.ts`))
    )
    const modules = [...graphOf("core").keys()].filter((module) => module !== "index.ts")
    expect(modules.filter((module) => !named.has(module))).toEqual([])
  })

  it("core's rooms import one another only through modules, never through the package's index", () => {
    const throughIndex = sourcesIn(join(packages, "core", "src")).filter((file) =>
      !file.endsWith("index.ts") && importsOf(file).some((spec) => /(^|\/)index\.js$/.test(spec))
    )
    expect(throughIndex).toEqual([])
  })
})
