// Where spool's time goes: what the bundle is made of (bytes per package, from its source map),
// and the CPU profile of one run, its self time grouped by package of the bundle or by kind of work.
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { spoolBin, spoolBundle, spoolStatusBundle } from "./paths.mjs"
import { spoolEnv } from "./spool.mjs"

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Source map segments per generated line: [generated column, source index], sorted by column. */
const decodeMappings = (mappings) => {
  const lines = []
  let source = 0
  for (const line of mappings.split(";")) {
    const segments = []
    let column = 0
    for (const segment of line.split(",")) {
      if (segment === "") continue
      const values = []
      let value = 0
      let shift = 0
      for (const char of segment) {
        const digit = BASE64.indexOf(char)
        value += (digit & 31) << shift
        if (digit & 32) shift += 5
        else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1)
          value = 0
          shift = 0
        }
      }
      column += values[0]
      if (values.length > 1) source += values[1]
      segments.push([column, values.length > 1 ? source : -1])
    }
    lines.push(segments)
  }
  return lines
}

/** `node_modules/.pnpm/x@1/node_modules/@scope/name/...` -> `@scope/name`; spool's own sources -> `spool (packages/<name>)`. */
const packageOf = (source) => {
  const match = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(source)
  if (match) return match[1]
  const own = /(?:^|\/)(cli|core|git|harness-opencode|harness-claude|harness-codex|harness-gemini|harness-pi)\/src\//.exec(source) ?? /^\.\.\/(src)\//.exec(source)
  return own ? `spool (packages/${own[1] === "src" ? "cli" : own[1]})` : source
}

const loadMap = (bundle = spoolBundle) => {
  const mapFile = `${bundle}.map`
  if (!existsSync(mapFile)) return null
  const map = JSON.parse(readFileSync(mapFile, "utf8"))
  return { map, lines: decodeMappings(map.mappings) }
}

/** Both bundles' maps, by file name: a plain `--status` runs from spool-status.cjs. */
const loadMaps = () => {
  const main = loadMap()
  const status = loadMap(spoolStatusBundle)
  return main === null || status === null ? null : { "spool-main.cjs": main, "spool-status.cjs": status }
}

/** Bytes of the built bundle per package, largest first. */
export const bundleComposition = () => {
  const loaded = loadMap()
  if (loaded === null) return null
  const code = readFileSync(spoolBundle, "utf8").split("\n")
  const bytes = new Map()
  const add = (source, n) => {
    const name = source < 0 ? "(no source)" : packageOf(loaded.map.sources[source])
    bytes.set(name, (bytes.get(name) ?? 0) + n)
  }
  loaded.lines.forEach((segments, line) => {
    segments.forEach(([column, source], i) => add(source, (segments[i + 1]?.[0] ?? code[line]?.length ?? column) - column))
  })
  const total = Buffer.byteLength(code.join("\n"))
  return { total, packages: [...bytes].map(([name, n]) => ({ name, bytes: n })).sort((a, b) => b.bytes - a.bytes) }
}

/** The group a profile node's self time goes to. */
const groupOf = (callFrame, maps) => {
  const { url, functionName, lineNumber, columnNumber } = callFrame
  const name = url.split("/").pop()
  const loaded = Object.hasOwn(maps, name) ? maps[name] : undefined
  if (loaded !== undefined) {
    const segment = (loaded.lines[lineNumber] ?? []).findLast(([column]) => column <= columnNumber)
    return segment && segment[1] >= 0 ? packageOf(loaded.map.sources[segment[1]]) : "the bundle's module body (top-level code of every package)"
  }
  if (functionName === "compileSourceTextModule" || (functionName === "Script" && url === "node:vm")) {
    return "compiling the bundle (V8 parse and compile, or loading its code cache)"
  }
  if (url.startsWith("node:internal/deps/undici")) return "Node's built-in undici (fetch), loaded on first use"
  if (functionName.startsWith("RegExp: ")) return /promise/.test(functionName) ? "completion promise regular expression" : "other regular expressions (secret redaction)"
  if (functionName === "(garbage collector)") return "garbage collection"
  if (functionName === "(idle)") return "idle (waiting for I/O)"
  if (/^(writeBuffer|writeString|writev|writeBuffers)$/.test(functionName)) return "file writes (the iteration log)"
  if (/^(indexOfBuffer|indexOfNumber|indexOfString)$/.test(functionName)) return "native byte search (Buffer.indexOf: line breaks, secret anchors, quotes)"
  if (functionName === "copy" || functionName === "set" || functionName === "slice") return "copying bytes"
  if (/^(decode|encode|encodeUtf8String|encodeInto)$/.test(functionName) || url === "node:internal/encoding") return "text decoding and encoding"
  if (url.startsWith("wasm://") || functionName.startsWith("wasm-function")) return "byte scans (WebAssembly SIMD: secret anchors, JSON string ends)"
  if (url.startsWith("node:") || url === "") return "Node's own start-up, loader, streams and built-ins"
  return url
}

/** Self time (ms) of one profiled `spool <args>` run in `cwd`, grouped by `groupOf`, largest first. */
export const profileRun = (args, cwd, env = {}) => {
  const loaded = loadMaps()
  if (loaded === null) return null
  const dir = mkdtempSync(join(tmpdir(), "spool-bench-prof-"))
  try {
    const result = spawnSync(process.execPath, ["--cpu-prof", "--cpu-prof-dir", dir, "--cpu-prof-interval", "100", spoolBin, ...args], {
      cwd,
      env: spoolEnv(env),
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024
    })
    if (result.status !== 0 && result.status !== 3) throw new Error(`profiled run exited with ${result.status}: ${result.stderr}`)
    const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), "utf8"))
    const self = new Map()
    profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
    const groups = new Map()
    for (const node of profile.nodes) {
      const us = self.get(node.id) ?? 0
      if (us === 0) continue
      const group = groupOf(node.callFrame, loaded)
      groups.set(group, (groups.get(group) ?? 0) + us / 1000)
    }
    const total = [...groups.values()].reduce((a, b) => a + b, 0)
    return { total, groups: [...groups].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
