/**
 * Grants: standing approvals a person gives ahead of the calls they cover,
 * such as "approve `send_email` to this address for this conversation for the
 * next hour" or "approve `read_*` for this user today".
 *
 * A grant is data in the messages (on the message that was last when it was
 * made, field `grants`; the providers never send it to the model), so it
 * survives a pause, a restart, `toJson` / `fromJson`, `SignedState` and every
 * store. It names a tool (or a pattern with `*`), an argument predicate written
 * as data (see `Predicate`), an optional scope (a conversation id, a user), who
 * made it and when, and when it expires; it can be revoked.
 *
 * It covers a call only when all of these hold, checked by the reducer whatever
 * the strategy says: the call was proposed in a message after the one holding
 * the grant (so a grant never settles a call already pending), the decision
 * time is in `[at, expiresAt)`, it is not revoked, its tool pattern matches, its
 * predicate holds on the call's canonical arguments, and its scope matches the
 * turn's (`Context`). A strategy settles a call with `Action.Granted({ grant })`
 * (or `grantedOr`); the call's decision record then names the grant.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Action from "../turn/Action.js"
import * as Grants from "../turn/GrantRules.js"
import type * as Tool from "../tools/Tool.js"
import type * as Toolkit from "../tools/Toolkit.js"

export {
  /**
   * Every grant of the conversation with the index of its message.
   *
   * @category utils
   * @since 0.3.0
   */
  all,
  /**
   * Whether grant `grantId` may settle a call at `now` (the reducer's rule), or `GrantNotApplicable` saying why not.
   *
   * @category utils
   * @since 0.3.0
   */
  check,
  /**
   * The live grants covering a call (what the strategy sees as `call.grants`).
   *
   * @category utils
   * @since 0.3.0
   */
  covering,
  /**
   * The grant with this id and where it is.
   *
   * @category utils
   * @since 0.3.0
   */
  find,
  /**
   * Whether a grant is in force at `now`.
   *
   * @category guards
   * @since 0.3.0
   */
  isLive,
  /**
   * A grant from options, or `InvalidGrant`.
   *
   * @example
   * ```ts
   * import { Grant, Messages } from "@chat-ts/core"
   * import { Result } from "effect"
   *
   * // "Approve send_email to ann@example.com in conversation conv-1 for the next hour."
   * const options: Grant.Options = {
   *   id: "g1",
   *   tool: "send_email",
   *   where: { path: ["to"], equals: "ann@example.com" },
   *   scope: { conversation: "conv-1" },
   *   by: "ann",
   *   at: Date.now(),
   *   expiresAfter: "1 hour"
   * }
   * const grant = Grant.make(options) // a Result: the grant, or InvalidGrant
   *
   * // Recorded in the messages, it settles later calls it covers (see `Grant.grantedOr`).
   * const withGrant = (messages: Messages.Messages) => Result.flatMap(grant, () => Messages.grant(messages, options))
   * ```
   *
   * @category constructors
   * @since 0.3.0
   */
  make,
  /**
   * Whether a tool name matches a grant's tool pattern.
   *
   * @category utils
   * @since 0.3.0
   */
  matchesTool,
  /**
   * The longest grant id.
   *
   * @category constants
   * @since 0.3.0
   */
  maxIdLength,
  /**
   * The grant a call's decision record names, if a grant settled it.
   *
   * @category utils
   * @since 0.3.0
   */
  settledBy
} from "../turn/GrantRules.js"

export type {
  /**
   * Whom a turn acts for.
   *
   * @category models
   * @since 0.3.0
   */
  Context,
  /**
   * A grant and the index of its message.
   *
   * @category models
   * @since 0.3.0
   */
  Located,
  /**
   * What `Messages.grant` takes.
   *
   * @category models
   * @since 0.3.0
   */
  Options,
  /**
   * An argument predicate.
   *
   * @category models
   * @since 0.3.0
   */
  Predicate,
  /**
   * Who revokes a grant, when and why.
   *
   * @category models
   * @since 0.3.0
   */
  Revocation
} from "../turn/GrantRules.js"

/**
 * A grant as stored in the messages.
 *
 * @category models
 * @since 0.3.0
 */
export type Grant = Grants.Grant

/**
 * The Schema of a grant.
 *
 * @category schemas
 * @since 0.3.0
 */
export const Grant = Grants.Grant

/**
 * A strategy that asks `fallback` about every call, and settles with the first
 * live grant covering it (`Action.Granted`) only a call the fallback sends to
 * a person with no policy of its own (`Action.RequireApproval` without
 * `policy`): a grant stands for one person's yes, so it never replaces the
 * people or the quorum a per-call policy names, nor runs a call the fallback
 * defers or rejects, nor one a reviewer model sent to a person (a `review` on
 * its `RequireApproval`: the verdict stays on the call for the person). (A call
 * under its tool's `decisionPolicy` is never settled by a grant either: the
 * reducer sends it to the people it names.)
 *
 * @category utils
 * @since 0.3.0
 */
export const grantedOr = <Tools extends Record<string, Tool.Any>, R = never>(
  fallback: Toolkit.Strategy<Tools, R>
): Toolkit.Strategy<Tools, R> =>
(call, metadata): Action.Action | Effect.Effect<Action.Action, never, R> => {
  const grant = call.grants?.[0]
  const decided = fallback(call, metadata)
  if (grant === undefined) return decided
  const settle = (action: Action.Action): Action.Action => grantable(action) ? Action.Granted({ grant: grant.id }) : action
  return Effect.isEffect(decided) ? Effect.map(decided, settle) : settle(decided)
}

/**
 * Whether a grant may stand for the person `action` asks for: it asks one, under no per-call policy,
 * and no reviewer sent it there (a `review` on it: `refuse`, `needs-person`, a low-confidence `safe`,
 * `unavailable`): a standing yes given before the call was seen never overrides a verdict on this call.
 */
const grantable = (action: unknown): boolean =>
  typeof action === "object" && action !== null && "_tag" in action && action._tag === "RequireApproval" &&
  (!("policy" in action) || action.policy === undefined) &&
  (!("review" in action) || action.review === undefined)
