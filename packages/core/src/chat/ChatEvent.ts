/**
 * The events of a streamed turn (`chat.stream`): text and reasoning as they
 * arrive, tool call arguments as they arrive, each tool call and each tool result (also of rejected and failed
 * calls), a running call's requests for a person's input, the end of each model call, and finally a pause or the completion.
 * A pause is the last event of its stream; streaming the resolved messages
 * continues the same turn.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { FinishReason, InputRequest, Message, Messages, ToolCallPart } from "../turn/Messages.js"
import type { PauseReason } from "../data/PauseReason.js"
import type { Usage } from "../data/Usage.js"

/**
 * An event of a streamed turn.
 *
 * @category models
 * @since 0.1.0
 */
export type ChatEvent = Data.TaggedEnum<{
  /** A piece of the model's text. */
  TextDelta: { readonly text: string }
  /** A piece of the model's reasoning. */
  ReasoningDelta: { readonly text: string }
  /**
   * A piece of a tool call's arguments as the model streams them. The first one of a call comes as
   * soon as its name is known (`argumentsDelta` may be empty); joined in order they make the
   * arguments the provider sent. `id` is the id the call gets in the messages (made unique in the
   * conversation, as the later `ToolCall` event and `call.id` carry it), not always the provider's.
   */
  ToolCallDelta: { readonly id: string; readonly name: string; readonly argumentsDelta: string }
  /** The model asked for this call (emitted when its response is complete). */
  ToolCall: { readonly call: ToolCallPart }
  /** A call got its answer: completed, failed or rejected (see `call.status`). */
  ToolResult: { readonly call: ToolCallPart }
  /**
   * A running call waits on a request for a person's input (an MCP server's elicitation): `request`
   * is on `call.status.inputRequests` (and in the checkpoint saved with it) until `InputSettled`.
   */
  InputRequested: { readonly call: ToolCallPart; readonly request: InputRequest }
  /** The request `requestId` of a running call was answered, cancelled or timed out. */
  InputSettled: { readonly call: ToolCallPart; readonly requestId: string }
  /** With `waitForScheduled`: the turn sleeps until `until` (epoch millis), when these scheduled calls are due. */
  Waiting: { readonly until: number; readonly toolIds: ReadonlyArray<string> }
  /**
   * Input (`input`, the burst as sent) interrupted model call number `step` while it streamed: its
   * HTTP stream was closed, `answer` is what it had said as the messages keep it (`undefined`: dropped,
   * or it said nothing), and the model is called again with the input (unless the turn's restarts ran out).
   */
  AnswerInterrupted: { readonly step: number; readonly input: ReadonlyArray<Message>; readonly answer: Message | undefined }
  /** Model call number `step` of the turn finished (an interrupted one too, with the usage known when it stopped). */
  StepFinished: { readonly step: number; readonly usage: Usage; readonly finishReason: FinishReason }
  /** The turn paused; resolve the calls in `messages` and stream them again to go on. */
  Paused: { readonly reason: PauseReason; readonly messages: Messages; readonly usage: Usage }
  /** The turn is complete. */
  Completed: { readonly response: Message; readonly messages: Messages; readonly usage: Usage }
}>

/**
 * Constructors and matchers of chat events.
 *
 * @category constructors
 * @since 0.1.0
 */
export const ChatEvent = Data.taggedEnum<ChatEvent>()

/**
 * The last event of a stream: the turn paused or completed.
 *
 * @category models
 * @since 0.1.0
 */
export type Final = Extract<ChatEvent, { readonly _tag: "Paused" | "Completed" }>

/**
 * Whether an event is the last one of its stream (`Paused` or `Completed`).
 *
 * @category guards
 * @since 0.1.0
 */
export const isFinal = (event: ChatEvent): event is Final => event._tag === "Paused" || event._tag === "Completed"

/**
 * An event of a structured turn streamed with `chat.streamStructured`: the
 * answer's value as its JSON arrives, then the pause or the decoded value.
 *
 * @category models
 * @since 0.1.0
 */
export type StructuredEvent<A> = Data.TaggedEnum<{
  /**
   * The answer's JSON known so far (open objects, arrays and strings closed where the text stops; a
   * number or literal only once complete), in the schema's encoded form and not checked against it.
   * Emitted when it changed.
   */
  Partial: { readonly value: unknown }
  /** The turn paused (as `completeStructured` returns it); resolve the calls in `messages` and stream them again. */
  Paused: { readonly reason: PauseReason; readonly messages: Messages; readonly usage: Usage }
  /** The turn is complete: the whole answer decoded with the schema. */
  Completed: { readonly value: A; readonly response: Message; readonly messages: Messages; readonly usage: Usage }
}>

/**
 * The type lambda of `StructuredEvent`, for its constructors.
 *
 * @category models
 * @since 0.1.0
 */
export interface StructuredEventDefinition extends Data.TaggedEnum.WithGenerics<1> {
  readonly taggedEnum: StructuredEvent<this["A"]>
}

/**
 * Constructors and matchers of structured events.
 *
 * @category constructors
 * @since 0.1.0
 */
export const StructuredEvent = Data.taggedEnum<StructuredEventDefinition>()
