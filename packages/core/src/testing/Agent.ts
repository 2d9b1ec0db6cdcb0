/**
 * An agent as the property kit sees it: your toolkit (with its strategy), your
 * handlers and the services they and the strategy need, who asks and who may
 * decide, and optionally what you promise about it (`mustAsk`: which calls a
 * person must approve, under which policy), your handler middleware
 * (`wrapHandler`), your own decision path (`decide`), your store (`store`), whether
 * it takes grants and how (`grants`, `grant`, `revoke`), your reviewer (`reviewer`),
 * and for an agent answering structured data its Schema (`output`) and how
 * your code asks for the answer (`answer`).
 * `Trace.record` runs scenarios against it; `Law` checks what they did.
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Schema from "effect/Schema"
import type * as Chat from "../chat/Chat.js"
import type * as ChatOutcome from "../chat/ChatOutcome.js"
import type * as ConversationStore from "../durable/ConversationStore.js"
import type * as Reviewer from "../governance/Reviewer.js"
import type * as Tool from "../tools/Tool.js"
import type * as Toolkit from "../tools/Toolkit.js"
import type * as DecisionPolicy from "../turn/DecisionPolicy.js"
import type * as GrantRules from "../turn/GrantRules.js"
import type * as Messages from "../turn/Messages.js"

/**
 * A call as the model proposed it: the tool's name and the arguments, parsed (`undefined` when not JSON).
 *
 * @category models
 * @since 0.3.0
 */
export interface ProposedCall {
  readonly id: string
  readonly name: string
  readonly arguments: unknown
}

/**
 * A decision a scenario takes, resolved: which call, by whom, and what.
 *
 * @category models
 * @since 0.3.0
 */
export interface Decision {
  /** `approve-late`: an approval given after the call's approval deadline passed (the scenario moved the clock past it). */
  readonly kind: "approve" | "edit" | "reject" | "cancel" | "approve-late"
  readonly id: string
  readonly by: Messages.Identity
  /** The edited arguments (JSON text), for `edit`. */
  readonly arguments?: string | undefined
  readonly reason?: string | undefined
}

/**
 * How decisions reach the messages: the chat's `approve`, `approveJson`, `reject`, `cancel` by default.
 *
 * @category models
 * @since 0.3.0
 */
export type Decide = (
  chat: Chat.Service<any, any>,
  messages: Messages.Messages,
  decision: Decision
) => Effect.Effect<Messages.Messages, unknown>

/**
 * How grants reach the messages: `Messages.grant` by default.
 *
 * @category models
 * @since 0.3.0
 */
export type GrantPath = (messages: Messages.Messages, options: GrantRules.Options) => Effect.Effect<Messages.Messages, unknown>

/**
 * How revocations reach the messages: `Messages.revokeGrant` by default.
 *
 * @category models
 * @since 0.3.0
 */
export type RevokePath = (messages: Messages.Messages, id: string, revocation: GrantRules.Revocation) => Effect.Effect<Messages.Messages, unknown>

/**
 * Your reviewer (see `Reviewer`): its settings but the model, which the kit scripts from each call's
 * `Scenario.Review`, and how you put it over your toolkit (default `Reviewer.review(tools, options)`;
 * `Grant.grantedOr` around it, or anything else you do in your chat).
 *
 * @category models
 * @since 0.3.0
 */
export interface Reviewing {
  readonly options?: Omit<Reviewer.Options, "model"> | undefined
  readonly wire?: ((tools: Toolkit.Any, options: Reviewer.Options) => Toolkit.Any) | undefined
}

/**
 * How your code asks the chat for a structured answer decoded with `output`, with the turn's options
 * (its checkpoint on the stored path): the chat's `completeStructured` by default (`chatAnswer`).
 *
 * @category models
 * @since 0.3.0
 */
export type Answer = (
  chat: Chat.Service<any, any>,
  messages: Messages.Messages,
  output: Schema.Codec<any, any>,
  options: Chat.TurnOptions
) => Effect.Effect<ChatOutcome.Result<unknown>, unknown, any>

/**
 * An agent under test.
 *
 * @category models
 * @since 0.3.0
 */
export interface Agent {
  /** The toolkit the chat is made with, strategy included. */
  readonly tools: Toolkit.Any
  /** Its handlers (`toolkit.toLayer(...)`): the kit wraps each to record every run. */
  readonly handlers: Layer.Layer<any, any, never>
  /** The services the strategy (and anything else the chat needs) use. */
  readonly layer?: Layer.Layer<any, any, never> | undefined
  /** The sender of the user's request (whom four-eyes excludes). Default `{ id: "requester" }`. */
  readonly requester?: Messages.Identity | undefined
  /** The people who decide, with their roles. Default one: `{ id: "reviewer" }`. */
  readonly deciders?: ReadonlyArray<Messages.Identity> | undefined
  /**
   * What you promise: `true` when a person must approve this call before it runs, a policy when
   * approvals must meet it, `false` when it may run on its own. The laws also hold every call the
   * turn itself sent to a person to its fixed policy.
   */
  readonly mustAsk?: ((call: ProposedCall) => boolean | DecisionPolicy.DecisionPolicy) | undefined
  /** Your handler middleware (retries, timeouts, logging), applied over the recorded handlers. */
  readonly wrapHandler?: ((handler: Tool.HandlerService, tool: Tool.Any) => Tool.HandlerService) | undefined
  /** Your decision path (an inbox, an endpoint); default: the chat's own. */
  readonly decide?: Decide | undefined
  /** Your store (a fresh one per scenario); default: `ConversationStore.makeMemory`. */
  readonly store?: Effect.Effect<ConversationStore.Service> | undefined
  /** Your strategy honours grants (`Grant.grantedOr`): scenarios give and revoke grants while paused (so do `grant` and `revoke`). */
  readonly grants?: boolean | undefined
  /** Your grant path (an admin screen, an endpoint); default `Messages.grant`. */
  readonly grant?: GrantPath | undefined
  /** Your revoke path; default `Messages.revokeGrant`. */
  readonly revoke?: RevokePath | undefined
  /** Your reviewer, consulted about the calls your strategy would run without a person. */
  readonly reviewer?: Reviewing | undefined
  /**
   * The Schema of the turn's final answer, for an agent that answers structured data: the model's
   * final answers are then JSON, valid for it or nearly, and the plain and stored paths ask through `answer`.
   */
  readonly output?: Schema.Codec<any, any> | undefined
  /** How your code asks for that answer; default: the chat's own (`chatAnswer`). */
  readonly answer?: Answer | undefined
}

/**
 * The deciders of an agent (its own, or the default reviewer).
 *
 * @category utils
 * @since 0.3.0
 */
export const decidersOf = (agent: Agent): ReadonlyArray<Messages.Identity> =>
  agent.deciders === undefined || agent.deciders.length === 0 ? [{ id: "reviewer" }] : agent.deciders

/**
 * The requester of an agent (its own, or `{ id: "requester" }`).
 *
 * @category utils
 * @since 0.3.0
 */
export const requesterOf = (agent: Agent): Messages.Identity => agent.requester ?? { id: "requester" }

/**
 * The tool of the agent named `name`, if any.
 *
 * @category utils
 * @since 0.3.0
 */
export const toolOf = (agent: Agent, name: string): Tool.Any | undefined =>
  Object.hasOwn(agent.tools.tools, name) ? agent.tools.tools[name] : undefined

/**
 * The default decision path: the chat's `approve`, `approveJson`, `reject` and `cancel`, as `decision.by`.
 *
 * @category utils
 * @since 0.3.0
 */
export const chatDecide: Decide = (chat, messages, decision) => {
  const options = { decider: decision.by }
  switch (decision.kind) {
    case "approve":
    case "approve-late":
      return chat.approve(messages, decision.id, undefined, options)
    case "edit":
      return chat.approveJson(messages, decision.id, decision.arguments ?? "{}", options)
    case "reject":
      return chat.reject(messages, decision.id, decision.reason, options)
    case "cancel":
      return Effect.flatMap(Clock.currentTimeMillis, (at) =>
        chat.cancel(messages, decision.id, {
          ...(decision.reason === undefined ? {} : { reason: decision.reason }),
          cancellation: { by: decision.by.id, at, ...(decision.by.roles === undefined ? {} : { roles: decision.by.roles }) }
        }))
  }
}

/**
 * The default way to ask for a structured answer: the chat's `completeStructured` with the agent's `output`.
 *
 * @category utils
 * @since 0.3.0
 */
export const chatAnswer: Answer = (chat, messages, output, options) => chat.completeStructured(messages, output, options)
