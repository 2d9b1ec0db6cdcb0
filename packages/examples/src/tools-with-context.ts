/**
 * Tools with context: typed metadata on each tool, read by a strategy that
 * decides every call: run it, ask a person, or refuse it. The strategy may
 * use services (here, who the current user is); the handlers never see the
 * metadata.
 *
 *   npx tsx src/tools-with-context.ts
 */
// #region imports
import { Action, Chat, Messages, PauseReason, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Console, Context, Effect, Schema } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

// #region metadata
/** What the strategy knows about a tool. */
interface ApprovalMeta {
  readonly requiresApproval: boolean
  /** Calls below this amount run without asking. */
  readonly autoApproveBelow?: number
}

const LookupOrder = Tool.make("lookup_order", {
  description: "Look up an order by id.",
  parameters: { orderId: Schema.String },
  success: Schema.Struct({ orderId: Schema.String, total: Schema.Number, status: Schema.String }),
  metadata: { requiresApproval: false } satisfies ApprovalMeta as ApprovalMeta
})

const RefundOrder = Tool.make("refund_order", {
  description: "Refund an amount of an order to the customer.",
  parameters: { orderId: Schema.String, amount: Schema.Number },
  success: Schema.Struct({ refunded: Schema.Number }),
  metadata: { requiresApproval: true, autoApproveBelow: 50 } satisfies ApprovalMeta as ApprovalMeta
})
// #endregion metadata

// #region strategy
/** Who is using the agent. */
export class CurrentUser extends Context.Service<
  CurrentUser,
  { readonly name: string; readonly canRefund: boolean }
>()("CurrentUser") {}

export const toolkit = Toolkit.make(LookupOrder, RefundOrder).pipe(
  Toolkit.withStrategy((call, meta) =>
    Effect.gen(function*() {
      if (!meta.requiresApproval) return Action.Execute()
      const user = yield* CurrentUser
      if (!user.canRefund) return Action.Reject({ reason: `${user.name} may not issue refunds.` })
      if (call.name === "refund_order" && call.params.amount < (meta.autoApproveBelow ?? 0)) {
        return Action.Execute()
      }
      return Action.RequireApproval()
    })
  )
)
// #endregion strategy

export const handlers = toolkit.toLayer({
  lookup_order: ({ orderId }) => Effect.succeed({ orderId, total: orderId === "A-1002" ? 480 : 12.5, status: "delivered" }),
  refund_order: ({ amount }) => Effect.succeed({ refunded: amount })
})

const request = "Refund order A-1001 (12.50) and order A-1002 (480.00) in full."

// #region program
/** One turn for `user`; a supervisor approves whatever pauses. */
const turnFor = (chat: Chat.Service<CurrentUser>, user: CurrentUser["Service"]) =>
  Effect.gen(function*() {
    yield* Console.log(`--- ${user.name} asks: ${request}`)
    let result = yield* chat.complete(Messages.fromUser(request))
    while (result.outcome._tag === "Paused") {
      let messages = result.messages
      for (const id of PauseReason.approvalIds(result.outcome.reason)) {
        const call = Messages.findTool(messages, id)!
        yield* Console.log(`paused: ${call.name} ${call.arguments} needs approval; a supervisor approves`)
        messages = yield* Effect.fromResult(Messages.approve(messages, id))
      }
      result = yield* chat.resume(messages)
    }
    for (const call of Messages.toolCalls(result.messages)) {
      const status = call.status
      yield* Console.log(
        `${call.name} ${call.arguments}: ${status._tag}${status._tag === "Rejected" ? ` (${status.reason})` : ""}`
      )
    }
    yield* Console.log(result.outcome.value)
    return result
  }).pipe(Effect.provideService(CurrentUser, user))

export const program = Effect.gen(function*() {
  const chat = yield* Chat.make({ tools: toolkit })
  const ana = yield* turnFor(chat, { name: "Ana", canRefund: true })
  const bob = yield* turnFor(chat, { name: "Bob", canRefund: false })
  return [ana.messages, bob.messages]
}).pipe(Effect.provide(handlers))
// #endregion program

/** The offline model: looks both orders up, refunds their totals, then reports what happened to each refund. */
export const offline: MockLanguageModel.Script = (request) => {
  const last = request.messages.at(-1)
  if (last === undefined || last.role === "user") {
    return MockLanguageModel.toolCalls([
      { name: "lookup_order", arguments: { orderId: "A-1001" } },
      { name: "lookup_order", arguments: { orderId: "A-1002" } }
    ])
  }
  const calls = Messages.toolCallsOf(last)
  if (calls.every((call) => call.name === "lookup_order")) {
    return MockLanguageModel.toolCalls(calls.map((call) => {
      const order = (call.status._tag === "Completed" ? call.status.result : {}) as { orderId: string; total: number }
      return { name: "refund_order", arguments: { orderId: order.orderId, amount: order.total } }
    }))
  }
  const lines = calls.map((call) => {
    const { orderId } = Messages.parsedArguments(call) as { readonly orderId: string }
    return call.status._tag === "Completed"
      ? `${orderId} refunded.`
      : `${orderId} not refunded (${call.status._tag === "Rejected" ? call.status.reason : call.status._tag}).`
  })
  return MockLanguageModel.text(lines.join(" "))
}

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.languageModel(choice, offline))))
}
