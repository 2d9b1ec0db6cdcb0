/**
 * Generators of conversations, events and whole turn scripts for the
 * property tests of the reducer.
 */
import fc from "fast-check"
import * as Schema from "effect/Schema"
import * as S from "../../src/internal/schema.js"
import * as Messages from "../../src/turn/Messages.js"
import type { Message, Part } from "../../src/turn/Messages.js"
import * as Turn from "../../src/turn/Turn.js"

/** A JSON value (what tools return and what is stored). */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** JSON values that survive `JSON.stringify`/`JSON.parse` unchanged (no -0, NaN, infinities or odd keys). */
export const json: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 2 },
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -1000, max: 1000 }),
    fc.string({ maxLength: 8 }),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "result", "error"), tie("value"), { maxKeys: 3, noNullPrototype: true })
  )
})).value

// ---------------------------------------------------------------------------
// Turn scripts (played by the driver)
// ---------------------------------------------------------------------------

/** What the strategies decide for a call; times are relative to the decision. */
export type DecisionScript =
  | { readonly kind: "Execute" }
  | { readonly kind: "RequireApproval"; readonly expiresIn: number | undefined }
  /** `delay <= 0` defers to a time already past. */
  | { readonly kind: "Defer"; readonly delay: number }
  | { readonly kind: "Reject"; readonly reason: string }
  | { readonly kind: "Invalid"; readonly message: string }

/**
 * What the person does the first time a paused call is shown to them:
 * `later` leaves it (a call awaiting approval is then approved the next time,
 * a scheduled call is left to its time); `approveInvalidEdit` approves with
 * edited arguments the shell finds invalid, then corrects them.
 */
export type PersonScript = "approve" | "approveEdited" | "approveInvalidEdit" | "reject" | "later"

export interface CallScript {
  readonly name: string
  readonly arguments: string
  readonly decision: DecisionScript
  readonly person: PersonScript
  readonly result: { readonly ok: true; readonly value: Json } | { readonly ok: false; readonly error: Json }
  /** The person and the tools handle calls in the order of this key. */
  readonly order: number
}

export interface ResponseScript {
  readonly text: string
  readonly calls: ReadonlyArray<CallScript>
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number }
  /** The model claims its calls are already approved or completed (must be ignored). */
  readonly claimStatuses: boolean
}

export interface Script {
  readonly maxSteps: number
  readonly waitForScheduled: boolean
  /** Start with an earlier, finished turn in the history. */
  readonly history: boolean
  /** The model's answer to model call n is `responses[n - 1]`; past the end it answers with text. */
  readonly responses: ReadonlyArray<ResponseScript>
  /** How far the clock moves at each pause (cycled). */
  readonly clock: ReadonlyArray<number>
  /** Whether the conversation is stored as JSON and loaded back at each pause (cycled). */
  readonly storeAtPause: ReadonlyArray<boolean>
  /** Send stray events (results, decisions, responses that do not fit) at each pause. */
  readonly strayEvents: boolean
}

export const decisionScript: fc.Arbitrary<DecisionScript> = fc.oneof(
  fc.constant({ kind: "Execute" as const }),
  fc.record({
    kind: fc.constant("RequireApproval" as const),
    expiresIn: fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined })
  }, { noNullPrototype: true }),
  fc.record({ kind: fc.constant("Defer" as const), delay: fc.integer({ min: -2000, max: 5000 }) }, { noNullPrototype: true }),
  fc.record({ kind: fc.constant("Reject" as const), reason: fc.string({ maxLength: 10 }) }, { noNullPrototype: true }),
  fc.record({ kind: fc.constant("Invalid" as const), message: fc.string({ maxLength: 10 }) }, { noNullPrototype: true })
)

export const personScript: fc.Arbitrary<PersonScript> = fc.constantFrom(
  "approve",
  "approveEdited",
  "approveInvalidEdit",
  "reject",
  "later"
)

export const callScript: fc.Arbitrary<CallScript> = fc.record({
  name: fc.constantFrom("search", "delete_file", "send_email", "pay"),
  arguments: fc.oneof(json.map((value) => JSON.stringify(value)), fc.constant("{not json")),
  decision: decisionScript,
  person: personScript,
  result: fc.oneof(
    fc.record({ ok: fc.constant(true as const), value: json }, { noNullPrototype: true }),
    fc.record({ ok: fc.constant(false as const), error: json }, { noNullPrototype: true })
  ),
  order: fc.integer({ min: 0, max: 100 })
}, { noNullPrototype: true })

export const responseScript: fc.Arbitrary<ResponseScript> = fc.record({
  text: fc.string({ maxLength: 10 }),
  calls: fc.array(callScript, { maxLength: 4 }),
  usage: fc.record({ inputTokens: fc.nat(1000), outputTokens: fc.nat(1000) }, { noNullPrototype: true }),
  claimStatuses: fc.boolean()
}, { noNullPrototype: true })

export const script: fc.Arbitrary<Script> = fc.record({
  maxSteps: fc.integer({ min: 1, max: 5 }),
  waitForScheduled: fc.boolean(),
  history: fc.boolean(),
  responses: fc.array(responseScript, { maxLength: 6 }),
  clock: fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 5 }),
  storeAtPause: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
  strayEvents: fc.boolean()
}, { noNullPrototype: true })

// ---------------------------------------------------------------------------
// Any message the Schema allows, for totality
// ---------------------------------------------------------------------------

// Effect 4's `Arbitrary` no longer builds fast-check arbitraries, so these follow the Schema of
// `src/internal/schema.ts` field by field, as Effect 3's `Arbitrary.make` derived them: structs are
// `fc.record`s with their optional keys absent or present, unions `fc.oneof`, strings any strings,
// numbers any doubles their checks allow (Effect 3 drew 32-bit floats; -0 included), records entries
// assigned to `{}`, and JSON values `fc.jsonValue` read back through JSON (the `Json` annotation).
//
// Everywhere here `noNullPrototype: true` keeps fast-check 4's records and dictionaries the plain
// objects fast-check 3 made by default (the tests compare with `structuredClone` and JSON copies).

/** Whether the Schema takes `undefined` for an optional key of this sample (Effect's `optional` does, `optionalKey` does not). */
const takesUndefined = (schema: Schema.Constraint, sample: object): boolean => Schema.is(schema)(sample)

/** A struct: its optional keys absent or present (present as `undefined` too, where the Schema takes it). */
const struct = <A>(
  required: { readonly [K in string]: fc.Arbitrary<unknown> },
  optional: { readonly [K in string]: fc.Arbitrary<unknown> },
  undefinedToo: boolean
): fc.Arbitrary<A> => {
  const fields: Record<string, fc.Arbitrary<unknown>> = { ...required }
  for (const [key, arb] of Object.entries(optional)) fields[key] = undefinedToo ? fc.oneof(arb, fc.constant(undefined)) : arb
  return fc.record(fields, { requiredKeys: Object.keys(required), noNullPrototype: true }) as unknown as fc.Arbitrary<A>
}

/** Plain JSON data, as the `Json` Schema's arbitrary makes it. */
const jsonData: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown)

/** Epoch milliseconds a `Date` can hold (`Millis`). */
const millisArb: fc.Arbitrary<number> = fc.double({ min: -S.maxMillis, max: S.maxMillis, noNaN: true })

/** A finite number (`Usage`'s counts). */
const finite: fc.Arbitrary<number> = fc.double({ noNaN: true, noDefaultInfinity: true })

/** A record, built by assigning its entries to `{}` as Effect 3 did (so a "__proto__" key sets the prototype). */
const record: fc.Arbitrary<Record<string, unknown>> = fc.array(fc.tuple(fc.string(), jsonData)).map((entries) => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of entries) out[key] = value
  return out
})

const decisionRecord = (u: boolean) => struct({ by: fc.string(), at: millisArb }, {}, u)

/** A request for a person's input (`Messages.InputRequest`), its schema a plain JSON object. */
export const inputRequest = (u: boolean = false): fc.Arbitrary<Messages.InputRequest> =>
  struct({
    id: fc.string({ minLength: 1, maxLength: 4 }),
    from: fc.string(),
    message: fc.string(),
    requestedSchema: fc.dictionary(fc.string().filter((key) => key !== "__proto__"), jsonData, { noNullPrototype: true, maxKeys: 3 }),
    deadline: millisArb
  }, {}, u)

const statusArb = (u: boolean): fc.Arbitrary<Messages.ToolCallStatus> => {
  const decision = decisionRecord(u)
  const tag = <T extends string>(t: T) => fc.constant(t)
  return fc.oneof(
    struct({ _tag: tag("Proposed") }, {}, u),
    struct({ _tag: tag("AwaitingApproval") }, { expiresAt: millisArb }, u),
    struct({ _tag: tag("Scheduled"), at: millisArb }, {}, u),
    struct({ _tag: tag("Approved") }, { editedArguments: fc.string(), expiresAt: millisArb, scheduledAt: millisArb, decision }, u),
    struct({ _tag: tag("Running") }, {
      editedArguments: fc.string(),
      attempt: fc.integer({ min: 1 }),
      decision,
      inputRequests: fc.array(inputRequest(u), { maxLength: 3 })
    }, u),
    struct({ _tag: tag("Completed"), result: jsonData }, { editedArguments: fc.string(), decision }, u),
    struct({ _tag: tag("Failed"), error: jsonData }, { editedArguments: fc.string(), decision }, u),
    struct({ _tag: tag("Rejected"), by: fc.constantFrom("user", "policy") }, { reason: fc.string(), decision }, u)
  ) as fc.Arbitrary<Messages.ToolCallStatus>
}

const partArb = (u: boolean): fc.Arbitrary<Part> =>
  fc.oneof(
    struct({ _tag: fc.constant("Text"), text: fc.string() }, {}, u),
    struct({ _tag: fc.constant("Reasoning"), text: fc.string() }, { signature: fc.string(), providerMetadata: record }, u),
    struct({
      _tag: fc.constant("File"),
      mediaType: fc.string(),
      data: fc.oneof(
        struct({ _tag: fc.constant("Base64"), base64: fc.string() }, {}, u),
        struct({ _tag: fc.constant("Url"), url: fc.string() }, {}, u)
      )
    }, { filename: fc.string() }, u),
    struct({
      _tag: fc.constant("ToolCall"),
      id: fc.string({ minLength: 1 }),
      name: fc.string(),
      arguments: fc.string(),
      status: statusArb(u)
    }, {}, u)
  ) as fc.Arbitrary<Part>

/** The optional keys of the stored format take `undefined` (asked of the Schema itself). */
const undefinedKeys = takesUndefined(Messages.Message, {
  role: "assistant",
  parts: [{ _tag: "ToolCall", id: "c", name: "t", arguments: "{}", status: { _tag: "AwaitingApproval", expiresAt: undefined } }],
  usage: undefined
})

/** Any message the Schema of the stored format allows. */
export const message: fc.Arbitrary<Message> = struct<Message>({
  role: fc.constantFrom("system", "user", "assistant"),
  parts: fc.array(partArb(undefinedKeys))
}, {
  usage: struct({ inputTokens: finite, outputTokens: finite }, { reasoningTokens: finite, cachedInputTokens: finite }, undefinedKeys),
  finishReason: fc.constantFrom("stop", "tool-calls", "length", "content-filter", "error", "other"),
  providerMetadata: record
}, undefinedKeys)

// ---------------------------------------------------------------------------
// Arbitrary conversations and events, for totality
// ---------------------------------------------------------------------------

/**
 * Whether a value holds an object with an own "__proto__" key, anywhere, or one whose prototype
 * such a key set (a record entry "__proto__": null assigned to `{}` makes a null-prototype object,
 * which a copy by `structuredClone` does not keep: about one conversation in 100,000).
 */
const hasProtoKey = (value: unknown): boolean =>
  typeof value === "object" && value !== null &&
  (Object.prototype.hasOwnProperty.call(value, "__proto__") ||
    Object.getPrototypeOf(value) !== (Array.isArray(value) ? Array.prototype : Object.prototype) ||
    Object.values(value).some(hasProtoKey))

/**
 * Any message the Schema allows, then made to satisfy what `Messages.decode`
 * checks (tool calls only in assistant messages, unique ids). Records with an
 * own "__proto__" key are left out: Schema decoding of a record assigns keys,
 * so that key is lost (a known limitation, not the reducer's).
 */
export const conversation: fc.Arbitrary<Messages.Messages> = fc
  .array(message, { maxLength: 5 })
  .filter((messages) => !hasProtoKey(messages))
  .map((messages) => {
    let n = 0
    return messages.map((message): Message => {
      const parts = message.parts.map((part): Part => (part._tag === "ToolCall" ? { ...part, id: `call-${n++}` } : part))
      const hasCalls = parts.some((part) => part._tag === "ToolCall")
      return { ...message, role: hasCalls ? "assistant" : message.role, parts }
    })
  })

const millis = millisArb

/** A time: mostly near the epoch of the generated statuses, sometimes anywhere. */
const now: fc.Arbitrary<number> = fc.oneof(fc.integer({ min: -10_000, max: 10_000 }), millis)

const decision: fc.Arbitrary<Turn.Decision> = fc.oneof(
  fc.constant(Turn.Decision.Execute()),
  now.map((expiresAt) => Turn.Decision.RequireApproval({ expiresAt })),
  fc.constant(Turn.Decision.RequireApproval({})),
  now.map((at) => Turn.Decision.Defer({ at })),
  fc.string().map((reason) => Turn.Decision.Reject({ reason })),
  fc.string().map((message) => Turn.Decision.Invalid({ message }))
)

/** The ids of the input requests the conversation's running calls wait on (as arbitraries, to mix in). */
const requestIds = (messages: Messages.Messages): ReadonlyArray<fc.Arbitrary<string>> => {
  const ids = Messages.pendingInputs(messages).map(({ request }) => request.id)
  return ids.length === 0 ? [] : [fc.constantFrom(...ids)]
}

/** Any event, with ids mostly taken from the conversation's calls. */
export const eventFor = (messages: Messages.Messages): fc.Arbitrary<Turn.Event> => {
  const ids = Messages.toolCalls(messages).map((c) => c.id)
  const id = ids.length === 0 ? fc.constant("none") : fc.oneof(fc.constantFrom(...ids), fc.constant("none"))
  return fc.oneof(
    fc.record({
      now,
      invalidEdits: fc.option(fc.array(fc.record({ id, detail: fc.string() }, { noNullPrototype: true }), { maxLength: 2 }), { nil: undefined })
    }, { noNullPrototype: true }).map((e) => Turn.Event.Resume(e)),
    message.map((message) => Turn.Event.ModelResponded({ message })),
    fc.record({ now, decisions: fc.array(fc.record({ id, decision }, { noNullPrototype: true }), { maxLength: 4 }) }, { noNullPrototype: true }).map((e) =>
      Turn.Event.Decided(e)
    ),
    fc.record({ id, result: json }, { noNullPrototype: true }).map((e) => Turn.Event.ToolSucceeded(e)),
    fc.record({ id, error: json }, { noNullPrototype: true }).map((e) => Turn.Event.ToolFailed(e)),
    // A request as a handler would record it, or anything at all in its place (hostile or broken).
    fc.record({ id, request: fc.oneof(inputRequest(), json as fc.Arbitrary<never>) }, { noNullPrototype: true }).map((e) =>
      Turn.Event.InputRequested(e)
    ),
    fc.record({ id, requestId: fc.oneof(fc.string({ maxLength: 4 }), ...requestIds(messages)) }, { noNullPrototype: true }).map((e) =>
      Turn.Event.InputSettled(e)
    )
  )
}

export const config: fc.Arbitrary<Turn.Config> = fc.record({
  maxSteps: fc.integer({ min: 0, max: 6 }),
  waitForScheduled: fc.boolean()
}, { noNullPrototype: true })
