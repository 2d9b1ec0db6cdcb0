/**
 * A refund agent for the property kit's tests, its structured-answer and
 * governed (grants and a reviewer) variants, and nine deliberately broken
 * agents (issue 35's planted bugs): 1 a strategy that lets large refunds run on
 * their own, 2 a handler middleware that retries a refund that is not
 * idempotent, 3 a decision path that drops the decision policy, 4 a store that
 * loses its last checkpoint, 5 an answer handed back undecoded, 6 a late
 * approval that runs, 7 a revoke that records nothing, 8 a reviewer's "ask a
 * person" ignored, 9 a store that ignores leases.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Action, ChatError, type ChatOutcome, ConversationStore, type DecisionPolicy, Grant, Messages, Reviewer, Tool, Toolkit } from "../../src/index.js"
import { Agent } from "../../src/testing/index.js"

export const LookupOrder = Tool.make("lookup_order", {
  description: "Look an order up.",
  parameters: { orderId: Schema.String },
  success: Schema.Struct({ orderId: Schema.String, total: Schema.Number })
})

export const Refund = Tool.make("refund", {
  description: "Refund an amount of an order.",
  parameters: { orderId: Schema.String, amount: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2_000 })) },
  success: Schema.Struct({ refunded: Schema.Number }),
  failure: Schema.String
})

export const Remind = Tool.make("remind", {
  description: "Remind the customer later.",
  parameters: { text: Schema.String },
  success: Schema.Struct({ sent: Schema.Boolean })
})

/** Above this a person approves a refund. */
export const approvalAbove = 100
/** From this on, two people of finance, neither the requester. */
export const quorumFrom = 1_000

/** Two of finance, not the requester. */
export const bigRefund: DecisionPolicy.DecisionPolicy = { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 }
/** One of finance or support. */
export const smallRefund: DecisionPolicy.DecisionPolicy = { approve: { roles: ["finance", "support"] } }

const refundPolicy = (amount: number) => (amount >= quorumFrom ? bigRefund : smallRefund)

/** Safe to run twice (it passes the call id and attempt to the ledger): after a crash mid-run it runs again. */
export const SyncLedger = Tool.make("sync_ledger", {
  description: "Bring the ledger up to date.",
  parameters: { orderId: Schema.String },
  success: Schema.Struct({ synced: Schema.Boolean }),
  idempotent: true
})

const tools = Toolkit.make(LookupOrder, Refund, Remind, SyncLedger)

/** The strategy: lookups run, refunds above `threshold` wait for a person, reminders wait a minute. */
const strategy = (threshold: number) =>
  tools.withStrategy((call) => {
    switch (call.name) {
      case "lookup_order":
      case "sync_ledger":
        return Action.Execute()
      case "refund":
        // A person has an hour to decide.
        return call.params.amount > threshold
          ? Effect.map(Clock.currentTimeMillis, (now) => Action.RequireApproval({ policy: refundPolicy(call.params.amount), expiresAt: now + 3_600_000 }))
          : Action.Execute()
      case "remind":
        return Action.Defer({ after: 60_000 })
    }
  })

/** Handlers; the payment gateway times out on every amount ending in 3 (a failure that a retry may "fix"). */
const handlers = tools.toLayer({
  lookup_order: ({ orderId }) => Effect.succeed({ orderId, total: 500 }),
  refund: ({ amount }) => (amount % 10 === 3 ? Effect.fail("gateway timeout") : Effect.succeed({ refunded: amount })),
  remind: () => Effect.succeed({ sent: true }),
  sync_ledger: () => Effect.succeed({ synced: true })
})

/** What the refund agent promises: a person approves every refund above 100, two of finance from 1000 on. */
const mustAsk = (call: Agent.ProposedCall): boolean | DecisionPolicy.DecisionPolicy => {
  if (call.name !== "refund") return false
  const amount = (call.arguments as { readonly amount?: unknown } | undefined)?.amount
  return typeof amount === "number" && amount > approvalAbove ? refundPolicy(amount) : false
}

/** The people: two of finance, one of support, and the requester, who is of finance too. */
const deciders: ReadonlyArray<Messages.Identity> = [
  { id: "fin-1", roles: ["finance"] },
  { id: "fin-2", roles: ["finance"] },
  { id: "sup-1", roles: ["support"] },
  { id: "asker", roles: ["finance"] }
]

/** The refund agent, as it should be. */
export const refunds: Agent.Agent = {
  tools: strategy(approvalAbove),
  handlers,
  requester: { id: "asker", roles: ["finance"] },
  deciders,
  mustAsk
}

/** Planted bug 1: the strategy lets refunds up to 500 run on their own. */
export const lenientStrategy: Agent.Agent = { ...refunds, tools: strategy(500) }

/** Planted bug 2: a middleware that retries failed refunds, though a refund is not idempotent. */
export const retryingMiddleware: Agent.Agent = {
  ...refunds,
  wrapHandler: (handler, tool) =>
    tool.name === "refund" ? { handle: (params, call) => Effect.retry(handler.handle(params, call), { times: 2 }) } : handler
}

/** Planted bug 3: a decision path that approves by rewriting the call, dropping its decision policy. */
export const policyDroppingDecide: Agent.Agent = {
  ...refunds,
  decide: (chat, messages, decision) => {
    if (decision.kind !== "approve") return Agent.chatDecide(chat, messages, decision)
    return Effect.succeed(messages.map((message) => ({
      ...message,
      parts: message.parts.map((part) => {
        if (part._tag !== "ToolCall" || part.id !== decision.id) return part
        const { decidedUnder: _dropped, ...rest } = part
        return { ...rest, status: { _tag: "Approved" as const } }
      })
    })) as Messages.Messages)
  }
}

/** Planted bug 4: a store whose `load` gives the state before the last save. */
export const forgetfulStore: Agent.Agent = {
  ...refunds,
  store: Effect.map(ConversationStore.makeMemory, (store): ConversationStore.Service => {
    const previous = new Map<string, Array<ConversationStore.Stored>>()
    return {
      ...store,
      save: (id, messages, options) =>
        Effect.tap(store.save(id, messages, options), (stored) => Effect.sync(() => previous.set(id, [...(previous.get(id) ?? []), stored].slice(-2)))),
      load: (id) =>
        Effect.map(store.load(id), (found) => {
          const kept = previous.get(id) ?? []
          // The version stays the newest (saves go on), the messages are the ones before.
          return Option.map(found, (stored) => kept.length < 2 ? stored : { ...stored, messages: kept[0]!.messages })
        })
    }
  })
}

// A refund agent answering structured data, and planted bugs 5 (an answer handed back undecoded) and 6 (a late approval that runs).

/** What the structured refund agent answers at the end of its turn. */
export const RefundSummary = Schema.Struct({
  orderId: Schema.String,
  refunded: Schema.Number,
  approved: Schema.Boolean
}).annotate({ identifier: "RefundSummary" })

/** The refund agent answering a `RefundSummary` (through the chat's `completeStructured`), as it should be. */
export const structuredRefunds: Agent.Agent = { ...refunds, output: RefundSummary }

/** Planted bug 5: the answer is the raw `JSON.parse` of the model's text (text that is not JSON a typed failure), never decoded with the Schema. */
export const undecodedAnswer: Agent.Agent = {
  ...structuredRefunds,
  answer: (chat, messages, _output, options) =>
    Effect.flatMap(chat.complete(messages, options), (result): Effect.Effect<ChatOutcome.Result<unknown>, ChatError.StructuredOutputError> => {
      const outcome = result.outcome
      if (outcome._tag !== "Complete") return Effect.succeed(result)
      return Effect.try({
        try: () => ({ ...result, outcome: { ...outcome, value: JSON.parse(outcome.value) as unknown } }),
        catch: (cause) => new ChatError.StructuredOutputError({ detail: String(cause), text: outcome.value, messages: result.messages })
      })
    })
}

/** Planted bug 6: a decision path that lifts the deadline of a call approved after it ("a person said yes, so it counts"): the late approval runs. */
export const lateApprovalRuns: Agent.Agent = {
  ...refunds,
  decide: (chat, messages, decision) =>
    Effect.flatMap(Agent.chatDecide(chat, messages, decision), (decided) =>
      Effect.map(Clock.currentTimeMillis, (now) =>
        decided.map((message) => ({
          ...message,
          parts: message.parts.map((part) => {
            if (part._tag !== "ToolCall" || part.id !== decision.id || part.status._tag !== "Approved") return part
            const { expiresAt, ...status } = part.status
            return expiresAt !== undefined && expiresAt <= now ? { ...part, status } : part
          })
        })) as Messages.Messages))
}

// The refund agent with grants and a reviewer, and planted bugs 7 (a revoke that records nothing) and 8 (a reviewer ignored).

/** What a grant may stand for in the governed agent: reminders and ledger syncs wait for a person unless a grant covers them. */
const grantable = new Set(["remind", "sync_ledger"])

/** The governed refund agent's strategy: the refund agent's, but a grantable call waits for a person unless a grant covers it. */
const governedStrategy = tools.withStrategy(Grant.grantedOr((call, metadata) =>
  grantable.has(call.name) ? Action.RequireApproval() : strategy(approvalAbove).strategy!(call, metadata)
))

/**
 * The refund agent with grants and a reviewer: reminders and ledger syncs need a person or a grant (the promise), and a
 * reviewer model is asked about every call the strategy would run without a person.
 */
export const governed: Agent.Agent = {
  ...refunds,
  tools: governedStrategy,
  grants: true,
  reviewer: { options: { instructions: "Lookups are routine; refunds are not." } },
  mustAsk: (call) => (grantable.has(call.name) ? true : mustAsk(call))
}

/** Planted bug 7: a revoke path that confirms the revocation but never records it (the grant stays in force). */
export const revokeIgnored: Agent.Agent = {
  ...governed,
  reviewer: undefined,
  revoke: (messages) => Effect.succeed(messages)
}

/** Planted bug 8: a reviewer wired behind a wrapper that takes its "ask a person" as advice (the call runs). */
export const reviewerIgnored: Agent.Agent = {
  ...governed,
  reviewer: {
    ...governed.reviewer,
    wire: (kit, options) => {
      const reviewed = Reviewer.review(kit as typeof governedStrategy, options)
      return reviewed.pipe(Toolkit.withStrategy((call, metadata) =>
        Effect.map(Effect.suspend(() => reviewed.strategy!(call, metadata) as Effect.Effect<Action.Action>), (action) =>
          action._tag === "RequireApproval" && action.review?.verdict === "needs-person" ? Action.Execute() : action)
      ))
    }
  }
}

/**
 * Planted bug 9: a store that ignores leases: `acquire` always succeeds, taking the lease from
 * whoever holds it (a live worker's as well as a dead one's), so two workers may run one turn at once.
 */
export const leaseIgnoringStore: Agent.Agent = {
  ...refunds,
  store: Effect.map(ConversationStore.makeMemory, (store): ConversationStore.Service => {
    const held = new Map<string, ConversationStore.Lease>()
    const acquire: ConversationStore.Service["acquire"] = (id, owner, ttl) =>
      store.acquire(id, owner, ttl).pipe(
        Effect.catchTag("ConversationBusy", () => {
          const holder = held.get(id)
          return holder === undefined ? store.acquire(id, owner, ttl) : Effect.andThen(store.release(holder), store.acquire(id, owner, ttl))
        }),
        Effect.tap((lease) => Effect.sync(() => held.set(id, lease)))
      )
    // No `acquireAndLoad` of its own: `Worker.resume` acquires through the broken `acquire`, then loads.
    const { acquireAndLoad: _own, ...rest } = store
    return { ...rest, acquire }
  })
}
