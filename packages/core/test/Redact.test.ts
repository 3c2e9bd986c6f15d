import { describe, expect, it } from "@effect/vitest"
import { makeByteOutputLog } from "../src/output/ByteOutputLog.js"
import { makeRedactor, REDACTED, type Redactor } from "../src/output/Redact.js"

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

describe("secret redaction: which names and values", () => {
  it("writes the marker [REDACTED] in place of a secret", () => {
    expect(makeRedactor({ DEPLOY_KEY: "s3cr3t-value" })("use s3cr3t-value")).toBe("use [REDACTED]")
  })

  it("reads a name as a secret's only by its end, or when it is the whole name", () => {
    const value = (name: string) => makeRedactor({ [name]: "v4lue-of-it" })("v4lue-of-it") === REDACTED
    for (const name of ["OPENAI_API_KEY", "ci_token", "AWS_SECRET", "MY_PASSWORD_FILE", "APIKEY", "API_KEY", "token", "SECRET"]) {
      expect(value(name), name).toBe(true)
    }
    for (const name of ["KEY_PATH", "TOKEN_URL", "SECRET_FILE", "SSH_KEY_PATH", "GITHUB_TOKEN_URL", "VAULT_SECRET_FILE", "MYTOKEN", "NOTSECRET", "APIKEYS", "TOKENIZER", "PATH"]) {
      expect(value(name), name).toBe(false)
    }
  })

  it("takes values of six characters or more, without the whitespace around them", () => {
    const redact = makeRedactor({ A_KEY: "abcdef", B_KEY: "  ab  ", C_TOKEN: "  padded-value\n" })
    expect(redact("abcdef ab cab padded-value")).toBe(`${REDACTED} ab cab ${REDACTED}`)
  })

  it("replaces a value that begins another whole, the longer first", () => {
    const redact = makeRedactor({ SHORT_TOKEN: "prefix-secret", LONG_TOKEN: "prefix-secret-and-more" })
    expect(redact("a prefix-secret-and-more b prefix-secret")).toBe(`a ${REDACTED} b ${REDACTED}`)
  })

  it("takes a value's characters literally", () => {
    const redact = makeRedactor({ DB_PASSWORD: "p@ss.w*rd+(x)|y" })
    expect(redact("login p@ss.w*rd+(x)|y done; pXss.wwwrd")).toBe(`login ${REDACTED} done; pXss.wwwrd`)
  })

  it("replaces a value in text that holds no key shape's mark", () => {
    expect(makeRedactor({ DB_PASSWORD: "hunter2hunter2" })("my password is hunter2hunter2")).toBe(`my password is ${REDACTED}`)
  })

  it("knows each shape by its prefix and its least length", () => {
    const redact = makeRedactor({})
    const secrets = [
      "sk-abcdefghijklmnop1234",
      "ghs_abcdefghijklmnopqrst",
      "gho_abcdefghijklmnopqrst",
      "glpat-abcdefghij0123456789",
      "xoxp-1234567890",
      "AIzaSyA1234567890abcdefghijklmnopqrstuv",
      "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----"
    ]
    for (const secret of secrets) expect(redact(`(${secret})`), secret).toBe(`(${REDACTED})`)
    const notSecrets = ["sk-abcdefghijklmno", "ghs_abcdefghijklmnopqrs", "glpat-abc", "xoxp-123456789", "xoxz-1234567890", "AKIAIOSFODNN7EXAMPL", "AIzaSyA1234567890abcdefghijklmnopqrs"]
    for (const text of notSecrets) expect(redact(text), text).toBe(text)
  })

  it("replaces every key in a text, not only the first", () => {
    const redact = makeRedactor({})
    expect(redact("a sk-abcdefghijklmnop1234 b ghp_abcdefghijklmnopqrst c AKIAIOSFODNN7EXAMPLE")).toBe(
      `a ${REDACTED} b ${REDACTED} c ${REDACTED}`
    )
  })

  it("keeps the scheme of an authorization header, whatever space follows it", () => {
    const redact = makeRedactor({})
    expect(redact("Authorization: Bearer \t abcdefghijklmnop1234")).toBe(`Authorization: Bearer ${REDACTED}`)
    expect(redact("Authorization: Basic\n  dXNlcjpwYXNzd29yZDEyMzQ=")).toBe(`Authorization: Basic ${REDACTED}`)
    expect(redact("Bearer short")).toBe("Bearer short")
  })
})

describe("secret anchors (what the iteration log looks for in bytes)", () => {
  const utf8 = (text: string) => new TextEncoder().encode(text)
  /** Where, in `bytes`, an anchor of `redact` is found and its check lets the find through. */
  const finds = (redact: Redactor, text: string) => {
    const bytes = utf8(text)
    const found: Array<number> = []
    for (const anchor of redact.anchors!) {
      for (let at = 0; at + anchor.needle.length <= bytes.length; at++) {
        const here = anchor.needle.every((byte, i) => bytes[at + i] === byte)
        if (here && (anchor.check === undefined || anchor.check(bytes, at))) found.push(at)
      }
    }
    return found
  }
  const shapes = () => makeRedactor({})

  it("find every shape of key the redactor replaces", () => {
    const redact = shapes()
    for (
      const secret of [
        "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
        "sk-abcdefghijklmnop1234",
        "ghp_abcdefghijklmnopqrst",
        "ghr_abcdefghijklmnopqrst",
        "ghs_abcdefghijklmnopqrst",
        "ghu_abcdefghijklmnopqrst",
        "gho_abcdefghijklmnopqrst",
        "github_pat_11ABCDEFG0123456789abcdef",
        "glpat-abcdefghij0123456789",
        "xoxa-1234567890",
        "xoxs-1234567890",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "Bearer abcdefghijklmnop1234",
        "Basic abcdefghijklmnop1234"
      ]
    ) {
      expect(redact(`x ${secret} y`), secret).not.toBe(`x ${secret} y`)
      expect(finds(redact, `x ${secret} y`), secret).not.toHaveLength(0)
    }
  })

  it("let through no find whose neighbouring bytes rule a key out", () => {
    const redact = shapes()
    for (
      const text of [
        "KXY-----",
        "XEY-----",
        "ak-",
        "xk-",
        "ahp_",
        "gap_",
        "xgo_",
        "ghx_",
        "gitlab_pat_",
        "xithub_pat_",
        "githuX_pat_",
        "xlpat-",
        "xoy",
        "xoxz-",
        "xoxb_",
        "BIza"
      ]
    ) {
      expect(finds(redact, text), text).toHaveLength(0)
    }
  })

  it("find nothing in ordinary words, at a batch's start or end either", () => {
    const redact = shapes()
    for (const text of ["sure", "rough", "push it high", "output", "o", "enough"]) {
      expect(finds(redact, text), text).toHaveLength(0)
    }
  })

  it("let a find through when the bytes its check reads are not in this batch", () => {
    // The bytes before the find, or after it, come in another batch: they may be a key's.
    const redact = shapes()
    for (const text of ["Y-----", "EY-----", "k-", "p_", "hp_", "o_", "_pat_", "b_pat_", "lpat-", "xo", "xox", "xoxb", "Iza"]) {
      expect(finds(redact, text), text).not.toHaveLength(0)
    }
  })

  it("find a secret value by bytes of its first line, checked against that whole line", () => {
    const redact = makeRedactor({ DEPLOY_TOKEN: "zq-Deploy-7f3a9c2e1b", DB_PASSWORD: "first-line-of-it\nsecond line" })
    expect(finds(redact, "token zq-Deploy-7f3a9c2e1b.")).not.toHaveLength(0)
    expect(finds(redact, "first-line-of-it")).not.toHaveLength(0)
    expect(finds(redact, "zq-Deploy-7f3a9c2e1c")).toHaveLength(0)
    expect(finds(redact, "Xq-Deploy-7f3a9c2e1b")).toHaveLength(0)
    const values = redact.anchors!.slice(makeRedactor({}).anchors!.length)
    expect(values.map((anchor) => anchor.needle.length)).toEqual([4, 4])
    // The longer value's first.
    expect(values.map((anchor) => anchor.multiline)).toEqual([true, false])
  })
})

describe("secret anchors in the iteration log", () => {
  /** What the byte log of `redact` writes of `text`, pushed whole and flushed. */
  const logged = (redact: Redactor, text: string) => {
    const log = makeByteOutputLog(redact, redact.anchors!)
    const pieces = [...log.push(new TextEncoder().encode(text)), ...log.flush()]
    return pieces.map((piece) => typeof piece === "string" ? piece : new TextDecoder().decode(piece)).join("")
  }

  it("redacts a private key over all its lines", () => {
    const redact = makeRedactor({})
    const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabcdefgh\n-----END RSA PRIVATE KEY-----"
    expect(logged(redact, `key:\n${key}\ndone\n`)).toBe(`key:\n${REDACTED}\ndone\n`)
  })

  it("redacts a token that comes on the line after its authorization scheme", () => {
    const redact = makeRedactor({})
    expect(logged(redact, "Authorization: Bearer\n  abcdefghijklmnop1234\ndone\n")).toBe(`Authorization: Bearer ${REDACTED}\ndone\n`)
    expect(logged(redact, "Authorization: Basic\r\n dXNlcjpwYXNzd29yZDEyMzQ=\ndone\n")).toBe(`Authorization: Basic ${REDACTED}\ndone\n`)
  })
})
