import type { Error as PlatformError } from "@effect/platform"
import type { Stream } from "effect"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeBatcher } from "./OutputBatcher.js"

/** What one read of an output channel can bring: the channel reads into one buffer of this size, reused. */
const READ_BYTES = 256 * 1024

/**
 * An output channel for a child: a connected pair of local sockets, one end given to the child as
 * its stdout or stderr (the same kind of descriptor a pipe to a child is on Linux), the other read
 * here into one buffer that every read reuses. Reading a pipe instead allocates a fresh 64 KiB
 * buffer per read, which only a garbage collection gives back: with an agent printing hundreds of
 * MiB, tens of MiB of them would wait for it. The socket lives in a private temporary directory
 * (only this user can connect to it), removed as soon as both ends are connected.
 */
export interface Channel {
  /** The end the child writes to; close it here once the child has it. */
  readonly childEnd: Net.Socket
  readonly stream: Stream.Stream<Uint8Array, PlatformError.PlatformError>
  /** Closes both ends (whether or not the stream ran). */
  readonly close: () => void
}

/** `count` output channels, their streams named by `methods` in errors; null when they cannot be made (pipes then). */
export const openChannels = (count: number, methods: ReadonlyArray<string>): Promise<Array<Channel> | null> =>
  new Promise((resolve) => {
    let dir: string
    try {
      dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "spool-"))
    } catch {
      return resolve(null)
    }
    const address = Path.join(dir, "out")
    const server = Net.createServer()
    const channels: Array<Channel> = []
    let settled = false
    const done = (ok: boolean) => {
      if (settled) return
      settled = true
      server.close()
      Fs.rmSync(dir, { recursive: true, force: true })
      if (!ok) channels.forEach((channel) => channel.close())
      resolve(ok ? channels : null)
    }
    // Unix socket paths are short (104 bytes on some systems): a long temporary directory falls back to pipes.
    if (Buffer.byteLength(address) > 100) return done(false)
    server.on("error", () => done(false))
    server.listen(address, () => {
      const connectNext = () => {
        if (channels.length === count) return done(true)
        const method = methods[channels.length]!
        let batcher: ReturnType<typeof makeBatcher>
        const reader: Net.Socket = Net.connect({
          path: address,
          onread: { buffer: Buffer.allocUnsafe(READ_BYTES), callback: (nread, buffer) => batcher.push(buffer.subarray(0, nread)) }
        })
        batcher = makeBatcher(method, () => reader.pause(), () => reader.resume(), () => reader.destroy())
        reader.on("end", batcher.end)
        reader.on("error", (error) => {
          if (!settled) {
            reader.destroy()
            return done(false)
          }
          batcher.fail(error)
        })
        server.once("connection", (childEnd) => {
          channels.push({
            childEnd,
            stream: batcher.stream,
            close: () => {
              childEnd.destroy()
              reader.destroy()
            }
          })
          connectNext()
        })
      }
      connectNext()
    })
  })
