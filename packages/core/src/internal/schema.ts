/**
 * The Schema definitions of conversation data (parts, tool call statuses,
 * messages). Kept apart from `Messages.ts` so that `ChatError.ts` can refer to
 * them without an import cycle; `Messages.ts` re-exports all of them.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import { Usage } from "../Usage.js"

/** Epoch milliseconds (UTC). */
export const Millis = Schema.Number.pipe(Schema.finite())

// ---------------------------------------------------------------------------
// Tool call statuses
// ---------------------------------------------------------------------------

export const Proposed = Schema.TaggedStruct("Proposed", {})
export const AwaitingApproval = Schema.TaggedStruct("AwaitingApproval", {
  expiresAt: Schema.optional(Millis)
})
export const Scheduled = Schema.TaggedStruct("Scheduled", { at: Millis })
export const Approved = Schema.TaggedStruct("Approved", {
  /** Replacement arguments (JSON text) chosen by the person who approved. */
  editedArguments: Schema.optional(Schema.String),
  /** The approval request's deadline, kept so that an approval resumed after it fails closed. */
  expiresAt: Schema.optional(Millis)
})
export const Running = Schema.TaggedStruct("Running", {
  editedArguments: Schema.optional(Schema.String),
  /** Which run of the call this is (absent: the first); only idempotent tools run again after a crash. */
  attempt: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)))
})
export const Completed = Schema.TaggedStruct("Completed", {
  result: Schema.Unknown,
  editedArguments: Schema.optional(Schema.String)
})
export const Failed = Schema.TaggedStruct("Failed", {
  error: Schema.Unknown,
  editedArguments: Schema.optional(Schema.String)
})
export const Rejected = Schema.TaggedStruct("Rejected", {
  reason: Schema.optional(Schema.String),
  by: Schema.Literal("user", "policy")
})

export const ToolCallStatus = Schema.Union(
  Proposed,
  AwaitingApproval,
  Scheduled,
  Approved,
  Running,
  Completed,
  Failed,
  Rejected
)
export type ToolCallStatus = typeof ToolCallStatus.Type

// ---------------------------------------------------------------------------
// Parts
// ---------------------------------------------------------------------------

const ProviderMetadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })

export const TextPart = Schema.TaggedStruct("Text", { text: Schema.String })
export type TextPart = typeof TextPart.Type

export const ReasoningPart = Schema.TaggedStruct("Reasoning", {
  text: Schema.String,
  /** Provider signature or encrypted content that must be sent back unchanged. */
  signature: Schema.optional(Schema.String),
  providerMetadata: Schema.optional(ProviderMetadata)
})
export type ReasoningPart = typeof ReasoningPart.Type

export const FileData = Schema.Union(
  Schema.TaggedStruct("Base64", { base64: Schema.String }),
  Schema.TaggedStruct("Url", { url: Schema.String })
)
export type FileData = typeof FileData.Type

export const FilePart = Schema.TaggedStruct("File", {
  mediaType: Schema.String,
  data: FileData,
  filename: Schema.optional(Schema.String)
})
export type FilePart = typeof FilePart.Type

export const ToolCallPart = Schema.TaggedStruct("ToolCall", {
  id: Schema.NonEmptyString,
  name: Schema.String,
  /** The arguments exactly as the model sent them (JSON text, possibly invalid). */
  arguments: Schema.String,
  status: ToolCallStatus
})
export type ToolCallPart = typeof ToolCallPart.Type

export const Part = Schema.Union(TextPart, ReasoningPart, FilePart, ToolCallPart)
export type Part = typeof Part.Type

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

export const FinishReason = Schema.Literal("stop", "tool-calls", "length", "content-filter", "error", "other")
export type FinishReason = typeof FinishReason.Type

export const Role = Schema.Literal("system", "user", "assistant")
export type Role = typeof Role.Type

export const Message = Schema.Struct({
  role: Role,
  parts: Schema.Array(Part),
  /** Usage of the model response this assistant message holds. */
  usage: Schema.optional(Usage),
  finishReason: Schema.optional(FinishReason),
  providerMetadata: Schema.optional(ProviderMetadata)
})
export type Message = typeof Message.Type
