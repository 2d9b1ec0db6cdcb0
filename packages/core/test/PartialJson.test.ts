/**
 * The lenient parser behind `chat.streamStructured`: the value known so far of
 * JSON text cut anywhere.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { parse } from "../src/internal/partialJson.js"
import { maxJsonDepth } from "../src/internal/schema.js"

/**
 * "What a shorter prefix knew is still true of a longer one": nothing known
 * fits anything; a string may grow at its end; an array may grow, its known
 * items each growing; an object may gain keys, its known values each growing;
 * numbers, booleans and null never change once known.
 */
const grows = (before: unknown, after: unknown): boolean => {
  if (before === undefined) return true
  if (typeof before === "string") return typeof after === "string" && after.startsWith(before)
  if (Array.isArray(before)) {
    return Array.isArray(after) && before.length <= after.length && before.every((item, i) => grows(item, after[i]))
  }
  if (typeof before === "object" && before !== null) {
    if (typeof after !== "object" || after === null || Array.isArray(after)) return false
    return Object.keys(before).every((key) =>
      Object.hasOwn(after, key) && grows((before as Record<string, unknown>)[key], (after as Record<string, unknown>)[key])
    )
  }
  return Object.is(before, after)
}

const valueOf = (text: string, complete = false) => parse(text, complete)?.value

/** JSON text of any JSON value, compact or indented (whitespace between tokens). */
const arbText = fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.boolean()).map(([value, indent]) =>
  JSON.stringify(value, null, indent ? 2 : undefined)
)

describe("partialJson.parse", () => {
  it.each([
    ["", undefined],
    ["  ", undefined],
    ["{", {}],
    ["{\"na", {}],
    ["{\"name\"", {}],
    ["{\"name\":", {}],
    ["{\"name\": \"Ad", { name: "Ad" }],
    ["{\"name\": \"Ada\", \"age\": 3", { name: "Ada" }],
    ["{\"name\": \"Ada\", \"age\": 36", { name: "Ada" }],
    ["{\"name\": \"Ada\", \"age\": 36,", { name: "Ada", age: 36 }],
    ["{\"name\": \"Ada\", \"age\": 36}", { name: "Ada", age: 36 }],
    ["{\"ok\": tr", {}],
    ["{\"ok\": true", { ok: true }],
    ["{\"ok\": nul", {}],
    ["{\"ok\": null", { ok: null }],
    ["[1, 2", [1]],
    ["[1, 2.", [1]],
    ["[1, 2.5e", [1]],
    ["[1, -", [1]],
    ["[1, 2.5e3]", [1, 2500]],
    ["{\"a\": [{\"b\": \"x", { a: [{ b: "x" }] }],
    ["{\"a\": [[], {}", { a: [[], {}] }],
    ["\"line\\", "line"],
    ["\"caf\\u00e", "caf"],
    ["\"caf\\u00e9", "café"],
    ["\"tab\\tend\"", "tab\tend"],
    ["12", undefined],
    ["12 ", 12]
  ])("%j → %j", (text, expected) => {
    expect(valueOf(text)).toStrictEqual(expected)
  })

  it("a number at the very end counts only when the text is said to be complete", () => {
    expect(valueOf("-12.5e2", true)).toBe(-1250)
    expect(valueOf("[3", true)).toStrictEqual([3])
    expect(valueOf("[3")).toStrictEqual([])
  })

  it.each([
    ["{\"a\": 1}} trailing", { a: 1 }],
    ["{\"a\" 1}", {}],
    ["[1,]", [1]],
    ["{\"a\": 1,}", { a: 1 }],
    ["[01]", []],
    ["[1x]", [1]],
    ["{\"a\": \"raw\nnewline\"}", {}],
    ["{\"a\": \"bad \\q escape\"}", {}],
    ["[\"\\u12G4\"]", []],
    ["{1: 2}", {}],
    ["[tx]", []],
    ["nonsense", undefined]
  ])("malformed %j: the value read before the bad spot, no throw", (text, expected) => {
    expect(valueOf(text)).toStrictEqual(expected)
  })

  it("a \"__proto__\" key is an own property, as JSON.parse makes it: no prototype is changed", () => {
    const text = "{\"__proto__\": {\"polluted\": true}, \"a\": {\"__proto__\": [1]}}"
    const value = valueOf(text) as Record<string, unknown>
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.hasOwn(value, "__proto__")).toBe(true)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect((value as { polluted?: unknown }).polluted).toBeUndefined()
    expect(value).toStrictEqual(JSON.parse(text))
    const partial = valueOf("{\"__proto__\": {\"polluted\": tr") as Record<string, unknown>
    expect(Object.getPrototypeOf(partial)).toBe(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(partial, "__proto__")?.value).toStrictEqual({})
  })

  it("deep nesting never recurses: content past the depth limit is left out", () => {
    const depthOf = (value: unknown): number => {
      let depth = 0
      while (Array.isArray(value)) {
        depth++
        value = value[0]
      }
      return depth
    }
    const deep = "[".repeat(100_000)
    expect(depthOf(valueOf(deep))).toBe(maxJsonDepth)
    expect(depthOf(valueOf(deep + "]".repeat(100_000), true))).toBe(maxJsonDepth)
    expect(depthOf(valueOf("[".repeat(10) + "]".repeat(10), true))).toBe(10)
  })

  it("huge input: a long string, many escapes, a long array", () => {
    expect((valueOf("\"" + "a".repeat(1_000_000)) as string).length).toBe(1_000_000)
    expect(valueOf("\"" + "\\n".repeat(200_000))).toBe("\n".repeat(200_000))
    expect((valueOf("[" + "1,".repeat(200_000)) as Array<number>).length).toBe(200_000)
  })

  it("the whole text of any JSON value (complete) gives what JSON.parse gives", () => {
    fc.assert(fc.property(arbText, (text) => {
      expect(valueOf(text, true)).toStrictEqual(JSON.parse(text))
    }), { numRuns: 100 })
  })

  it("the whole text of a JSON value that is not a bare number gives what JSON.parse gives even when not said complete", () => {
    fc.assert(fc.property(arbText.filter((text) => typeof JSON.parse(text) !== "number"), (text) => {
      expect(valueOf(text)).toStrictEqual(JSON.parse(text))
    }), { numRuns: 100 })
  })

  it("any two prefixes: never throws, and what the shorter knew the longer still knows (and the whole value too)", () => {
    fc.assert(fc.property(arbText, fc.nat(), fc.nat(), (text, a, b) => {
      const [short, long] = [a % (text.length + 1), b % (text.length + 1)].sort((x, y) => x - y)
      const before = valueOf(text.slice(0, short))
      const after = valueOf(text.slice(0, long))
      expect(grows(before, after)).toBe(true)
      expect(grows(after, JSON.parse(text))).toBe(true)
    }), { numRuns: 100 })
  })

  it("every prefix of any text (JSON or not) parses without throwing", () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (text) => {
      for (let n = 0; n <= text.length; n++) parse(text.slice(0, n))
    }), { numRuns: 100 })
  })

  it("every prefix of an object's text holds a value as soon as its opening brace arrived", () => {
    fc.assert(fc.property(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { noNullPrototype: true }), (object) => {
      const text = JSON.stringify(object)
      for (let n = 1; n <= text.length; n++) {
        const value = valueOf(text.slice(0, n))
        expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true)
      }
    }), { numRuns: 100 })
  })
})
