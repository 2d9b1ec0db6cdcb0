/**
 * Conversations as plain, Schema-backed, JSON-serialisable data.
 *
 * A conversation is an ordered array of messages. Each model response is its
 * own assistant message; a tool call lives on a part of that message together
 * with its status and, once it has one, its result. The whole state of a
 * paused turn is therefore in the messages: store them as JSON and resume in
 * another process.
 *
 * Every function here is pure and returns new values; nothing is mutated.
 *
 * @since 0.1.0
 */
import { dual } from "effect/Function"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as ChatError from "../data/ChatError.js"
import * as GrantRules from "./GrantRules.js"
import * as JsonText from "../internal/jsonText.js"
import * as Lazy from "../internal/lazy.js"
import * as OutcomeText from "./internal/outcomeText.js"
import * as PlainCheck from "../internal/plainCheck.js"
import * as Policy from "./internal/policy.js"
import * as S from "../internal/schema.js"
import * as Withdrawal from "./internal/withdrawal.js"
import * as Usage from "../data/Usage.js"

export {
  /**
   * Who withdrew a cancelled call.
   *
   * @category schemas
   * @since 0.3.0
   */
  CancelledBy,
  /**
   * Who decided a call and when: an audit record the model never sees.
   *
   * @category schemas
   * @since 0.1.0
   */
  Decision,
  /**
   * The decision policy a call waiting for a person is decided under, fixed on the call.
   *
   * @category schemas
   * @since 0.3.0
   */
  DecidedUnder,
  /**
   * A person who asks or decides: an id and roles.
   *
   * @category schemas
   * @since 0.3.0
   */
  Identity,
  /**
   * Who may decide a call waiting for a person (see `DecisionPolicy`).
   *
   * @category schemas
   * @since 0.3.0
   */
  Policy as DecisionPolicy,
  /**
   * One person's yes towards a quorum.
   *
   * @category schemas
   * @since 0.3.0
   */
  Vote,
  /**
   * A file part's bytes: base64 or a URL.
   *
   * @category schemas
   * @since 0.1.0
   */
  FileData,
  /**
   * A file (image, PDF, audio…) with its media type.
   *
   * @category schemas
   * @since 0.1.0
   */
  FilePart,
  /**
   * A running call's request for a person's input (an MCP elicitation), while it waits.
   *
   * @category schemas
   * @since 0.3.0
   */
  InputRequest,
  /**
   * Why the model stopped.
   *
   * @category schemas
   * @since 0.1.0
   */
  FinishReason,
  /**
   * One message: a role and its parts.
   *
   * @category schemas
   * @since 0.1.0
   */
  Message,
  /**
   * Any part of a message.
   *
   * @category schemas
   * @since 0.1.0
   */
  Part,
  /**
   * Reasoning text, with the provider's signature when it gives one.
   *
   * @category schemas
   * @since 0.1.0
   */
  ReasoningPart,
  /**
   * A reviewer model's verdict on a call waiting for a person: shown to the approver, never to the model.
   *
   * @category schemas
   * @since 0.3.0
   */
  Review,
  /**
   * The role of a message.
   *
   * @category schemas
   * @since 0.1.0
   */
  Role,
  /**
   * A user message held back until a pause is resolved (see `Steering`).
   *
   * @category schemas
   * @since 0.3.0
   */
  QueuedMessage,
  /**
   * Plain text.
   *
   * @category schemas
   * @since 0.1.0
   */
  TextPart,
  /**
   * A tool call proposed by the model, its status and its result.
   *
   * @category schemas
   * @since 0.1.0
   */
  ToolCallPart,
  /**
   * The status of a tool call.
   *
   * @category schemas
   * @since 0.1.0
   */
  ToolCallStatus,
  /**
   * A standing approval recorded in the messages (see `Grant`).
   *
   * @category schemas
   * @since 0.3.0
   */
  Grant,
  /**
   * The longest edited arguments (JSON text, 1,000,000 characters) an approval may carry; longer is `InvalidEditedArguments`.
   *
   * @category constants
   * @since 0.3.0
   */
  maxEditChars,
  /**
   * The longest arguments (JSON text, 1,000,000 characters) a model may propose for a call; longer makes the call `Invalid` (the model is told).
   *
   * @category constants
   * @since 0.3.0
   */
  maxArgumentChars,
  /**
   * Who revoked a grant, when and why.
   *
   * @category schemas
   * @since 0.3.0
   */
  GrantRevocation,
  /**
   * The conversation or user a grant is for.
   *
   * @category schemas
   * @since 0.3.0
   */
  GrantScope
} from "../internal/schema.js"

/**
 * A conversation: an ordered, immutable array of messages.
 *
 * @category models
 * @since 0.1.0
 */
export type Messages = ReadonlyArray<S.Message>

/**
 * The Schema of a conversation (an array of messages).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Messages: Schema.Codec<Messages, ReadonlyArray<typeof S.Message.Encoded>> = Schema.Array(S.Message)

type Content = string | ReadonlyArray<S.Part>

const toParts = (content: Content): ReadonlyArray<S.Part> =>
  typeof content === "string" ? [{ _tag: "Text", text: content }] : content

// ---------------------------------------------------------------------------
// Constructors
// ---------------------------------------------------------------------------

/**
 * An empty conversation.
 *
 * @category constructors
 * @since 0.1.0
 */
export const empty: Messages = []

/**
 * A user message; `sender` is who sent it (the requester of the calls its turn proposes, for four-eyes policies).
 *
 * @category constructors
 * @since 0.1.0
 */
export const user = (content: Content, options?: { readonly sender?: S.Identity }): S.Message =>
  options?.sender === undefined ? { role: "user", parts: toParts(content) } : { role: "user", parts: toParts(content), sender: options.sender }

/**
 * A system message.
 *
 * @category constructors
 * @since 0.1.0
 */
export const system = (content: Content): S.Message => ({ role: "system", parts: toParts(content) })

/**
 * An assistant message (for example to seed a conversation's history).
 *
 * @category constructors
 * @since 0.1.0
 */
export const assistant = (content: Content): S.Message => ({ role: "assistant", parts: toParts(content) })

/**
 * A conversation holding one user message (sent by `sender`, when given).
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromUser = (content: Content, options?: { readonly sender?: S.Identity }): Messages => [user(content, options)]

/**
 * A conversation holding one system message.
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromSystem = (content: Content): Messages => [system(content)]

/**
 * A text part.
 *
 * @category constructors
 * @since 0.1.0
 */
export const text = (value: string): S.TextPart => ({ _tag: "Text", text: value })

/**
 * A file part from base64 bytes or a URL.
 *
 * @category constructors
 * @since 0.1.0
 */
export const file = (
  options: { readonly mediaType: string; readonly filename?: string } & (
    | { readonly base64: string }
    | { readonly url: string }
  )
): S.FilePart => ({
  _tag: "File",
  mediaType: options.mediaType,
  data: "base64" in options ? { _tag: "Base64", base64: options.base64 } : { _tag: "Url", url: options.url },
  ...(options.filename === undefined ? {} : { filename: options.filename })
})

/**
 * A tool call as a model proposes it (status `Proposed`). Providers use it to build responses.
 *
 * @category constructors
 * @since 0.1.0
 */
export const toolCall = (options: { readonly id: string; readonly name: string; readonly arguments: string }): S.ToolCallPart => ({
  _tag: "ToolCall",
  id: options.id,
  name: options.name,
  arguments: options.arguments,
  status: { _tag: "Proposed" }
})

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

/**
 * Whether a tool call has its final answer (completed, failed, rejected, expired or cancelled).
 *
 * @category guards
 * @since 0.1.0
 */
export const isResolved = (call: S.ToolCallPart): boolean => {
  const tag = call.status._tag
  return tag === "Completed" || tag === "Failed" || tag === "Rejected" || tag === "Expired" || tag === "Cancelled"
}

/**
 * Whether a tool call ended without running: rejected, expired or cancelled.
 *
 * @category guards
 * @since 0.3.0
 */
export const isRefused = (call: S.ToolCallPart): boolean => {
  const tag = call.status._tag
  return tag === "Rejected" || tag === "Expired" || tag === "Cancelled"
}

/**
 * Whether a tool call waits for a person (approval) or a time (scheduled).
 *
 * @category guards
 * @since 0.1.0
 */
export const isAwaitingDecision = (call: S.ToolCallPart): boolean =>
  call.status._tag === "AwaitingApproval" || call.status._tag === "Scheduled"

/**
 * The tool calls of one message, in order.
 *
 * @category getters
 * @since 0.1.0
 */
export const toolCallsOf = (message: S.Message): ReadonlyArray<S.ToolCallPart> => {
  const out: Array<S.ToolCallPart> = []
  for (const part of message.parts) if (part._tag === "ToolCall") out.push(part)
  return out
}

/**
 * Every tool call of the conversation, in order.
 *
 * @category getters
 * @since 0.1.0
 */
export const toolCalls = (messages: Messages): ReadonlyArray<S.ToolCallPart> => messages.flatMap(toolCallsOf)

/**
 * The tool call with this id, or `undefined`.
 *
 * @category getters
 * @since 0.1.0
 */
export const findTool: {
  (id: string): (messages: Messages) => S.ToolCallPart | undefined
  (messages: Messages, id: string): S.ToolCallPart | undefined
} = dual(2, (messages: Messages, id: string): S.ToolCallPart | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    for (const part of messages[i]!.parts) {
      if (part._tag === "ToolCall" && part.id === id) return part
    }
  }
  return undefined
})

/**
 * The tool calls that have no final answer yet (proposed, awaiting approval, scheduled, approved, running).
 *
 * @category getters
 * @since 0.1.0
 */
export const pendingTools = (messages: Messages): ReadonlyArray<S.ToolCallPart> =>
  toolCalls(messages).filter((call) => !isResolved(call))

/**
 * The requests for a person's input that running calls wait on (an MCP server's elicitation), each
 * with its call: what an inbox or a UI reading the stored state shows besides the paused calls.
 *
 * @category getters
 * @since 0.3.0
 */
export const pendingInputs = (
  messages: Messages
): ReadonlyArray<{ readonly call: S.ToolCallPart; readonly request: S.InputRequest }> =>
  toolCalls(messages).flatMap((call) =>
    call.status._tag === "Running" && call.status.inputRequests !== undefined
      ? call.status.inputRequests.map((request) => ({ call, request }))
      : []
  )

/**
 * The last assistant message (the model's latest response), or `undefined`.
 *
 * @category getters
 * @since 0.1.0
 */
export const lastResponse = (messages: Messages): S.Message | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "assistant") return messages[i]
  }
  return undefined
}

/**
 * The tool calls of the last message, when it is a model response (none otherwise, as after a
 * user message): the calls a shell decides, runs or waits on.
 *
 * @category getters
 * @since 0.3.0
 */
export const lastCalls = (messages: Messages): ReadonlyArray<S.ToolCallPart> => {
  const last = messages[messages.length - 1]
  return last !== undefined && last.role === "assistant" ? toolCallsOf(last) : []
}

/**
 * The concatenated text parts of a message.
 *
 * @category getters
 * @since 0.1.0
 */
export const textOf = (message: S.Message): string => {
  let out = ""
  for (const part of message.parts) if (part._tag === "Text") out += part.text
  return out
}

/**
 * The index of the first message of the current turn (just after the last user message).
 *
 * @category getters
 * @since 0.1.0
 */
export const turnStart = (messages: Messages): number => {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") return i + 1
  }
  return 0
}

/**
 * The model responses (assistant messages) of the current turn.
 *
 * @category getters
 * @since 0.1.0
 */
export const turnResponses = (messages: Messages): ReadonlyArray<S.Message> =>
  messages.slice(turnStart(messages)).filter((message) => message.role === "assistant")

/**
 * The usage of every model response of the current turn, added up.
 *
 * @category getters
 * @since 0.1.0
 */
export const turnUsage = (messages: Messages): Usage.Usage =>
  turnResponses(messages).reduce((acc, message) => (message.usage ? Usage.add(acc, message.usage) : acc), Usage.empty)

/**
 * A call's decision record (who decided it and when), as a field to carry into
 * its next status: `{ decision }`, or `{}` when it has none.
 *
 * @category getters
 * @since 0.3.0
 */
export const decisionOf = (call: S.ToolCallPart): { readonly decision?: S.Decision } => {
  const status = call.status
  return "decision" in status && status.decision !== undefined ? { decision: status.decision } : {}
}

/**
 * The arguments a call runs with and the model sees: the edited ones if a person edited them.
 *
 * @category getters
 * @since 0.1.0
 */
export const effectiveArguments = (call: S.ToolCallPart): string => {
  const status = call.status
  return "editedArguments" in status && status.editedArguments !== undefined ? status.editedArguments : call.arguments
}

/**
 * Parses JSON text the way chat-ts reads arguments and edits, for a UI that
 * takes JSON typed by a person: text that is not JSON, that gives a key twice in
 * one object (`JSON.parse` keeps the last value, a person reading it sees the
 * first), holds a `"__proto__"` key or nests deeper than 256 levels is refused
 * with why (`the key "amount" appears twice in $`). Never throws.
 *
 * @category getters
 * @since 0.3.0
 */
export const parseJson = (text: string): Result.Result<unknown, string> => JsonText.parse(text)

/**
 * The effective arguments parsed as JSON, or the raw text when it is not JSON
 * the call can run with (not valid JSON, a key given twice, a `"__proto__"` key,
 * nested too deep): show that text to a person rather than a value the handler
 * would never get.
 *
 * @category getters
 * @since 0.1.0
 */
export const parsedArguments = (call: S.ToolCallPart): unknown => {
  const raw = effectiveArguments(call)
  return Result.getOrElse(JsonText.parse(raw), () => raw)
}

// ---------------------------------------------------------------------------
// Updates
// ---------------------------------------------------------------------------

/**
 * Replaces the tool call with `id` by `f(call)`. Returns the same array when no
 * call has that id. Only the message holding the call is copied. The decision
 * policy the call is decided under (`decidedUnder`, or in an older document the
 * policy of its waiting status) stays on it whatever `f` returns: an update
 * writes statuses, it never drops or loosens the rule they are judged by.
 *
 * @category combinators
 * @since 0.1.0
 */
export const updateTool: {
  (id: string, f: (call: S.ToolCallPart) => S.ToolCallPart): (messages: Messages) => Messages
  (messages: Messages, id: string, f: (call: S.ToolCallPart) => S.ToolCallPart): Messages
} = dual(3, (messages: Messages, id: string, f: (call: S.ToolCallPart) => S.ToolCallPart): Messages => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    const index = message.parts.findIndex((part) => part._tag === "ToolCall" && part.id === id)
    if (index === -1) continue
    const parts = message.parts.slice()
    const call = parts[index] as S.ToolCallPart
    parts[index] = Policy.keepDecidedUnder(call, f(call))
    const next = messages.slice()
    next[i] = { ...message, parts }
    return next
  }
  return messages
})

const checkDecidable = (messages: Messages, id: string): Result.Result<S.ToolCallPart, ChatError.ResolveError> => {
  const call = findTool(messages, id)
  if (call === undefined) return Result.fail(new ChatError.UnknownToolCall({ id }))
  if (isAwaitingDecision(call)) return Result.succeed(call)
  if (call.status._tag === "Proposed") {
    return Result.fail(new ChatError.ToolCallNotAwaitingDecision({ id, status: call.status._tag }))
  }
  return Result.fail(new ChatError.ToolCallAlreadyResolved({ id, status: call.status._tag }))
}

/**
 * Approves a call that awaits approval or is scheduled (it then runs on the
 * next resume, without asking its strategy again; if the approval request had
 * an `expiresAt` and that resume comes after it, the call is `Expired`).
 * `edited` replaces the arguments: a JSON value (a string is a JSON string, never
 * read as JSON text: use `approveJson` for text). It is checked against the
 * tool's parameters at resume (or at once with `chat.approve`); the model then
 * sees the edited arguments.
 *
 * @example
 * ```ts
 * import { Messages } from "@chat-ts/core"
 * import { Effect, pipe } from "effect"
 *
 * // A turn paused on call "call_1": approve it with edited arguments (the model sees the edit).
 * const approveEdited = (paused: Messages.Messages) =>
 *   Messages.approve(paused, "call_1", { to: "ann@example.com" }) // a Result: the messages, or a ResolveError
 *
 * // Data-last, with who decided (checked against the call's decision policy, kept in its record).
 * const approveAsAnn = (paused: Messages.Messages, at: number) =>
 *   Effect.fromResult(pipe(paused, Messages.approve("call_1", undefined, { decider: { id: "ann", roles: ["ops"] }, at })))
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const approve: {
  (id: string, edited?: unknown, options?: DecideOptions): (messages: Messages) => Result.Result<Messages, ChatError.ResolveError>
  (messages: Messages, id: string, edited?: unknown, options?: DecideOptions): Result.Result<Messages, ChatError.ResolveError>
} = dual(
  (args) => Array.isArray(args[0]),
  (messages: Messages, id: string, edited?: unknown, options?: DecideOptions): Result.Result<Messages, ChatError.ResolveError> =>
    approveWith(messages, id, edited === undefined ? undefined : { value: edited }, options)
)

/**
 * Who decides and when (epoch millis), for calls under a decision policy (see
 * `DecisionPolicy`): the decision is checked against the policy recorded on the
 * call (`DecisionNotAllowed`, `DuplicateVote`: nothing changes) and recorded on
 * it with the hash of the arguments the decider saw. Without a policy it is
 * only recorded.
 *
 * @category models
 * @since 0.3.0
 */
export interface DecideOptions {
  readonly decider: S.Identity
  readonly at: number
}

/**
 * Approves a call with edited arguments given as JSON text (for example typed
 * by a person). Text that is not JSON, or that gives a key twice in one object
 * (`{"amount":1,"amount":1000000}`: `JSON.parse` keeps the last value, the
 * person reading it sees the first), is an `InvalidEditedArguments` at once,
 * with the messages unchanged.
 *
 * @category combinators
 * @since 0.1.0
 */
export const approveJson: {
  (id: string, json: string, options?: DecideOptions): (messages: Messages) => Result.Result<Messages, ChatError.ResolveError>
  (messages: Messages, id: string, json: string, options?: DecideOptions): Result.Result<Messages, ChatError.ResolveError>
} = dual((args) => Array.isArray(args[0]), (messages: Messages, id: string, json: string, options?: DecideOptions): Result.Result<Messages, ChatError.ResolveError> => {
  // Measured before it is read: a 20 MB text is refused without being parsed.
  const tooLong = typeof json === "string" ? S.editLengthProblem(json) : undefined
  if (tooLong !== undefined) return Result.flatMap(checkDecidable(messages, id), (call) => Result.fail(invalidEdit(messages, call, tooLong)))
  const parsed = typeof json === "string" ? JsonText.parse(json) : Result.fail(`not JSON text but ${typeof json}`)
  if (Result.isFailure(parsed)) {
    return Result.flatMap(checkDecidable(messages, id), (call) =>
      Result.fail(invalidEdit(messages, call, parsed.failure.startsWith("not JSON") ? parsed.failure : `the edit is not accepted: ${parsed.failure}`)))
  }
  return approveWith(messages, id, { value: parsed.success, text: json }, options)
})

const invalidEdit = (messages: Messages, call: S.ToolCallPart, detail: string): ChatError.InvalidEditedArguments =>
  new ChatError.InvalidEditedArguments({ id: call.id, name: call.name, detail, messages })

const approveWith = (
  messages: Messages,
  id: string,
  edit: { readonly value: unknown; readonly text?: string } | undefined,
  options: DecideOptions | undefined
): Result.Result<Messages, ChatError.ResolveError> =>
  Result.flatMap(checkDecidable(messages, id), (call): Result.Result<Messages, ChatError.ResolveError> => {
    const problem = edit === undefined ? undefined : S.jsonProblem(edit.value)
    if (problem !== undefined) return Result.fail(invalidEdit(messages, call, `the edit is not JSON data: ${problem}`))
    const kind = edit === undefined ? "approve" : "edit"
    const editedText = edit === undefined ? undefined : edit.text ?? JSON.stringify(edit.value)
    const tooLong = editedText === undefined ? undefined : S.editLengthProblem(editedText)
    if (tooLong !== undefined) return Result.fail(invalidEdit(messages, call, tooLong))
    return Result.map(checkDecider(messages, call, kind, options), () => {
      const status = call.status
      const policy = Policy.policyOf(call)
      const vote = options === undefined ? [] : [Policy.voteOf(options.decider, options.at, call)]
      const votes = policy === undefined || Policy.quorumOf(policy) === 1 ? [] : [...Policy.votesOf(call), ...vote]
      // A quorum not reached yet: the call keeps waiting, with one more vote.
      if (policy !== undefined && Policy.quorumOf(policy) > 1 && votes.length < Policy.quorumOf(policy)) {
        return updateTool(messages, id, () => ({ ...call, status: { ...call.status, votes } as S.ToolCallStatus }))
      }
      return updateTool(messages, id, () => ({
        ...call,
        status: {
          _tag: "Approved",
          ...(editedText === undefined ? {} : { editedArguments: editedText }),
          ...(status._tag === "AwaitingApproval" && status.expiresAt !== undefined ? { expiresAt: status.expiresAt } : {}),
          ...(status._tag === "Scheduled" ? { scheduledAt: status.at } : {}),
          // The record names the text that runs: the edited arguments' canonical text for an edit.
          ...(options === undefined ? {} : { decision: Policy.recordOf(options.decider, options.at, kind, call, votes, editedText) }),
          ...(policy === undefined ? {} : { policy })
        }
      }))
    })
  })

/** The policy's verdict on a decider (and a valid time when one decides). */
const checkDecider = (
  messages: Messages,
  call: S.ToolCallPart,
  kind: Policy.Kind,
  options: DecideOptions | undefined
): Result.Result<void, ChatError.DecisionNotAllowed | ChatError.DuplicateVote> => {
  if (options !== undefined && !S.isMillis(options.at)) {
    return Result.fail(new ChatError.DecisionNotAllowed({ id: call.id, kind, detail: "the decision's time is not a valid time (epoch millis)" }))
  }
  return Policy.check(messages, call, kind, options?.decider)
}

/**
 * Rejects a call that awaits approval or is scheduled. The model sees the
 * rejection, with `reason` when given, as the call's (failed) result.
 *
 * @category combinators
 * @since 0.1.0
 */
export const reject: {
  (id: string, reason?: string, options?: DecideOptions): (messages: Messages) => Result.Result<Messages, ChatError.ResolveError>
  (messages: Messages, id: string, reason?: string, options?: DecideOptions): Result.Result<Messages, ChatError.ResolveError>
} = dual(
  (args) => Array.isArray(args[0]),
  (messages: Messages, id: string, reason?: string, options?: DecideOptions): Result.Result<Messages, ChatError.ResolveError> =>
    Result.flatMap(checkDecidable(messages, id), (found) =>
      Result.map(checkDecider(messages, found, "reject", options), () =>
        updateTool(messages, id, (call) => ({
          ...call,
          status: {
            _tag: "Rejected",
            by: "user",
            ...(reason === undefined ? {} : { reason }),
            // One no rejects, whatever yeses a quorum had: they stay on the record.
            ...(options === undefined ? {} : { decision: Policy.recordOf(options.decider, options.at, "reject", call, Policy.votesOf(call)) })
          }
        }))))
)

/**
 * Options of `cancel`: who withdraws the call and why (the model sees `reason`), and the audit record.
 *
 * @category models
 * @since 0.3.0
 */
export interface CancelOptions {
  /** Who withdraws it (default `"requester"`). */
  readonly by?: S.CancelledBy
  /** Why, shown to the model. */
  readonly reason?: string
  /** Who (an identity) and when (epoch millis), kept in the state, never sent to the model. */
  readonly cancellation?: S.Decision
}

/**
 * Withdraws a call that has not started: awaiting approval, scheduled, or
 * approved and not yet running. It becomes `Cancelled` (never runs); the model
 * sees who withdrew it and `reason`. A decision already recorded on it stays,
 * and so do a quorum's votes so far. A call that is proposed, running or
 * resolved is a `ResolveError`, with the messages unchanged. A call under a
 * decision policy may be withdrawn only by the person who asked for it or by
 * someone the policy lets reject it, named by `cancellation` (`by`, `roles`):
 * anyone else, or no `cancellation`, is a `DecisionNotAllowed` (`kind:
 * "cancel"`), with the messages unchanged.
 *
 * @category combinators
 * @since 0.3.0
 */
export const cancel: {
  (id: string, options?: CancelOptions): (messages: Messages) => Result.Result<Messages, ChatError.ResolveError>
  (messages: Messages, id: string, options?: CancelOptions): Result.Result<Messages, ChatError.ResolveError>
} = dual(
  (args) => Array.isArray(args[0]),
  (messages: Messages, id: string, options: CancelOptions = {}): Result.Result<Messages, ChatError.ResolveError> => {
    const call = findTool(messages, id)
    if (call === undefined) return Result.fail(new ChatError.UnknownToolCall({ id }))
    const tag = call.status._tag
    if (tag === "Proposed") return Result.fail(new ChatError.ToolCallNotAwaitingDecision({ id, status: tag }))
    if (!isAwaitingDecision(call) && tag !== "Approved") return Result.fail(new ChatError.ToolCallAlreadyResolved({ id, status: tag }))
    // Under a decision policy, only the person who asked or someone it lets reject may withdraw it.
    return Result.map(
      Withdrawal.check(messages, call, Withdrawal.fromRecord(options.cancellation)),
      () => updateTool(messages, id, () => cancelled(call, options))
    )
  }
)

/**
 * A call as `Cancelled`, keeping its decision record and a quorum's votes so far.
 *
 * @category combinators
 * @since 0.3.0
 */
export const cancelled = (call: S.ToolCallPart, options: CancelOptions): S.ToolCallPart => ({
  ...call,
  status: {
    _tag: "Cancelled",
    by: options.by ?? "requester",
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    ...(options.cancellation === undefined ? {} : { cancellation: options.cancellation }),
    ...decisionOf(call),
    ...votesField(call)
  }
})

/** A waiting call's quorum votes, as a field to carry into its `Cancelled` or `Expired` status (`{}` with none). */
const votesField = (call: S.ToolCallPart): { readonly votes?: ReadonlyArray<S.Vote> } => {
  const votes = Policy.votesOf(call)
  return votes.length === 0 ? {} : { votes }
}
/**
 * Records a grant (see `Grant`) on the last message: it settles, through a
 * strategy's `Action.Granted`, only calls proposed after it, until `expiresAt`
 * or its revocation; calls pending now stay pending. `InvalidGrant` (a predicate
 * that cannot be evaluated, a bad tool pattern, a `NaN` or past expiry, no
 * message) or `DuplicateGrant`, with the messages unchanged.
 *
 * @category combinators
 * @since 0.3.0
 */
export const grant: {
  (options: GrantRules.Options): (messages: Messages) => Result.Result<Messages, ChatError.GrantError>
  (messages: Messages, options: GrantRules.Options): Result.Result<Messages, ChatError.GrantError>
} = GrantRules.add

/**
 * Revokes a grant: it stays on its message marked `revoked { by, at, reason }`
 * and settles nothing more (a call it approved that has not started waits for
 * a person). `UnknownGrant`, `GrantRevoked` or `InvalidGrant`, messages unchanged.
 *
 * @category combinators
 * @since 0.3.0
 */
export const revokeGrant: {
  (id: string, revocation: GrantRules.Revocation): (messages: Messages) => Result.Result<Messages, ChatError.RevokeGrantError>
  (messages: Messages, id: string, revocation: GrantRules.Revocation): Result.Result<Messages, ChatError.RevokeGrantError>
} = GrantRules.revoke

/**
 * Options of `append`.
 *
 * @category models
 * @since 0.1.0
 */
export interface AppendOptions {
  /**
   * Cancel every pending tool call with this reason (the model sees it)
   * instead of failing with `PendingToolCalls` (see also `Steering.steer`).
   */
  readonly supersede?: string
}

/**
 * Appends a message or messages. Adding a user message while tool calls are
 * still pending fails with `PendingToolCalls` naming them, unless
 * `{ supersede: reason }` is given: the pending calls are then `Cancelled` by
 * `"user-message"` with that reason (a running call is recorded as failed: it may have run). A
 * call's decision record (`decision { by, at }`) stays on it. A call under a decision policy is
 * withdrawn only if the new message's `sender` asked for it or may reject it (see `cancel`):
 * otherwise `DecisionNotAllowed`, with nothing changed.
 *
 * @category combinators
 * @since 0.1.0
 */
export const append: {
  (
    that: S.Message | Messages,
    options?: AppendOptions
  ): (self: Messages) => Result.Result<Messages, ChatError.PendingToolCalls | ChatError.DecisionNotAllowed>
  (self: Messages, that: S.Message | Messages, options?: AppendOptions): Result.Result<Messages, ChatError.PendingToolCalls | ChatError.DecisionNotAllowed>
} = dual(
  (args) => Array.isArray(args[0]) && (args.length >= 3 || Array.isArray(args[1]) || isMessage(args[1])),
  (
    self: Messages,
    that: S.Message | Messages,
    options?: AppendOptions
  ): Result.Result<Messages, ChatError.PendingToolCalls | ChatError.DecisionNotAllowed> => {
    const added: Messages = Array.isArray(that) ? that : [that as S.Message]
    if (!added.some((message) => message.role === "user")) return Result.succeed([...self, ...added])
    const pending = pendingTools(self)
    if (pending.length === 0) return Result.succeed([...self, ...added])
    if (options?.supersede === undefined) {
      return Result.fail(new ChatError.PendingToolCalls({ ids: pending.map((call) => call.id) }))
    }
    const reason = options.supersede
    // Withdrawing a call under a decision policy is the requester's, or a rejecter's, to do (see `cancel`).
    const sender = added.find((message) => message.role === "user")?.sender
    const withdrawn = pending.filter((call) => call.status._tag !== "Running")
    const allowed = Withdrawal.checkAll(self, withdrawn, sender)
    if (Result.isFailure(allowed)) return Result.fail(allowed.failure)
    let next = self
    for (const call of pending) {
      next = updateTool(next, call.id, (c) => ({
        ...c,
        // Who decided the call (if anyone did) stays on the record, whatever it becomes.
        status: c.status._tag === "Running"
          ? {
            _tag: "Failed",
            error: `Superseded while running; it may or may not have completed. ${reason}`,
            // It ran (if at all) with its edited arguments: keep them so the model sees those.
            ...(c.status.editedArguments === undefined ? {} : { editedArguments: c.status.editedArguments }),
            ...decisionOf(c)
          }
          : { _tag: "Cancelled", by: "user-message", reason, ...decisionOf(c), ...votesField(c) }
      }))
    }
    return Result.succeed([...next, ...added])
  }
)

const isMessage = (u: unknown): u is S.Message =>
  typeof u === "object" && u !== null && "role" in u && "parts" in u

// ---------------------------------------------------------------------------
// What the model sees
// ---------------------------------------------------------------------------

/**
 * A tool call as providers put it on the wire: effective arguments and, when answered, its result.
 *
 * @category models
 * @since 0.1.0
 */
export interface ProjectedToolCall {
  readonly id: string
  readonly name: string
  /** The arguments the call ran with (edited ones if edited), as JSON text. */
  readonly arguments: string
  /** The answer the model sees, or `undefined` while the call is not resolved. */
  readonly result: ProjectedResult | undefined
}

/**
 * The answer to a tool call as the model sees it.
 *
 * @category models
 * @since 0.1.0
 */
export interface ProjectedResult {
  readonly isError: boolean
  /** The result as a JSON value. */
  readonly value: unknown
  /** The result as text (JSON unless the value is a string). */
  readonly text: string
  /**
   * The files (images…) the result shows the model as files, in order (`value` mentions each one);
   * absent when it has none (most results). A provider that takes no files in tool results sends
   * `filePlaceholder`s instead (see `resultTextOnly`).
   */
  readonly files?: ReadonlyArray<S.FilePart>
}

const toText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value) ?? "null")

const result = (isError: boolean, value: unknown, files?: ReadonlyArray<S.FilePart>): ProjectedResult =>
  files === undefined || files.length === 0 ? { isError, value, text: toText(value) } : { isError, value, text: toText(value), files }

/**
 * The files of a projected result (none for most).
 *
 * @category conversions
 * @since 0.3.0
 */
export const resultFiles = (projected: ProjectedResult): ReadonlyArray<S.FilePart> => projected.files ?? []

/**
 * What a model sees in place of file `index` of a tool result where its
 * provider takes no files in tool results (OpenAI Chat Completions), or not
 * that kind of file: a short text, never the file's bytes.
 *
 * @category conversions
 * @since 0.3.0
 */
export const filePlaceholder = (file: S.FilePart, index: number): string =>
  `[file ${index}: ${file.mediaType}${file.filename === undefined ? "" : ` "${file.filename}"`}, not shown: this model's API takes no such file in a tool result]`

/**
 * A projected result as text alone: its text, then one `filePlaceholder` per file (for APIs that take text only).
 *
 * @category conversions
 * @since 0.3.0
 */
export const resultTextOnly = (projected: ProjectedResult): string => {
  const files = resultFiles(projected)
  return files.length === 0 ? projected.text : [projected.text, ...files.map(filePlaceholder)].join("\n")
}

/**
 * The message the model sees for an expired call (its approval's deadline passed).
 *
 * @category conversions
 * @since 0.3.0
 */
export const expiryText = (status: typeof S.Expired.Type): string => OutcomeText.expiryText(status)

/**
 * The message the model sees for a cancelled call.
 *
 * @category conversions
 * @since 0.3.0
 */
export const cancellationText = (status: typeof S.Cancelled.Type): string => OutcomeText.cancellationText(status)

/**
 * The message the model sees for a rejected call.
 *
 * @category conversions
 * @since 0.1.0
 */
export const rejectionText = (status: { readonly reason?: string | undefined; readonly by: "user" | "policy" }): string => {
  const who = status.by === "user" ? "The user rejected this tool call" : "This tool call was rejected by policy"
  return status.reason === undefined || status.reason === "" ? `${who}; it did not run.` : `${who}; it did not run. Reason: ${status.reason}`
}

/**
 * The one projection of a tool call to what the model sees, shared by every
 * provider: edited arguments replace the original ones; a completed call
 * shows its result (and its files, if it has any); a failure shows `{ error }` (and its files); a rejection, an
 * expiry and a cancellation each show a failure with its own text (who refused, that nobody decided in time,
 * who withdrew it) and the reason; an unresolved call has no result.
 *
 * @category conversions
 * @since 0.1.0
 */
export const projectToolCall = (call: S.ToolCallPart): ProjectedToolCall => {
  const status = call.status
  const base = { id: call.id, name: call.name, arguments: effectiveArguments(call) }
  switch (status._tag) {
    case "Completed":
      return { ...base, result: result(false, status.result, status.files) }
    case "Failed":
      return { ...base, result: result(true, { error: status.error }, status.files) }
    case "Rejected":
      return { ...base, result: result(true, { error: rejectionText(status) }) }
    case "Expired":
      return { ...base, result: result(true, { error: OutcomeText.expiryText(status) }) }
    case "Cancelled":
      return { ...base, result: result(true, { error: OutcomeText.cancellationText(status) }) }
    default:
      return { ...base, result: undefined }
  }
}

// ---------------------------------------------------------------------------
// Versioned encoding
// ---------------------------------------------------------------------------

/**
 * The current version of the stored format.
 *
 * @category constants
 * @since 0.1.0
 */
export const currentVersion = 1 as const

const Document = Schema.Struct({
  format: Schema.Literal("chat-ts/messages"),
  version: Schema.Number,
  messages: Schema.Array(S.Message)
})

/** The Schema's own checks, compiled: `true` only for values it accepts unchanged. */
const isPlainMessages = Lazy.guard(() => PlainCheck.make(Schema.Array(S.Message) as Schema.Codec<Messages, Messages>))
const isPlainDocument = Lazy.guard(() => PlainCheck.makeForParsed(
  Schema.Struct({ format: Document.fields.format, version: Schema.Literal(currentVersion), messages: Document.fields.messages }) as Schema.Codec<
    { readonly format: "chat-ts/messages"; readonly version: typeof currentVersion; readonly messages: Messages },
    { readonly format: "chat-ts/messages"; readonly version: typeof currentVersion; readonly messages: Messages }
  >
))

/**
 * The stored form of a conversation: `{ format, version, messages }`.
 *
 * @category models
 * @since 0.1.0
 */
export type Document = typeof Document.Encoded

const checkIntegrity = (messages: Messages): string | undefined => {
  const seen = new Set<string>()
  for (const [index, message] of messages.entries()) {
    for (const part of message.parts) {
      if (part._tag !== "ToolCall") continue
      if (message.role !== "assistant") return `message ${index} (${message.role}) holds a tool call; only assistant messages may`
      if (seen.has(part.id)) return `tool call id '${part.id}' appears more than once`
      seen.add(part.id)
    }
  }
  return duplicateGrant(messages)
}

const duplicateGrant = (messages: Messages): string | undefined => {
  const seen = new Set<string>()
  for (const { grant } of GrantRules.all(messages)) {
    if (seen.has(grant.id)) return `grant id '${grant.id}' appears more than once`
    seen.add(grant.id)
  }
  return undefined
}

const encodeWithSchema = Schema.encodeResult(Schema.Array(S.Message))

/** A Schema issue as text: each problem with its path. */
const formatIssue = SchemaIssue.makeFormatterDefault()

/** Schema's encode, total: a value its parser cannot even read (a tag with no prototype) is a parse failure too. */
const encodeMessages = (messages: Messages): Result.Result<ReadonlyArray<typeof S.Message.Encoded>, Schema.SchemaError | string> => {
  try {
    return encodeWithSchema(messages)
  } catch {
    return Result.fail("the messages do not match the stored format (a value in them cannot be read)")
  }
}

/** The Schema's message, or a plain one when a value cannot even be printed (an object with no prototype as a tag). */
const encodeErrorText = (error: Schema.SchemaError | string): string => {
  if (typeof error === "string") return error
  try {
    return formatIssue(error.issue)
  } catch {
    return "the messages do not match the stored format (a value in them cannot be printed)"
  }
}

/**
 * Encodes a conversation into its versioned JSON document. A conversation
 * that JSON cannot hold (a result with a BigInt, a cycle, nesting deeper than
 * 256 levels, a `NaN` time…) is a `StateEncodeError`, never a throw.
 *
 * @category conversions
 * @since 0.1.0
 */
export const encode = (messages: Messages): Result.Result<Document, ChatError.StateEncodeError> =>
  encodeMessages(messages).pipe(
    Result.mapError((error) => new ChatError.StateEncodeError({ detail: encodeErrorText(error) })),
    Result.map((encoded) => ({ format: "chat-ts/messages" as const, version: currentVersion, messages: encoded }))
  )

/**
 * Encodes a conversation as a JSON string (the versioned document), or a
 * `StateEncodeError` (see `encode`). Total: it never throws, and `fromJson`
 * reads back exactly what it writes.
 *
 * @example
 * ```ts
 * import { Messages } from "@chat-ts/core"
 * import { Effect } from "effect"
 *
 * // The versioned JSON document of a conversation, for any store (a StateEncodeError if it cannot be).
 * const save = (messages: Messages.Messages, write: (json: string) => Effect.Effect<void>) =>
 *   Effect.flatMap(Effect.fromResult(Messages.toJson(messages)), write)
 * ```
 *
 * @category conversions
 * @since 0.1.0
 */
export const toJson = (messages: Messages): Result.Result<string, ChatError.StateEncodeError> =>
  // Messages the Schema accepts as they are encode to themselves: write them at once (Schema encode
  // copied every message, 5x the cost of JSON.stringify alone, packages/bench scenario 9).
  isPlainMessages(messages)
    ? Result.succeed(JSON.stringify({ format: "chat-ts/messages", version: currentVersion, messages }))
    : Result.map(encode(messages), (document) => JSON.stringify(document))

const decodeDocument = Schema.decodeUnknownResult(Document, { onExcessProperty: "error" })

/**
 * Decodes a stored document. A malformed or tampered document (wrong shape,
 * tool calls outside assistant messages, duplicate call ids) or an unknown
 * version is a `StateDecodeError`.
 *
 * @category conversions
 * @since 0.1.0
 */
export const decode = (input: unknown): Result.Result<Messages, ChatError.StateDecodeError> => {
  if (typeof input === "object" && input !== null && "version" in input && input.version !== currentVersion) {
    return Result.fail(
      new ChatError.StateDecodeError({
        detail: `unsupported version ${JSON.stringify(input.version)} (this library reads version ${currentVersion})`
      })
    )
  }
  return decodeDocument(input).pipe(
    Result.mapError((error) => new ChatError.StateDecodeError({ detail: formatIssue(error.issue) })),
    Result.flatMap((document) => {
      const problem = checkIntegrity(document.messages)
      return problem === undefined
        ? Result.succeed(document.messages)
        : Result.fail(new ChatError.StateDecodeError({ detail: problem }))
    })
  )
}

/**
 * Decodes a JSON string written by `toJson`.
 *
 * @example
 * ```ts
 * import { Messages } from "@chat-ts/core"
 * import { Result } from "effect"
 *
 * // Reads back exactly what `toJson` wrote, in this process or another.
 * const roundTrip = Result.flatMap(Messages.toJson(Messages.fromUser("Hi")), Messages.fromJson)
 *
 * // Anything else (not JSON, a foreign or tampered document) is a StateDecodeError.
 * const refused = Messages.fromJson("{\"format\":\"chat-ts/messages\",\"version\":1}")
 * ```
 *
 * @category conversions
 * @since 0.1.0
 */
export const fromJson = (json: string): Result.Result<Messages, ChatError.StateDecodeError> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch (error) {
    return Result.fail(new ChatError.StateDecodeError({ detail: `not JSON: ${(error as Error).message}` }))
  }
  // A document the Schema accepts as it is (checked by the compiled check, see internal/plainCheck.ts)
  // decodes to itself: JSON.parse made it, so nobody else holds it. Anything else, the Schema decides.
  if (isPlainDocument(parsed)) {
    const problem = checkIntegrity(parsed.messages)
    return problem === undefined ? Result.succeed(parsed.messages) : Result.fail(new ChatError.StateDecodeError({ detail: problem }))
  }
  return decode(parsed)
}
