/**
 * `Messages.toJson` / `fromJson` take a fast path (a check compiled from the
 * Schema, then plain JSON) when the Schema would accept the value unchanged.
 * These properties hold them to the Schema path on generated documents and on
 * mutated ones (hostile values included): the same accept/reject, the same
 * messages, the same error.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import * as S from "../src/internal/schema.js"
import * as PlainCheck from "../src/internal/plainCheck.js"
import * as Messages from "../src/turn/Messages.js"
import * as Arb from "./support/arbitraries.js"

const runs = { timeout: 60_000, numRuns: 150 }

/** The Schema path alone, as `toJson` was before the fast path. */
const schemaToJson = (messages: Messages.Messages) => Result.map(Messages.encode(messages), (document) => JSON.stringify(document))

/** The Schema path alone, as `fromJson` was before the fast path. */
const schemaFromJson = (json: string) => Messages.decode(JSON.parse(json))

const nest = (depth: number): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const withProtoKey = (value: unknown): unknown => {
  const o: Record<string, unknown> = {}
  Object.defineProperty(o, "__proto__", { value, enumerable: true, writable: true, configurable: true })
  return o
}

class Box {
  constructor(readonly text: string) {}
}

/** Values to put anywhere: hostile, wrong-typed, or almost right. */
const hostile: fc.Arbitrary<() => unknown> = fc.constantFrom(
  () => Number.NaN,
  () => Number.POSITIVE_INFINITY,
  () => Number.NEGATIVE_INFINITY,
  () => 8.64e15 + 1,
  () => -8.64e15,
  () => 0.5,
  () => -0,
  () => 1,
  () => 0,
  () => "",
  () => "x",
  () => null,
  () => undefined,
  () => true,
  () => ({}),
  () => [],
  () => withProtoKey(1),
  () => ({ _tag: "Completed", result: withProtoKey(1) }),
  () => ({ _tag: "Completed", result: nest(300) }),
  () => ({ _tag: "Completed", result: nest(200) }),
  () => ({ _tag: "Scheduled", at: Number.NaN }),
  () => ({ _tag: "Scheduled", at: 1e20 }),
  () => ({ _tag: "Running", attempt: 0 }),
  () => ({ _tag: "Running", attempt: 1.5 }),
  () => ({ _tag: "Text", text: "t", extra: 1 }),
  () => ({ _tag: "Unknown" }),
  () => new Date(Number.NaN),
  () => new Date(0),
  () => new Box("t"),
  () => Object.create(null) as unknown,
  () => [1, , 3] // eslint-disable-line no-sparse-arrays
)

type Mutation = { readonly at: number; readonly kind: "set" | "delete" | "add"; readonly key: string; readonly value: () => unknown }

const mutation: fc.Arbitrary<Mutation> = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom("set", "delete", "add"),
  key: fc.constantFrom("_tag", "role", "parts", "status", "usage", "at", "expiresAt", "id", "result", "x", "__proto__"),
  value: hostile
}, { noNullPrototype: true })

/** A deep copy of `value` with one object or array somewhere changed by `m`. */
const mutate = (value: unknown, m: Mutation): unknown => {
  const copy = structuredClone(value)
  const nodes: Array<Record<string, unknown> | Array<unknown>> = []
  const walk = (v: unknown) => {
    if (typeof v !== "object" || v === null) return
    nodes.push(v as Record<string, unknown>)
    for (const child of Object.values(v)) walk(child)
  }
  walk(copy)
  const node = nodes[m.at % nodes.length]!
  const keys = Object.keys(node)
  const key = m.kind === "add" || keys.length === 0 ? m.key : keys[m.at % keys.length]!
  if (m.kind === "delete") delete (node as Record<string, unknown>)[key]
  else Object.defineProperty(node, key, { value: m.value(), enumerable: true, writable: true, configurable: true })
  return copy
}

const sameResult = <A, E extends { readonly detail: string }>(fast: Result.Result<A, E>, reference: Result.Result<A, E>, equal: (a: A, b: A) => void) => {
  expect(fast._tag).toBe(reference._tag)
  if (Result.isSuccess(fast) && Result.isSuccess(reference)) equal(fast.success, reference.success)
  if (Result.isFailure(fast) && Result.isFailure(reference)) expect(fast.failure.detail).toBe(reference.failure.detail)
}

const sameText = (a: string, b: string) => expect(JSON.parse(a)).toEqual(JSON.parse(b))

describe("Messages.toJson / fromJson: the fast path agrees with the Schema", () => {
  it("toJson of generated conversations: same document as the Schema path", () => {
    fc.assert(fc.property(Arb.conversation, (messages) => {
      sameResult(Messages.toJson(messages), schemaToJson(messages), sameText)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("toJson of mutated conversations (NaN, bad dates, deep, __proto__, excess keys, class instances): same result", () => {
    fc.assert(fc.property(Arb.conversation.filter((m) => m.length > 0), mutation, (messages, m) => {
      const mutated = mutate(messages, m) as Messages.Messages
      sameResult(Messages.toJson(mutated), schemaToJson(mutated), sameText)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("fromJson of generated documents: same messages as the Schema path", () => {
    fc.assert(fc.property(Arb.conversation, (messages) => {
      const json = Result.getOrThrow(schemaToJson(messages))
      sameResult(Messages.fromJson(json), schemaFromJson(json), (a, b) => expect(a).toStrictEqual(b))
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("fromJson of mutated documents: same accept/reject and messages as the Schema path", () => {
    fc.assert(fc.property(Arb.conversation.filter((m) => m.length > 0), mutation, (messages, m) => {
      const document = JSON.parse(Result.getOrThrow(schemaToJson(messages))) as unknown
      const json = JSON.stringify(mutate(document, m))
      if (json === undefined) return
      sameResult(Messages.fromJson(json), schemaFromJson(json), (a, b) => expect(a).toEqual(b))
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  // The check must stay as permissive as the Schema, or the fast path silently turns off: a field
  // added to the Schema (an optional one on a call status, say) shows up here as a generated
  // message the check refuses.
  it("the compiled check accepts every message the Schema accepts (JSON data, no \"__proto__\" keys)", () => {
    fc.assert(fc.property(fc.array(Arb.message, { maxLength: 4 }), (generated) => {
      const json = JSON.parse(JSON.stringify(generated)) as unknown
      const check = PlainCheck.make(Schema.Array(S.Message) as Schema.Codec<Messages.Messages, Messages.Messages>)
      const accepted = Result.isSuccess(Schema.decodeUnknownResult(Schema.Array(S.Message), { onExcessProperty: "error" })(json))
      if (!JSON.stringify(json).includes("\"__proto__\"")) expect(check(json)).toBe(accepted)
      if (check(json)) expect(accepted).toBe(true)
    }), { numRuns: runs.numRuns })
  }, runs.timeout)

  it("hostile documents are refused with the Schema's own message", () => {
    const base = { format: "chat-ts/messages", version: 1 }
    const call = (status: unknown) => ({ role: "assistant", parts: [{ _tag: "ToolCall", id: "c1", name: "t", arguments: "{}", status }] })
    const cases = [
      JSON.stringify({ ...base, messages: [call({ _tag: "Completed", result: nest(300) })] }),
      `{"format":"chat-ts/messages","version":1,"messages":[{"role":"user","parts":[],"__proto__":{"x":1}}]}`,
      JSON.stringify({ ...base, messages: [call({ _tag: "Scheduled", at: 1e300 })] }),
      JSON.stringify({ ...base, messages: [call({ _tag: "Scheduled", at: "2026-01-01" })] }),
      JSON.stringify({ ...base, messages: [call({ _tag: "Proposed" }), call({ _tag: "Proposed" })] }),
      JSON.stringify({ ...base, version: 2, messages: [] })
    ]
    for (const json of cases) {
      const fast = Messages.fromJson(json)
      expect(Result.isFailure(fast), json.slice(0, 80)).toBe(true)
      sameResult(fast, schemaFromJson(json), () => {})
    }
    expect(Result.isFailure(Messages.toJson([{ role: "user", parts: [{ _tag: "Text", text: "x" }], usage: { inputTokens: Number.NaN, outputTokens: 0 } }]))).toBe(true)
    // A tag that cannot even be printed is a typed error too, never a throw.
    const unprintable = [{ role: "assistant", parts: [{ _tag: Object.create(null) as string, text: "x" }] }] as unknown as Messages.Messages
    expect(Result.isFailure(Messages.toJson(unprintable))).toBe(true)
  })
})
