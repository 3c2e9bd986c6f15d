import { describe, expect, it } from "@effect/vitest"
import { makeRedactor, REDACTED } from "../src/Redact.js"

describe("secret redaction", () => {
  it("replaces the values of environment variables whose names look like secrets", () => {
    const redact = makeRedactor({
      OPENAI_API_KEY: "abc123secretvalue",
      GITHUB_TOKEN: "tok-987654321",
      AWS_SECRET: "s3cr3t-aws-value",
      DB_PASSWORD_PROD: "hunter2hunter2",
      HOME: "/home/someone",
      SHORT_KEY: "abc"
    })
    const text = redact("key=abc123secretvalue tok-987654321 s3cr3t-aws-value hunter2hunter2 /home/someone abc")
    expect(text).toBe(`key=${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} /home/someone abc`)
  })

  it("replaces common key shapes wherever they appear", () => {
    const redact = makeRedactor({})
    const samples = [
      "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv",
      "sk-proj-1234567890abcdefghij",
      "ghp_abcdefghijklmnopqrstuvwxyz012345",
      "github_pat_11ABCDEFG0123456789abcdef",
      "AKIAIOSFODNN7EXAMPLE",
      "xoxb-1234567890-abcdefghij",
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"
    ]
    for (const sample of samples) expect(redact(`before ${sample} after`)).toBe(`before ${REDACTED} after`)
    expect(redact("Authorization: Bearer abcdefghijklmnop1234")).toBe(`Authorization: Bearer ${REDACTED}`)
  })

  it("leaves ordinary text alone", () => {
    const redact = makeRedactor({ PATH: "/usr/bin" })
    expect(redact("all tests passed in /usr/bin, skeleton key ok")).toBe("all tests passed in /usr/bin, skeleton key ok")
  })
})
