/**
 * The stored form of a timed-out call: what 0.1 wrote still decodes, and the text never claims the
 * server stopped the call (cancelling is a request; the outcome is unknown).
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { McpError } from "../src/index.js"

describe("McpCallTimeout", () => {
  it("a 0.1 document (no outcome, no detail) still decodes, and its message says the outcome is unknown", () => {
    const old = Schema.decodeUnknownSync(McpError.McpCallError)({ _tag: "McpCallTimeout", tool: "delete_file", timeoutMillis: 300 })
    expect(old).toBeInstanceOf(McpError.McpCallTimeout)
    expect(old.message).toContain("outcome is unknown")
  })

  it("a new one is stored with outcome unknown and the text the model sees, and decodes back the same", () => {
    const error = McpError.timedOut("delete_file", 300)
    const encoded = Schema.encodeSync(McpError.McpCallError)(error)
    expect(encoded).toMatchObject({ _tag: "McpCallTimeout", outcome: "unknown", detail: expect.stringContaining("may have finished the call anyway") })
    expect(JSON.stringify(encoded)).not.toMatch(/was cancelled/)
    expect(Schema.decodeUnknownSync(McpError.McpCallError)(encoded)).toEqual(error)
  })
})
