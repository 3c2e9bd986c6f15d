import { accessSync, constants, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { commitAll, examples } from "./support.js"

// What the sandbox's end-to-end tests share: the hostile scripts, a scene to attack, servers that
// count who reached them, and ways to look for what must not be anywhere.

const here = dirname(fileURLToPath(import.meta.url))

/** A hostile script of `fixtures/sandbox`. */
export const fixture = (name: string) => join(here, "fixtures", "sandbox", name)

/**
 * A private directory holding the example workspace as a git repository (`repo`) and a home of
 * its own (`home`) with an ssh key holding `sshSecret`: nothing else is in it.
 */
export const attackScene = (sshSecret: string) => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "spool-attack-")))
  const root = join(base, "repo")
  cpSync(join(examples, "workspace"), root, { recursive: true })
  commitAll(root)
  const home = join(base, "home")
  mkdirSync(join(home, ".ssh"), { recursive: true, mode: 0o700 })
  writeFileSync(join(home, ".ssh", "id_ed25519"), `${sshSecret}\n`, { mode: 0o600 })
  return { base, root, home }
}

export interface CountingServer {
  /** `host:port` */
  readonly address: string
  readonly requests: () => number
  readonly close: () => Promise<void>
}

/** An HTTP server on `host` at a free port that counts the requests it answers. */
export const countingServer = (host: string): Promise<CountingServer> =>
  new Promise((resolve, reject) => {
    let requests = 0
    const server = createServer((_request, response) => {
      requests++
      response.end("hello\n")
    })
    server.once("error", reject)
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo
      resolve({
        address: `${host}:${port}`,
        requests: () => requests,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** The text of every file under `dir` (but those below its `skip`), each after a line naming it. */
export const textUnder = (dir: string, skip?: string): string =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => skip === undefined || !name.startsWith(`${skip}/`))
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => `--- ${path}\n${readFileSync(path, "utf8")}`)
    .join("\n")

/** The names of `places` (name -> text) whose text holds `secret`; the secret itself is never shown. */
export const leaksOf = (secret: string, places: Record<string, string>) =>
  Object.entries(places).filter(([, text]) => text.includes(secret)).map(([name]) => name)

/** A directory of links to `programs`, as found on this PATH, and nothing else: a PATH without the others. */
export const pathOf = (programs: ReadonlyArray<string>) => {
  const bin = mkdtempSync(join(tmpdir(), "spool-path-"))
  for (const program of programs) {
    const found = (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, program)).find((path) => {
      try {
        accessSync(path, constants.X_OK)
        return true
      } catch {
        return false
      }
    })
    if (found === undefined) throw new Error(`${program} is not on the PATH`)
    symlinkSync(found, join(bin, program))
  }
  return bin
}
