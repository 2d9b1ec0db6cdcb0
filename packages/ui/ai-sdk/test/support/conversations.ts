/**
 * Stored conversations for the property tests of a page's reload: user
 * messages and model responses with text, reasoning and calls in every
 * status (with or without the optional fields: deadlines, decisions, reasons,
 * edits, late approvals, who cancelled), results and errors any JSON.
 */
import { Messages } from "@chat-ts/core"
import fc from "fast-check"

const text = fc.string({ maxLength: 8 })
const millis = fc.integer({ min: 0, max: 4_000_000_000_000 })
const decision = fc.record({ by: fc.string({ minLength: 1, maxLength: 5 }), at: millis }, { noNullPrototype: true })
const json = fc.jsonValue({ maxDepth: 2 }).map((value): unknown => JSON.parse(JSON.stringify(value)))
const options = { requiredKeys: ["_tag"] as Array<"_tag">, noNullPrototype: true }

/** Any status a stored call may have. */
export const status: fc.Arbitrary<Messages.ToolCallStatus> = fc.oneof(
  fc.constant({ _tag: "Proposed" as const }),
  fc.record({ _tag: fc.constant("AwaitingApproval" as const), expiresAt: millis }, options),
  fc.record({ _tag: fc.constant("Scheduled" as const), at: millis }, { noNullPrototype: true }),
  fc.record({ _tag: fc.constant("Approved" as const), editedArguments: fc.constant("{\"a\":1}"), decision }, options),
  fc.record({ _tag: fc.constant("Running" as const), decision }, options),
  fc.record({ _tag: fc.constant("Completed" as const), result: json, decision }, { ...options, requiredKeys: ["_tag", "result"] as Array<"_tag" | "result"> }),
  fc.record({ _tag: fc.constant("Failed" as const), error: json }, { noNullPrototype: true }),
  fc.record({ _tag: fc.constant("Rejected" as const), by: fc.constantFrom("user" as const, "policy" as const), reason: text, decision }, {
    ...options,
    requiredKeys: ["_tag", "by"] as Array<"_tag" | "by">
  }),
  fc.record({ _tag: fc.constant("Expired" as const), expiresAt: millis, approvedLate: fc.boolean(), decision }, options),
  fc.record({
    _tag: fc.constant("Cancelled" as const),
    by: fc.constantFrom("requester" as const, "user-message" as const, "operator" as const),
    reason: text,
    cancellation: decision
  }, { ...options, requiredKeys: ["_tag", "by"] as Array<"_tag" | "by"> })
)

const part = fc.oneof(
  text.map((value) => Messages.text(value)),
  text.map((value): Messages.Part => ({ _tag: "Reasoning", text: value })),
  fc.record({ name: fc.constantFrom("send_email", "transfer", "x-y"), arguments: fc.constantFrom("{\"to\":\"a\"}", "{}", "not json"), status }, { noNullPrototype: true })
    .map((call): Messages.Part => ({ ...Messages.toolCall({ id: "tbd", name: call.name, arguments: call.arguments }), status: call.status }))
)

/** Any stored conversation of user messages and model responses (call ids unique). */
export const conversation: fc.Arbitrary<Messages.Messages> = fc
  .array(fc.oneof(text.map((value) => Messages.user(value)), fc.array(part, { maxLength: 4 }).map((parts): Messages.Message => ({ role: "assistant", parts }))), {
    maxLength: 6
  })
  .map((messages) => {
    let n = 0
    return messages.map((message) => ({ ...message, parts: message.parts.map((p) => p._tag === "ToolCall" ? { ...p, id: `call-${n++}` } : p) }))
  })
