/**
 * The written-out constructors of `Turn.Decision`, `Turn.Event` and `Turn.Outcome`
 * (`turn/internal/constructors.ts`) against `Data.taggedEnum`'s: every variant, with every subset
 * of its optional fields given, built both ways, gives the same object with the same keys in the
 * same order. Two differences are by design and normalised here: the written-out constructors put
 * `_tag` first (`Data.taggedEnum` spreads the fields, then adds it), and they leave out an
 * optional field given as `undefined` (`Data.taggedEnum` keeps the key).
 *
 * The samples are typed so that a field added to a variant does not compile until it is given
 * here (`Required<…>`, and every optional key listed): a constructor that then drops it fails.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Data from "effect/Data"
import type * as Messages from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"

type Fields<A, T> = Omit<Extract<A, { readonly _tag: T }>, "_tag">
type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T]
/** For each variant: a value for every field, and the optional ones (each of them, no other). */
type Samples<A extends { readonly _tag: string }> = {
  readonly [T in A["_tag"]]: {
    readonly full: Required<Fields<A, T>>
    readonly optional: { readonly [K in OptionalKeys<Fields<A, T>>]: true }
  }
}

const policy: Messages.DecisionPolicy = { approve: { anyOf: [{ role: "admin" }] }, quorum: 1 } as Messages.DecisionPolicy
const review: Messages.Review = { verdict: "needs-person", reason: "it sends mail", confidence: 0.5 }
const file: Messages.FilePart = { _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: "iVBORw0KGgo=" } }
const request: Messages.InputRequest = { id: "elicitation-1", from: "server", message: "Which?", requestedSchema: { type: "object" }, deadline: 5 }
const message: Messages.Message = { role: "assistant", parts: [{ _tag: "Text", text: "hi" }] }
const call = { _tag: "ToolCall", id: "c1", name: "send", arguments: "{}", status: { _tag: "Proposed" } } as Messages.ToolCallPart
const usage = { inputTokens: 1, outputTokens: 2 }

const decisions: Samples<Turn.Decision> = {
  Execute: { full: {}, optional: {} },
  RequireApproval: { full: { expiresAt: 10, review, policy }, optional: { expiresAt: true, review: true, policy: true } },
  Defer: { full: { at: 10, policy }, optional: { policy: true } },
  Reject: { full: { reason: "no" }, optional: {} },
  Invalid: { full: { message: "bad" }, optional: {} },
  Granted: { full: { grant: "g1", policy }, optional: { policy: true } }
}

const events: Samples<Turn.Event> = {
  Resume: {
    full: { now: 1, invalidEdits: [{ id: "c1", detail: "bad" }], rerun: ["c2"] },
    optional: { invalidEdits: true, rerun: true }
  },
  ModelResponded: { full: { message }, optional: {} },
  Decided: {
    full: { now: 1, decisions: [{ id: "c1", decision: Turn.Decision.Execute() }], grants: { conversation: "k", user: "u" } },
    optional: { grants: true }
  },
  ToolSucceeded: { full: { id: "c1", result: { ok: true }, files: [file] }, optional: { files: true } },
  ToolFailed: { full: { id: "c1", error: "boom", files: [file] }, optional: { files: true } },
  InputRequested: { full: { id: "c1", request }, optional: {} },
  InputSettled: { full: { id: "c1", requestId: "elicitation-1" }, optional: {} },
  InputArrived: { full: { input: [{ role: "user", parts: [{ _tag: "Text", text: "more" }] }], interrupted: message }, optional: { interrupted: true } }
}

const outcomes: Samples<Turn.Outcome> = {
  CallModel: { full: { step: 1 }, optional: {} },
  Decide: { full: { calls: [call] }, optional: {} },
  RunTools: { full: { calls: [call] }, optional: {} },
  AwaitTools: { full: { ids: ["c1"] }, optional: {} },
  Wait: { full: { until: 5, reason: { _tag: "Scheduled", toolIds: ["c1"], earliest: 5 } }, optional: {} },
  Pause: { full: { reason: { _tag: "AwaitingApproval", toolIds: ["c1"] }, usage }, optional: {} },
  Complete: { full: { response: message, usage }, optional: {} },
  StepLimit: { full: { maxSteps: 3 }, optional: {} },
  InvalidEdits: { full: { edits: [{ id: "c1", name: "send", detail: "bad" }] }, optional: {} },
  PendingCalls: { full: { ids: ["c1"] }, optional: {} },
  InputLimit: { full: { maxInputRestarts: 8 }, optional: {} }
}

/** Every subset of `keys`. */
const subsets = (keys: ReadonlyArray<string>): ReadonlyArray<ReadonlyArray<string>> =>
  keys.reduce<ReadonlyArray<ReadonlyArray<string>>>((acc, key) => [...acc, ...acc.map((subset) => [...subset, key])], [[]])

/** The props of a variant with the optional fields outside `given` left out, or (`asUndefined`) given as `undefined`. */
const propsOf = (
  full: Readonly<Record<string, unknown>>,
  optional: ReadonlyArray<string>,
  given: ReadonlyArray<string>,
  asUndefined: boolean
): Record<string, unknown> => {
  const props: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(full)) {
    if (!optional.includes(key) || given.includes(key)) props[key] = value
    else if (asUndefined) props[key] = undefined
  }
  return props
}

/** `Data.taggedEnum`'s value as the written-out constructors make it: `_tag` first, no key holding `undefined`. */
const normal = (value: { readonly _tag: string }): Record<string, unknown> => {
  const out: Record<string, unknown> = { _tag: value._tag }
  for (const [key, field] of Object.entries(value)) if (key !== "_tag" && field !== undefined) out[key] = field
  return out
}

type AnyConstructors = Readonly<Record<string, (props: Record<string, unknown>) => { readonly _tag: string }>>

const compare = (name: string, written: unknown, reference: unknown, samples: Readonly<Record<string, { readonly full: object; readonly optional: object }>>) => {
  describe(name, () => {
    for (const [tag, { full, optional }] of Object.entries(samples)) {
      const optionalKeys = Object.keys(optional)
      for (const given of subsets(optionalKeys)) {
        for (const asUndefined of optionalKeys.length === 0 || given.length === optionalKeys.length ? [false] : [false, true]) {
          it(`${tag} with ${given.length === 0 ? "no optional field" : given.join(", ")}${asUndefined ? " (the rest undefined)" : ""}`, () => {
            const props = propsOf(full as Record<string, unknown>, optionalKeys, given, asUndefined)
            const ours = (written as AnyConstructors)[tag]!(props)
            const theirs = normal((reference as AnyConstructors)[tag]!(props))
            expect(ours).toStrictEqual(theirs)
            expect(Object.keys(ours)).toStrictEqual(Object.keys(theirs))
            // Every field given with a value is on the result.
            for (const [key, value] of Object.entries(props)) if (value !== undefined) expect(ours).toHaveProperty([key], value)
          })
        }
      }
    }
  })
}

describe("Turn's written-out constructors make what Data.taggedEnum makes", () => {
  compare("Decision", Turn.Decision, Data.taggedEnum<Turn.Decision>(), decisions)
  compare("Event", Turn.Event, Data.taggedEnum<Turn.Event>(), events)
  compare("Outcome", Turn.Outcome, Data.taggedEnum<Turn.Outcome>(), outcomes)

  it("every variant has a sample (a variant added to a type is compared too)", () => {
    const probe = (value: object) => Object.keys(value).filter((key) => !key.startsWith("$")).sort()
    expect(probe(Turn.Decision)).toStrictEqual(Object.keys(decisions).sort())
    expect(probe(Turn.Event)).toStrictEqual(Object.keys(events).sort())
    expect(probe(Turn.Outcome)).toStrictEqual(Object.keys(outcomes).sort())
  })
})
