import { describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { rmSync } from "node:fs"
import { jsonBody, makeTempDirectory, sendJson, startFakeHttpServer } from "../src/fakeHttpServer.js"
import { isRunning, processesIn, processesMentioning, survives } from "../src/processes.js"

// The Ctrl-C tests of every agent pass when these helpers find nothing left: they must find what runs.
describe("processes", () => {
  it("finds a running process by its working directory and its command line, and sees it go", async () => {
    const dir = makeTempDirectory("spool-testkit-")
    const child = spawn("sleep", ["300"], { cwd: dir, stdio: "ignore" })
    try {
      const pid = child.pid!
      expect(processesIn(dir).map((p) => p.pid)).toEqual([pid])
      expect(processesIn(dir)[0]!.cmdline).toBe("sleep 300 ")
      expect(processesMentioning("sleep 300").map((p) => p.pid)).toContain(pid)
      expect(isRunning(pid)).toBe(true)
      child.kill("SIGKILL")
      expect(await survives(pid)).toBe(false)
      expect(processesIn(dir)).toEqual([])
    } finally {
      child.kill("SIGKILL")
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("startFakeHttpServer", () => {
  it("hands the answer each request with its headers and its whole body, on 127.0.0.1", async () => {
    const seen: Array<string> = []
    const server = await startFakeHttpServer(({ method, url, headers, body }, res) => {
      seen.push(`${method} ${url} ${headers["x-probe"]} ${body}`)
      sendJson(res, 201, { echoed: jsonBody(body) })
    })
    try {
      expect(server.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const response = await fetch(`${server.origin}/v1/x?y=1`, { method: "POST", headers: { "x-probe": "p1" }, body: JSON.stringify({ a: "b".repeat(100_000) }) })
      expect(response.status).toBe(201)
      expect(response.headers.get("content-type")).toBe("application/json")
      expect(await response.json()).toEqual({ echoed: { a: "b".repeat(100_000) } })
      expect(seen).toEqual([`POST /v1/x?y=1 p1 ${JSON.stringify({ a: "b".repeat(100_000) })}`])
    } finally {
      await server.close()
    }
  })

  it("jsonBody is {} for an empty body, one that is not JSON, and JSON that is not an object", () => {
    expect(jsonBody("")).toEqual({})
    expect(jsonBody("{not json")).toEqual({})
    expect(jsonBody("null")).toEqual({})
    expect(jsonBody("3")).toEqual({})
    expect(jsonBody("{\"model\":\"m\"}")).toEqual({ model: "m" })
  })
})
