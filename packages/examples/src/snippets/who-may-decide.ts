// Human in the loop: who may decide (decision policies: roles, four-eyes, a quorum).
// #region imports
import { Action, type Chat, DecisionPolicy, Messages, Tool, Toolkit } from "@chat-ts/core"
import { Effect, Schema } from "effect"
// #endregion imports

// #region tool
// Two people of finance approve a payment, and not the person who asked for it.
const Pay = Tool.make("pay", {
  description: "Pay an invoice.",
  parameters: { invoice: Schema.String, amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number }),
  metadata: { limit: 1_000 },
  decisionPolicy: {
    approve: { roles: ["finance"] },
    reject: { roles: ["finance", "sales"] },
    notRequester: true,
    quorum: 2
  }
})
// #endregion tool

// #region per-call
// The strategy decides whether a person is needed, and may pick the policy per call:
// below the tool's limit one person of finance is enough; above it, the tool's own policy.
export const toolkit = Toolkit.make(Pay).pipe(
  Toolkit.withStrategy((call, meta) =>
    call.params.amount <= meta.limit
      ? Action.RequireApproval({ policy: DecisionPolicy.make({ approve: { roles: ["finance"] } }) })
      : Action.RequireApproval()
  )
)
// #endregion per-call

/** The handlers: paying always works here. */
export const handlers = toolkit.toLayer({ pay: ({ amount }) => Effect.succeed({ paid: amount }) })

/** The request, sent by a person of sales. */
export const request =
  // #region requester
  // Who asked: the sender of the user message that starts the turn (never sent to the model).
  Messages.fromUser("Pay invoice 42 (2,500 EUR).", { sender: { id: "alice", roles: ["sales"] } })
  // #endregion requester

/** One person's yes, through the chat; a refusal leaves the messages as they were. */
export const approveAs = (chat: Chat.Service, messages: Messages.Messages, id: string, decider: Messages.Identity) =>
  // #region decide
  chat.approve(messages, id, undefined, { decider }).pipe(
    Effect.catchTags({
      // Not allowed (not named by the policy, the requester, no identity…), or a second yes by the same person.
      DecisionNotAllowed: (error) => Effect.as(Effect.logWarning(error.message), messages),
      DuplicateVote: (error) => Effect.as(Effect.logWarning(error.message), messages)
    })
  )
  // #endregion decide

/** What a UI shows about a waiting call: who asked, who may decide, how far its quorum is, and which buttons the viewer may press. */
export const describeCall = (messages: Messages.Messages, id: string, viewer: Messages.Identity) => {
  // #region progress
  const call = Messages.findTool(messages, id)!
  const policy = DecisionPolicy.of(call) // { approve: { roles: ["finance"] }, notRequester: true, quorum: 2, … }
  const { quorum, votes } = DecisionPolicy.progress(call) // 2, [{ by: "bob", at, roles, argumentsHash }]
  const canApprove = DecisionPolicy.mayDecide(messages, call, "approve", viewer) // { allowed: false, detail: "…four-eyes…" }
  const canCancel = DecisionPolicy.mayWithdraw(messages, call, viewer) // { allowed: true }: the requester withdraws their own request
  const askedBy = DecisionPolicy.requestersOf(messages, id).map((requester) => requester?.id ?? "unknown") // ["alice"]
  // #endregion progress
  return { policy, quorum, votes, canApprove, canCancel, askedBy }
}
