import { describe, expect, it } from "@effect/vitest"
import { ChatError, ProviderError } from "../src/index.js"

describe("ProviderError.retryAfterMillis", () => {
  it("reads retry-after-ms, retry-after seconds and retry-after dates", () => {
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), 0)).toBe(250)
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after": "1.5" }), 0)).toBe(1500)
    const now = Date.parse("Wed, 01 Jan 2025 00:00:00 GMT")
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after": "Wed, 01 Jan 2025 00:00:04 GMT" }), now)).toBe(4000)
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after": "Wed, 01 Jan 2025 00:00:04 GMT" }), now + 9000)).toBe(0)
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after": "soon" }), 0)).toBeUndefined()
    expect(ProviderError.retryAfterMillis(new Headers({}), 0)).toBeUndefined()
    expect(ProviderError.retryAfterMillis(undefined, 0)).toBeUndefined()
  })

  it("ignores a negative or non-numeric retry-after-ms and falls back to retry-after", () => {
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after-ms": "-5", "retry-after": "2" }), 0)).toBe(2000)
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after-ms": "NaN", "retry-after": "2" }), 0)).toBe(2000)
    expect(ProviderError.retryAfterMillis(new Headers({ "retry-after-ms": "Infinity" }), 0)).toBeUndefined()
  })

  it("ignores a retry-after that is neither seconds nor an HTTP-date (a negative number is not a year)", () => {
    for (const value of ["-1", "-0.5", "1e3", "12:00", ""]) {
      expect(ProviderError.retryAfterHeaderMillis(new Headers({ "retry-after": value }), 0), value).toBeUndefined()
    }
    expect(ProviderError.retryAfterHeaderMillis(new Headers({ "retry-after": "Thu, 01 Jan 1970 00:00:05 GMT" }), 0)).toBe(5000)
  })

  it("retryAfterHeaderMillis reads only the standard retry-after", () => {
    expect(ProviderError.retryAfterHeaderMillis(new Headers({ "retry-after-ms": "250", "retry-after": "9" }), 0)).toBe(9000)
    expect(ProviderError.retryAfterHeaderMillis(new Headers({ "retry-after-ms": "250" }), 0)).toBeUndefined()
  })
})

describe("ProviderError.makeRedactor", () => {
  it("removes every secret, then applies the rules; empty secrets change nothing", () => {
    const redact = ProviderError.makeRedactor(["s3cret", ""], [[/(key=)\w+/g, `$1${ProviderError.placeholder}`]])
    expect(redact("a s3cret and s3cret, key=abc&x")).toBe("a [redacted] and [redacted], key=[redacted]&x")
    expect(ProviderError.makeRedactor([""])("nothing to hide")).toBe("nothing to hide")
  })

  it("applies a global rule on every call, not only the first", () => {
    const redact = ProviderError.makeRedactor([], [[/tok-\w+/g, ProviderError.placeholder]])
    expect(redact("tok-aaaa")).toBe("[redacted]")
    expect(redact("x tok-bbbb")).toBe("x [redacted]")
  })
})

describe("ProviderError.isModelError", () => {
  it("recognises the core's model errors and nothing shaped like them", () => {
    expect(ProviderError.isModelError(new ChatError.RateLimited({ message: "m" }))).toBe(true)
    expect(ProviderError.isModelError(new ChatError.MalformedResponse({ message: "m" }))).toBe(true)
    expect(ProviderError.isModelError({ _tag: "RateLimited", message: "forged" })).toBe(false)
    expect(ProviderError.isModelError(Object.assign(new Error("x"), { _tag: "StoreError" }))).toBe(false)
    expect(ProviderError.isModelError(null)).toBe(false)
  })
})
