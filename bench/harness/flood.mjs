// A harness that floods stdout: `node flood.mjs <bytes>` writes that many bytes of text lines in
// 1 MiB chunks, the last two chunks splitting the completion promise between them:
// "...\n<promise>COMP" | "LETE</promise>\n". It ignores its stdin (the prompt).
const CHUNK = 1024 * 1024
const FIRST_HALF = "<promise>COMP"
const SECOND_HALF = "LETE</promise>\n"

const total = Number(process.argv[2] ?? 1024 * 1024 * 1024)
const line = (n) => `${String(n).padStart(9, "0")} ${"lorem ipsum dolor sit amet ".repeat(2).slice(0, 53)}\n`
const filler = Buffer.alloc(CHUNK)
for (let offset = 0, n = 0; offset < CHUNK; offset += 64, n++) filler.write(line(n), offset)

const write = (chunk) => new Promise((resolve, reject) => process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())))

let left = total - SECOND_HALF.length
while (left > CHUNK) {
  await write(filler)
  left -= CHUNK
}
// The second-to-last chunk: filler cut to end a line, then the first half of the promise.
const last = Buffer.from(filler.subarray(0, left - FIRST_HALF.length))
last[last.length - 1] = 10
await write(Buffer.concat([last, Buffer.from(FIRST_HALF)]))
await write(Buffer.from(SECOND_HALF))
