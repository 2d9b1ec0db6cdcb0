/**
 * chat-ts core: messages, tools and strategies, the pure turn reducer, the
 * `Chat` service and the `LanguageModel` contract.
 *
 * The namespaces are grouped by their folder under `src/`, in layer order (a
 * folder imports only from its own and lower layers: docs/architecture.md draws
 * the map, `test/Layers.test.ts` checks it). Each is also its own entry point,
 * `@chat-ts/core/<Name>`.
 *
 * @since 0.1.0
 */

// ---------------------------------------------------------------------------
// data/: the stored model's leaves: errors, pause reasons, usage (layer 1)
// ---------------------------------------------------------------------------

/**
 * Every typed error of chat-ts.
 *
 * @category data
 * @since 0.1.0
 */
export * as ChatError from "./data/ChatError.js"

/**
 * Why a turn paused.
 *
 * @category data
 * @since 0.1.0
 */
export * as PauseReason from "./data/PauseReason.js"

/**
 * Token usage.
 *
 * @category data
 * @since 0.1.0
 */
export * as Usage from "./data/Usage.js"

// ---------------------------------------------------------------------------
// turn/: the pure reducer and every rule it enforces (layer 2)
// ---------------------------------------------------------------------------

/**
 * What a strategy decides for one tool call.
 *
 * @category turn
 * @since 0.1.0
 */
export * as Action from "./turn/Action.js"

/**
 * Who may decide a call waiting for a person: roles, four-eyes, quorums.
 *
 * @category turn
 * @since 0.2.0
 */
export * as DecisionPolicy from "./turn/DecisionPolicy.js"

/**
 * Conversations as plain, JSON-serialisable data.
 *
 * @category turn
 * @since 0.1.0
 */
export * as Messages from "./turn/Messages.js"

/**
 * The pure turn reducer.
 *
 * @category turn
 * @since 0.1.0
 */
export * as Turn from "./turn/Turn.js"

/**
 * A new user message while calls are pending: cancel them (the default) or queue it until the pause is resolved.
 *
 * @category turn
 * @since 0.2.0
 */
export * as Steering from "./turn/Steering.js"

// ---------------------------------------------------------------------------
// model/: the provider contract and its combinators (layer 3)
// ---------------------------------------------------------------------------

/**
 * The embeddings contract.
 *
 * @category model
 * @since 0.1.0
 */
export * as EmbeddingModel from "./model/EmbeddingModel.js"

/**
 * The provider contract.
 *
 * @category model
 * @since 0.1.0
 */
export * as LanguageModel from "./model/LanguageModel.js"

/**
 * Routing between models: ranked per request, fallback on the model's failures, a circuit breaker per model.
 *
 * @category model
 * @since 0.1.0
 */
export * as Router from "./model/Router.js"

// ---------------------------------------------------------------------------
// tools/: tools, toolkits and their results (layer 4)
// ---------------------------------------------------------------------------

/**
 * Tools: schemas, descriptions, metadata.
 *
 * @category tools
 * @since 0.1.0
 */
export * as Tool from "./tools/Tool.js"

/**
 * Toolkits: tools, handlers and strategies.
 *
 * @category tools
 * @since 0.1.0
 */
export * as Toolkit from "./tools/Toolkit.js"

/**
 * Tool results with a size: the caps per call (on the text and on the files), the cut with its marker, and where the full result goes.
 *
 * @category tools
 * @since 0.2.0
 */
export * as ToolResult from "./tools/ToolResult.js"

// ---------------------------------------------------------------------------
// chat/: the Effect shell that runs turns (layer 5)
// ---------------------------------------------------------------------------

/**
 * The Chat service: runs turns that pause for people and for time.
 *
 * @category chat
 * @since 0.1.0
 */
export * as Chat from "./chat/Chat.js"

/**
 * The events of a streamed turn.
 *
 * @category chat
 * @since 0.1.0
 */
export * as ChatEvent from "./chat/ChatEvent.js"

/**
 * The input side of a streamed turn: user messages sent while it runs, and cancel.
 *
 * @category chat
 * @since 0.3.0
 */
export * as ChatInput from "./chat/ChatInput.js"

/**
 * A streamed turn's events as a plain AsyncIterable (`chat.events`), for code outside Effect.
 *
 * @category chat
 * @since 0.2.0
 */
export * as TurnEvents from "./chat/TurnEvents.js"

/**
 * How a turn ended.
 *
 * @category chat
 * @since 0.1.0
 */
export * as ChatOutcome from "./chat/ChatOutcome.js"

/**
 * For shell authors: the steps of a turn's outcomes, the starting `Resume`, outcome to error (used by `Chat` and `@chat-ts/workflow`).
 *
 * @category chat
 * @since 0.3.0
 */
export * as Shell from "./chat/Shell.js"

// ---------------------------------------------------------------------------
// governance/: strategy combinators: grants, a reviewer model, shadow mode (layer 6)
// ---------------------------------------------------------------------------

/**
 * Grants: standing approvals, scoped and expiring, that settle only calls proposed after them.
 *
 * @category governance
 * @since 0.2.0
 */
export * as Grant from "./governance/Grant.js"

/**
 * A reviewer model over a toolkit's strategy: a second model classifies each call, failing closed to a person.
 *
 * @category governance
 * @since 0.2.0
 */
export * as Reviewer from "./governance/Reviewer.js"

/**
 * Shadow mode: a candidate strategy decides beside the enforced one, and disagreements are logged and counted.
 *
 * @category governance
 * @since 0.2.0
 */
export * as Shadow from "./governance/Shadow.js"

// ---------------------------------------------------------------------------
// durable/: around the loop: stores, notifications, workers (layer 6)
// ---------------------------------------------------------------------------

/**
 * Tamper-evident (HMAC-signed) storage of conversations.
 *
 * @category durable
 * @since 0.1.0
 */
export * as SignedState from "./durable/SignedState.js"

/**
 * Where paused conversations live between a pause and its resume.
 *
 * @category durable
 * @since 0.1.0
 */
export * as ConversationStore from "./durable/ConversationStore.js"

/**
 * What a notifier is told (pauses, decisions, expiries, resumes, completions), derived from saved states.
 *
 * @category durable
 * @since 0.2.0
 */
export * as Notification from "./durable/Notification.js"

/**
 * The notifications a store wrote with the states that caused them, until delivered.
 *
 * @category durable
 * @since 0.2.0
 */
export * as Outbox from "./durable/Outbox.js"

/**
 * Who is told about a conversation's pauses, decisions and completions.
 *
 * @category durable
 * @since 0.2.0
 */
export * as Notifier from "./durable/Notifier.js"

/**
 * Delivers a store's outbox to the notifier: at least once, retried on a Schedule, bounded.
 *
 * @category durable
 * @since 0.2.0
 */
export * as OutboxDispatcher from "./durable/OutboxDispatcher.js"

/**
 * Running turns of stored conversations on many workers: leases, one safe resume.
 *
 * @category durable
 * @since 0.1.0
 */
export * as Worker from "./durable/Worker.js"

// ---------------------------------------------------------------------------
// provider/: for provider authors (layer 6)
// ---------------------------------------------------------------------------

/**
 * For provider authors: the retry policy of model calls (providers re-export it as `Retry`).
 *
 * @category provider
 * @since 0.1.0
 */
export * as ProviderRetry from "./provider/ProviderRetry.js"

/**
 * For provider authors: the stream scaffold (decoder per stream, idle and total timeouts, retried only while opening).
 *
 * @category provider
 * @since 0.1.0
 */
export * as ProviderStream from "./provider/ProviderStream.js"

/**
 * For provider authors: redaction of keys, `retry-after` parsing, typed-error checks.
 *
 * @category provider
 * @since 0.1.0
 */
export * as ProviderError from "./provider/ProviderError.js"

/**
 * For provider authors: SDK calls and event iterables as Effects and Streams, with the fiber's `AbortSignal` and typed errors.
 *
 * @category provider
 * @since 0.1.0
 */
export * as ProviderCall from "./provider/ProviderCall.js"
