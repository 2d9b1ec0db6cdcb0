/**
 * What may enter a conversation from outside: JSON text from a model or a
 * person parsed into plain data (never an object whose prototype it chose),
 * and values from handlers and providers made storable, so that the state
 * always encodes.
 *
 * @internal
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type * as LanguageModel from "../model/LanguageModel.js"
import type * as Messages from "../turn/Messages.js"
import type { Usage } from "../data/Usage.js"
import * as Tool from "./Tool.js"
import { makeCompactor } from "../internal/compact.js"
import * as JsonText from "../internal/jsonText.js"
import { toStoredJson } from "../internal/jsonText.js"
import { argumentsLengthProblem, editLengthProblem, jsonProblem } from "../internal/schema.js"

const formatIssue = SchemaIssue.makeFormatterDefault()

/** A Schema error as text: each problem with its path. */
export const formatParseError = (error: Schema.SchemaError): string => formatIssue(error.issue)

/**
 * Parses JSON text into plain data (`what` names it in messages): no
 * `"__proto__"` key (it would pick the prototype of what Schema decodes), no
 * nesting past the stored limit. An empty text is an empty object.
 */
export const parse = (text: string, what: string): Result.Result<unknown, string> => {
  let json: unknown
  try {
    json = JSON.parse(text === "" ? "{}" : text)
  } catch (error) {
    return Result.fail(`The ${what} are not valid JSON (${(error as Error).message}).`)
  }
  const problem = jsonProblem(json)
  return problem === undefined ? Result.succeed(json) : Result.fail(`The ${what} are not accepted: ${problem.replace(/^\$/, "the value")}.`)
}

/**
 * Parses a call's arguments (JSON text) the way every reader reads them: as
 * `parse`, and a key given twice in one object is refused too (`JSON.parse`
 * would keep the last value, a person reading the text sees the first). A
 * model's arguments never reach this with one (`JsonText.canonicalCall` rewrote them
 * when the response came); an edit, or a state built by hand, may.
 */
export const parseArguments = (text: string): Result.Result<unknown, string> => {
  const tooLong = argumentsLengthProblem(text)
  if (tooLong !== undefined) return Result.fail(tooLong)
  // Plain checks rather than `Result.mapError`: a step reads arguments twice, and the combinators cost more than the read.
  const parsed = JsonText.parse(text === "" ? "{}" : text)
  if (Result.isSuccess(parsed)) return parsed
  const problem = parsed.failure
  return Result.fail(
    problem.startsWith("not JSON")
      ? `The arguments are not valid JSON (${problem.slice("not JSON: ".length)}).`
      : `The arguments are not accepted: ${problem.replace(/^\$/, "the value")}.`
  )
}

type Decode = (input: unknown) => Result.Result<unknown, Schema.SchemaError>

/** Each tool's compiled decoder of its parameters, made once. */
const decoders = new WeakMap<Tool.Any, Decode>()

const decoderOf = (tool: Tool.Any): Decode => {
  let decode = decoders.get(tool)
  if (decode === undefined) {
    decode = Schema.decodeUnknownResult(tool.parameters as Schema.Codec<unknown, unknown>)
    decoders.set(tool, decode)
  }
  return decode
}

/** Decodes a call's arguments (JSON text) with its tool's parameters; `Left` holds a message for the model. */
export const decodeArguments = (tool: Tool.Any, text: string): Result.Result<unknown, string> => {
  const json = parseArguments(text)
  if (Result.isFailure(json)) return json
  // `fromWire` undoes what strict mode changed on the wire (a `null` for an optional field left out).
  const decoded = decoderOf(tool)(Tool.fromWire(tool, json.success))
  return Result.isSuccess(decoded)
    ? Result.succeed(decoded.success)
    : Result.fail(`The arguments do not match the parameters of tool '${tool.name}': ${formatParseError(decoded.failure)}`)
}

/** Each tool's compiled decoder of edited arguments: as its parameters', with no key they do not declare. */
const editDecoders = new WeakMap<Tool.Any, Decode>()

const editDecoderOf = (tool: Tool.Any): Decode => {
  let decode = editDecoders.get(tool)
  if (decode === undefined) {
    decode = Schema.decodeUnknownResult(tool.parameters as Schema.Codec<unknown, unknown>, { onExcessProperty: "error" })
    editDecoders.set(tool, decode)
  }
  return decode
}

/**
 * Why a person's edited arguments (a JSON value) do not fit a tool's parameters, or `undefined`.
 * Stricter than a model's arguments: a key the parameters do not declare is refused, naming it
 * (`Expected no excess property at ["note"]`), unless the Schema itself takes extra keys (a
 * `Schema.Record`, a struct with a rest): the edit is stored, hashed and shown to the model as
 * written, so a key the handler never gets must not ride along.
 */
export const editProblem = (tool: Tool.Any, edited: unknown): string | undefined => {
  const decoded = editDecoderOf(tool)(Tool.fromWire(tool, edited))
  return Result.isSuccess(decoded)
    ? undefined
    : `The arguments do not match the parameters of tool '${tool.name}': ${formatParseError(decoded.failure)}`
}

/** Why edited arguments (JSON text) do not fit a tool's parameters (see `editProblem`), or `undefined`. */
export const editTextProblem = (tool: Tool.Any, text: string): string | undefined => {
  const tooLong = editLengthProblem(text)
  if (tooLong !== undefined) return tooLong
  const json = parseArguments(text)
  return Result.isFailure(json) ? json.failure : editProblem(tool, json.success)
}

type Encode = (value: unknown) => Result.Result<unknown, Schema.SchemaError>

/** Each tool's compiled encoders of its result and its failure, made once. */
const encoders = new WeakMap<Tool.Any, { readonly success: Encode; readonly failure: Encode }>()

/**
 * An encoder whose successful output is copied compactly (`compact.ts`): the conversation keeps
 * every result, and the Schema's own output holds room for keys it does not have.
 */
const compacting = (encode: Encode): Encode => {
  const compact = makeCompactor()
  return (value) => {
    const encoded = encode(value)
    return Result.isSuccess(encoded) ? Result.succeed(compact(encoded.success)) : encoded
  }
}

/** Encodes a handler's result (`success`) or typed failure with its tool's Schema. */
export const encodeResult = (tool: Tool.Any, which: "success" | "failure", value: unknown): Result.Result<unknown, Schema.SchemaError> => {
  let known = encoders.get(tool)
  if (known === undefined) {
    known = {
      success: compacting(Schema.encodeUnknownResult(tool.success as Schema.Codec<unknown, unknown>)),
      failure: Schema.encodeUnknownResult(tool.failure as Schema.Codec<unknown, unknown>)
    }
    encoders.set(tool, known)
  }
  return known[which](value)
}

/** The JSON a value is stored as (see `internal/jsonText.ts`): re-exported for the codec's other readers. */
export { toStoredJson }

type Metadata = { readonly [key: string]: unknown }

/** Provider metadata as it is stored: plain JSON, or left out when JSON cannot hold it. */
const metadataField = (metadata: Metadata | undefined): { providerMetadata?: Metadata } => {
  if (metadata === undefined) return {}
  const stored = toStoredJson(metadata)
  return Result.isSuccess(stored) && typeof stored.success === "object" && stored.success !== null && !Array.isArray(stored.success)
    ? { providerMetadata: stored.success as Metadata }
    : {}
}

const storablePart = (part: Messages.Part): Messages.Part => {
  if (part._tag === "ToolCall") return JsonText.canonicalCall(part)
  if (part._tag !== "Reasoning" || part.providerMetadata === undefined) return part
  const { providerMetadata, ...rest } = part
  return { ...rest, ...metadataField(providerMetadata) }
}

/** A token count as stored: a count that is not a finite number (a provider's bug) counts as 0. */
const count = (n: number | undefined): number => (typeof n === "number" && Number.isFinite(n) ? n : 0)

/** Token counts as stored (written out, without spreads: this runs once a step). */
const storableUsage = (usage: LanguageModel.Response["usage"]): LanguageModel.Response["usage"] => {
  const out: { -readonly [K in keyof Usage]: Usage[K] } = { inputTokens: count(usage?.inputTokens), outputTokens: count(usage?.outputTokens) }
  if (usage?.reasoningTokens !== undefined) out.reasoningTokens = count(usage.reasoningTokens)
  if (usage?.cachedInputTokens !== undefined) out.cachedInputTokens = count(usage.cachedInputTokens)
  return out
}

/** A model response as the assistant message it is stored as: a provider's odd metadata or counts never make the state unwritable. */
export const toMessage = (response: LanguageModel.Response, parts: ReadonlyArray<Messages.Part>): Messages.Message => {
  const message: { -readonly [K in keyof Messages.Message]: Messages.Message[K] } = {
    role: "assistant",
    parts: parts.map(storablePart),
    usage: storableUsage(response.usage),
    finishReason: response.finishReason
  }
  if (response.providerMetadata !== undefined) {
    const { providerMetadata } = metadataField(response.providerMetadata)
    if (providerMetadata !== undefined) message.providerMetadata = providerMetadata
  }
  return message
}
