/**
 * The agent of the tests: `send_email` and `transfer` need approval
 * (`transfer` within an hour, its amount at most 1000), `lookup` runs at once,
 * `explode` fails, `remind` runs in an hour, `wipe` is rejected by the policy;
 * every run is counted. The model fails on "fail please". The scripted model answers a user
 * message `please do: [calls]` with those calls, and anything else with a
 * text naming the results it was sent (slowly, when the message starts with "slowly"). An approver trusts `x-test-user`
 * (bob may not decide `transfer`).
 */
import { Action, Chat, ChatError, ConversationStore, LanguageModel, Messages, Tool, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Approver } from "@chat-ts/inbox"
import { Clock, Effect, Layer, Schema, Stream } from "effect"

export const SendEmail = Tool.make("send_email", {
  description: "Send an email.",
  parameters: { to: Schema.String, subject: Schema.String },
  success: Schema.Struct({ sent: Schema.Boolean })
})

export const Transfer = Tool.make("transfer", {
  description: "Move money between accounts.",
  parameters: { amount: Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1000)), to: Schema.String },
  success: Schema.Struct({ moved: Schema.Number })
})

export const Lookup = Tool.make("lookup", {
  description: "Look a word up.",
  parameters: { word: Schema.String },
  success: Schema.Struct({ meaning: Schema.String })
})

export const Explode = Tool.make("explode", {
  description: "Always fails.",
  parameters: {},
  success: Schema.Struct({}),
  failure: Schema.Struct({ problem: Schema.String })
})

export const Remind = Tool.make("remind", {
  description: "Remind later (runs in an hour).",
  parameters: { note: Schema.String },
  success: Schema.Struct({ reminded: Schema.Boolean })
})

export const Wipe = Tool.make("wipe", {
  description: "Never allowed.",
  parameters: {},
  success: Schema.Struct({})
})

export const toolkit = Toolkit.make(SendEmail, Transfer, Lookup, Explode, Remind, Wipe).pipe(
  Toolkit.withStrategy((call) =>
    call.name === "transfer"
      ? Effect.map(Clock.currentTimeMillis, (now) => Action.RequireApproval({ expiresAt: now + 3_600_000 }))
      : call.name === "send_email"
      ? Effect.succeed(Action.RequireApproval())
      : call.name === "remind"
      ? Effect.succeed(Action.Defer({ after: 3_600_000 }))
      : call.name === "wipe"
      ? Effect.succeed(Action.Reject({ reason: "wiping is never allowed" }))
      : Effect.succeed(Action.Execute())
  )
)

/** Every run of a tool: its name and arguments. */
export type Runs = Array<{ readonly tool: string; readonly params: unknown }>

export const handlers = (runs: Runs) =>
  toolkit.toLayer({
    send_email: (params) => Effect.sync(() => (runs.push({ tool: "send_email", params }), { sent: true })),
    transfer: (params) => Effect.sync(() => (runs.push({ tool: "transfer", params }), { moved: params.amount })),
    lookup: (params) => Effect.sync(() => (runs.push({ tool: "lookup", params }), { meaning: `the meaning of ${params.word}` })),
    explode: () => Effect.suspend(() => (runs.push({ tool: "explode", params: {} }), Effect.fail({ problem: "boom" }))),
    remind: (params) => Effect.sync(() => (runs.push({ tool: "remind", params }), { reminded: true })),
    wipe: () => Effect.sync(() => (runs.push({ tool: "wipe", params: {} }), {}))
  })

/** The user message that makes the model ask for these calls. */
export const asking = (calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly arguments: unknown }>) =>
  `please do: ${JSON.stringify(calls)}`

/** The model: `asking(calls)` gets the calls (with some reasoning first), anything else a text. */
export const model = () =>
  MockLanguageModel.make((request) => {
    const last = request.messages[request.messages.length - 1]!
    const text = Messages.textOf(last)
    if (last.role === "user" && text === "fail please") {
      return Effect.fail(new ChatError.InvalidRequest({ message: "the model refused the request" }))
    }
    if (last.role === "user" && text.startsWith("please do: ")) {
      return MockLanguageModel.toolCalls(JSON.parse(text.slice("please do: ".length)), { reasoning: "I should do that." })
    }
    return MockLanguageModel.text(last.role === "user" ? `you said: ${text}` : "all done")
  })

/** The approver: `x-test-user` names the person; bob may not decide `transfer`. */
export const approver = Approver.fromTrustedHeader("x-test-user", (identity, request) =>
  Effect.succeed(!(identity.id === "bob" && request.tool === "transfer")))

/** A request the model answers slowly (a piece every 20 ms, on the clock): long enough to send something while it streams. */
export const slowly = `slowly ${"and on ".repeat(40)}`

/** `scripted` as a model whose answer to a last message starting with "slowly" streams slowly. */
const slowWhenAsked = (scripted: ReturnType<typeof model>) =>
  LanguageModel.layer({
    generate: scripted.generate,
    stream: (request) => {
      const last = request.messages.at(-1)
      const slow = last?.role === "user" && Messages.textOf(last).startsWith("slowly")
      return slow ? Stream.tap(scripted.stream(request), () => Effect.sleep("20 millis")) : scripted.stream(request)
    }
  })

/** The chat, its model, the runs and the store. */
export const make = Effect.gen(function*() {
  const runs: Runs = []
  const scripted = model()
  const store = yield* ConversationStore.makeMemory
  const chat = yield* Chat.make({ tools: toolkit }).pipe(Effect.provide(Layer.merge(slowWhenAsked(scripted), handlers(runs))))
  const services = Layer.mergeAll(
    Layer.succeed(ConversationStore.ConversationStore, store),
    Layer.succeed(Approver.Approver, approver)
  )
  return { runs, model: scripted, store, chat, services }
})
