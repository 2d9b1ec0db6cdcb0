/**
 * Set up before every test of this package: each request body the SDK sends
 * (through the global `fetch`) is checked against the rules of Gemini's
 * v1beta `Schema` object (`geminiSpec.ts`), and a test that sent a schema
 * breaking them fails, whatever it asserted itself.
 */
import { afterEach, expect } from "vitest"
import { requestViolations } from "./geminiSpec.js"

const found: Array<string> = []
const original = globalThis.fetch

globalThis.fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
  if (/:(stream)?generateContent/i.test(url) && typeof init?.body === "string") {
    try {
      found.push(...requestViolations(JSON.parse(init.body)).map((violation) => `${url}: ${violation}`))
    } catch {
      // Not JSON: nothing to check.
    }
  }
  return original(input, init)
}

afterEach(() => {
  const violations = found.splice(0)
  expect(violations, "schemas sent that Gemini's v1beta Schema refuses").toEqual([])
})
