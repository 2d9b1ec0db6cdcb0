/**
 * The doc snippets that are not examples run here too, so the docs show code
 * that works, not just code that compiles.
 */
import { Chat, ChatError, ConversationStore, Messages, Worker } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Fiber, Layer, Metric, Ref, Result } from "effect"
import { TestClock } from "effect/testing"
import * as HumanInTheLoop from "../src/human-in-the-loop.js"
import * as Architecture from "../src/snippets/architecture.js"
import * as ChangingTools from "../src/snippets/changing-tools.js"
import * as ConversationStoreSnippet from "../src/snippets/conversation-store.js"
import * as Errors from "../src/snippets/errors.js"
import * as Events from "../src/snippets/events.js"
import * as Grants from "../src/snippets/grants.js"
import * as HitlExtras from "../src/snippets/hitl-extras.js"
import * as PersistenceExtras from "../src/snippets/persistence-extras.js"
import * as ReviewerSnippet from "../src/snippets/reviewer.js"
import * as ToolFiles from "../src/snippets/tool-files.js"
import * as ToolServices from "../src/snippets/tool-services.js"
import * as TypedMetadata from "../src/snippets/typed-metadata.js"
import * as WhoMayDecide from "../src/snippets/who-may-decide.js"
import * as FakeOpenAi from "./support/FakeOpenAi.js"
import { runTsx } from "./support/run.js"

describe("snippets", () => {
  it("streaming: chat.events streams a turn with for await through its pause to the completion", async () => {
    const chat = await Events.makeChat()
    let out = ""
    const last = await Events.approveAll(chat, "Delete the old logs.", (text) => (out += text))
    expect(out).toBe("I will delete them.\n-> delete_files {\"paths\":[\"jan.log\",\"feb.log\"]}\nDeleted both.")
    expect(last?._tag).toBe("Completed")
    expect(Messages.findTool(last!.messages, "d1")?.status).toEqual({ _tag: "Completed", result: { deleted: 2 } })
  })

  it("streaming: aborting the signal stops chat.events' turn and the loop throws the signal's reason", async () => {
    const chat = await Events.makeChat()
    const controller = new AbortController()
    const error = await Events.printTurn(chat, Messages.fromUser("Delete the old logs."), () => controller.abort(new Error("closed")), controller.signal)
      .then(() => undefined, (error: unknown) => error)
    expect(error).toMatchObject({ message: "closed" })
  })

  it.effect("tools: an image in a result is stored as a file and reaches the model as one, not as base64 text", () =>
    Effect.gen(function*() {
      const { status, seen } = yield* ToolFiles.takeScreenshot
      expect(status).toMatchObject({ _tag: "Completed", result: { title: "Example", png: { file: 0 } } })
      expect(seen?.text).toBe("{\"title\":\"Example\",\"png\":{\"file\":0}}")
      expect(seen?.files?.map((file) => file.mediaType)).toEqual(["image/png"])
    }))

  it.effect("tools: a handler's typed failure reaches the model as the call's result", () =>
    Effect.gen(function*() {
      const statuses = yield* ToolServices.askTwoCities
      expect(statuses).toEqual([
        { _tag: "Completed", result: { temperature: 17 } },
        { _tag: "Failed", error: { error: "I know no city called Atlantis." } }
      ])
    }))

  it.effect("tools: with refreshTools, a tool enabled by a call is offered in the next request of the same turn", () =>
    Effect.gen(function*() {
      const { offered, statuses } = yield* ChangingTools.enableThenAsk
      expect(offered).toEqual([["enable_weather"], ["enable_weather", "get_weather"], ["enable_weather", "get_weather"]])
      expect(statuses).toEqual([{ _tag: "Completed", result: "enabled" }, { _tag: "Completed", result: 17 }])
    }))

  it("tools with context: a strategy reads each tool's own metadata", () => {
    const strategy = TypedMetadata.toolkit.strategy!
    const email = (to: string) =>
      strategy(
        { id: "e", name: "send_email", params: { to, body: "hi" }, arguments: "{}", metadata: TypedMetadata.toolkit.tools.send_email.metadata },
        TypedMetadata.toolkit.tools.send_email.metadata
      )
    const transfer = (amount: number) =>
      strategy(
        { id: "t", name: "transfer", params: { iban: "DE00", amount }, arguments: "{}", metadata: TypedMetadata.toolkit.tools.transfer.metadata },
        TypedMetadata.toolkit.tools.transfer.metadata
      )
    expect([email("bob@example.com"), email("eve@elsewhere.org"), transfer(50), transfer(500)].map((a) => (a as { _tag: string })._tag))
      .toEqual(["Execute", "RequireApproval", "Execute", "RequireApproval"])
  })

  it("architecture: the reducer walked by hand", () => {
    expect(Architecture.walkthrough()).toEqual(["CallModel", "Decide", "Pause", "RunTools", "CallModel"])
  })

  describe("human in the loop", () => {
    const paused = Effect.gen(function*() {
      const model = MockLanguageModel.make(HumanInTheLoop.offline)
      const chat = yield* Chat.make({ tools: HumanInTheLoop.toolkit }).pipe(
        Effect.provide(Layer.merge(model.layer, HumanInTheLoop.handlers))
      )
      const result = yield* chat.complete(Messages.fromUser("Delete the old logs."))
      return { chat, messages: result.messages, id: Messages.toolCalls(result.messages)[0]!.id }
    })

    it.effect("an edited approval runs with the edit", () =>
      Effect.gen(function*() {
        const { chat, id, messages } = yield* paused
        const done = yield* chat.resume(yield* Effect.fromResult(HitlExtras.approveEdited(messages, id)))
        expect(Messages.findTool(done.messages, id)!.status).toMatchObject({
          _tag: "Completed",
          result: { deleted: ["app-2025-03.log"] }
        })
      }))

    it.effect("an edit approved through the chat is checked at once; a bad one leaves the messages unchanged", () =>
      Effect.gen(function*() {
        const { chat, id, messages } = yield* paused
        expect(yield* HitlExtras.approveChecked(chat, messages, id)).toEqual(messages)
        const good = yield* chat.approve(messages, id, { paths: ["app-2025-03.log"] })
        expect(Messages.findTool(good, id)!.status._tag).toBe("Approved")
      }))

    it.effect("moving on cancels the pending call with the reason; deciding twice is refused", () =>
      Effect.gen(function*() {
        const { id, messages } = yield* paused
        expect(Messages.append(messages, Messages.user("next"))).toMatchObject(Result.fail({ _tag: "PendingToolCalls" }))
        const next = yield* Effect.fromResult(HitlExtras.moveOn(messages))
        expect(Messages.findTool(next, id)!.status).toEqual({
          _tag: "Cancelled",
          by: "user-message",
          reason: "The user moved on without deciding."
        })
        expect(HitlExtras.decideTwice(messages, id)).toEqual(Result.fail("ToolCallAlreadyResolved"))
      }))

    it.effect("an approval nobody gives in a day expires", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make(HumanInTheLoop.offline)
        const chat = yield* Chat.make({ tools: HitlExtras.expiring }).pipe(
          Effect.provide(Layer.merge(model.layer, HumanInTheLoop.handlers))
        )
        const first = yield* chat.complete(Messages.fromUser("Delete the old logs."))
        yield* TestClock.adjust("25 hours")
        const later = yield* chat.resume(first.messages)
        expect(Messages.toolCalls(later.messages)[0]!.status).toMatchObject({ _tag: "Expired" })
        expect(later.outcome._tag).toBe("Complete")
      }))

    it.effect("an operator's cancel: the call never runs, the model reads a cancellation, the audit keeps who", () =>
      Effect.gen(function*() {
        const { chat, id, messages } = yield* paused
        const cancelled = yield* Effect.fromResult(HitlExtras.withdraw(messages, id))
        expect(Messages.findTool(cancelled, id)!.status).toMatchObject({ _tag: "Cancelled", by: "operator", cancellation: { by: "ops@example.com" } })
        const done = yield* chat.resume(cancelled)
        expect(done.outcome._tag).toBe("Complete")
        const seen = Messages.projectToolCall(Messages.findTool(done.messages, id)!).result!.text
        expect(seen).toContain("cancelled by an operator")
        expect(seen).not.toContain("ops@example.com")
      }))

    it.effect("steering: the new message cancels the undecided call and is answered; queued, it waits for the decision", () =>
      Effect.gen(function*() {
        const { chat, id, messages } = yield* paused
        const steered = yield* chat.resume(yield* Effect.fromResult(HitlExtras.steer(messages)))
        expect(Messages.findTool(steered.messages, id)!.status).toMatchObject({ _tag: "Cancelled", by: "user-message" })
        expect(steered.messages.filter((m) => m.role === "user").map(Messages.textOf)).toEqual([
          "Delete the old logs.",
          "Actually, keep them all."
        ])
        const queued = yield* chat.resume(yield* Effect.fromResult(HitlExtras.queue(messages)))
        expect(queued.outcome._tag).toBe("Paused")
        const done = yield* chat.resume(yield* chat.approve(queued.messages, id))
        expect(Messages.findTool(done.messages, id)!.status._tag).toBe("Completed")
        expect(Messages.textOf(done.messages.filter((m) => m.role === "user").at(-1)!)).toBe("And after that, list what is left.")
      }))
  })

  describe("a reviewer model and shadow mode", () => {
    const ask = Messages.fromUser("Delete the old logs.")
    const verdict = (value: object) => MockLanguageModel.text(JSON.stringify(value))

    it.effect("a doubtful reviewer sends the deletion to a person, who sees its verdict; a confident 'safe' lets it run", () =>
      Effect.gen(function*() {
        const doubtful = MockLanguageModel.make([verdict({ verdict: "needs-person", reason: "Deletes for good.", confidence: 0.9 })])
        const model = MockLanguageModel.make(HumanInTheLoop.offline)
        const chat = yield* Chat.make({ tools: ReviewerSnippet.reviewed(doubtful) }).pipe(
          Effect.provide(Layer.merge(model.layer, HumanInTheLoop.handlers))
        )
        const shown = yield* ReviewerSnippet.forTheApprover(chat, ask)
        expect(shown.map((item) => [item.call.name, item.review])).toEqual([
          ["delete_files", { verdict: "needs-person", reason: "Deletes for good.", confidence: 0.9 }]
        ])
        expect(doubtful.requests[0]!.options.responseFormat?.name).toBe("ToolCallReview")

        const confident = MockLanguageModel.make([verdict({ verdict: "safe", reason: "Old logs.", confidence: 0.95 })])
        const model2 = MockLanguageModel.make(HumanInTheLoop.offline)
        const chat2 = yield* Chat.make({ tools: ReviewerSnippet.reviewed(confident) }).pipe(
          Effect.provide(Layer.merge(model2.layer, HumanInTheLoop.handlers))
        )
        expect(yield* ReviewerSnippet.forTheApprover(chat2, ask)).toEqual([])
      }))

    it.effect("a reviewer slower than 5 seconds sends the deletion to a person", () =>
      Effect.gen(function*() {
        const slow = MockLanguageModel.make(() =>
          Effect.as(Effect.sleep("6 seconds"), verdict({ verdict: "safe", reason: "fine", confidence: 1 }))
        )
        const model = MockLanguageModel.make(HumanInTheLoop.offline)
        const chat = yield* Chat.make({ tools: ReviewerSnippet.reviewed(slow) }).pipe(
          Effect.provide(Layer.merge(model.layer, HumanInTheLoop.handlers))
        )
        const fiber = yield* Effect.forkChild(ReviewerSnippet.forTheApprover(chat, ask))
        yield* TestClock.adjust("5 seconds")
        const shown = yield* Fiber.join(fiber)
        expect(shown.map((item) => item.review?.verdict)).toEqual(["unavailable"])
      }))

    it.effect("shadow mode: the deletion still waits for a person, and the candidate's disagreement is counted", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make(HumanInTheLoop.offline)
        const chat = yield* Chat.make({ tools: ReviewerSnippet.trial }).pipe(
          Effect.provide(Layer.merge(model.layer, HumanInTheLoop.handlers))
        )
        const result = yield* chat.complete(ask)
        expect(result.outcome._tag).toBe("Paused")
        // The candidate runs in the background: let it (a bounded wait).
        for (let i = 0; i < 1_000 && (yield* ReviewerSnippet.wouldHaveRun).count === 0; i++) yield* Effect.yieldNow
        expect((yield* ReviewerSnippet.wouldHaveRun).count).toBe(1)
      }).pipe(Effect.provideService(Metric.MetricRegistry, new Map())))
  })

  describe("who may decide", () => {
    const start = (amount: number) =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "p1", name: "pay", arguments: { invoice: "42", amount } }]),
          MockLanguageModel.text("Paid.")
        ])
        const chat = yield* Chat.make({ tools: WhoMayDecide.toolkit }).pipe(Effect.provide(Layer.merge(model.layer, WhoMayDecide.handlers)))
        return { chat, paused: yield* chat.complete(WhoMayDecide.request) }
      })
    const alice = { id: "alice", roles: ["sales"] }
    const bob = { id: "bob", roles: ["finance"] }
    const carol = { id: "carol", roles: ["finance"] }

    it.effect("above the limit: the requester and sales are refused, one yes waits, the same yes again is refused, two run it", () =>
      Effect.gen(function*() {
        const { chat, paused } = yield* start(2_500)
        const refused = yield* WhoMayDecide.approveAs(chat, paused.messages, "p1", alice)
        expect(refused).toBe(paused.messages)
        expect(WhoMayDecide.describeCall(paused.messages, "p1", alice)).toMatchObject({
          policy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 },
          quorum: 2,
          votes: [],
          canApprove: { allowed: false },
          canCancel: { allowed: true },
          askedBy: ["alice"]
        })
        // bob (finance) may reject it, so he may withdraw it too; dave (no role, did not ask) may not.
        expect(WhoMayDecide.describeCall(paused.messages, "p1", bob).canCancel).toStrictEqual({ allowed: true })
        expect(WhoMayDecide.describeCall(paused.messages, "p1", { id: "dave" }).canCancel).toMatchObject({ allowed: false })
        const one = yield* WhoMayDecide.approveAs(chat, paused.messages, "p1", bob)
        expect(WhoMayDecide.describeCall(one, "p1", carol)).toMatchObject({ votes: [{ by: "bob" }], canApprove: { allowed: true } })
        expect(yield* WhoMayDecide.approveAs(chat, one, "p1", bob)).toBe(one)
        expect((yield* chat.resume(one)).outcome._tag).toBe("Paused")
        const two = yield* WhoMayDecide.approveAs(chat, one, "p1", carol)
        const done = yield* chat.resume(two)
        expect(done.outcome._tag).toBe("Complete")
        expect(Messages.findTool(done.messages, "p1")!.status).toMatchObject({ _tag: "Completed", decision: { by: "carol", votes: [{ by: "bob" }, { by: "carol" }] } })
      }))

    it.effect("below the limit: the strategy's policy, one person of finance", () =>
      Effect.gen(function*() {
        const { chat, paused } = yield* start(200)
        const done = yield* chat.resume(yield* WhoMayDecide.approveAs(chat, paused.messages, "p1", bob))
        expect(done.outcome._tag).toBe("Complete")
      }))
  })

  describe("grants", () => {
    const mail = (id: string, to: string) =>
      MockLanguageModel.toolCalls([{ id, name: "send_email", arguments: { to, subject: "report", body: "…" } }])
    const setup = (script: ReadonlyArray<MockLanguageModel.ScriptedResponse>) =>
      Effect.gen(function*() {
        const ran: Array<string> = []
        const handlers = Grants.toolkit.toLayer({
          send_email: ({ to }) => Effect.sync(() => (ran.push(`mail ${to}`), "sent")),
          read_file: ({ path }) => Effect.sync(() => (ran.push(`read ${path}`), "contents"))
        })
        const chat = yield* Chat.make({ tools: Grants.toolkit }).pipe(Effect.provide(Layer.merge(MockLanguageModel.make(script).layer, handlers)))
        return { chat, ran }
      })

    it.effect("a grant made during a pause: the pending call still waits, the next covered call runs, an uncovered one waits", () =>
      Effect.gen(function*() {
        const { chat, ran } = yield* setup([mail("m1", "ops@example.com"), mail("m2", "ops@example.com"), mail("m3", "eve@evil.com")])
        const first = yield* chat.complete(Messages.fromUser("Send the report."))
        const granted = yield* Grants.emailForAnHour(first.messages, "conv-7")
        const still = yield* chat.resume(granted, { grantContext: { conversation: "conv-7" } })
        expect(still.outcome._tag === "Paused" && still.outcome.reason).toMatchObject({ toolIds: ["m1"] })
        const next = yield* chat.resume(yield* chat.approve(still.messages, "m1"), { grantContext: { conversation: "conv-7" } })
        expect(ran).toEqual(["mail ops@example.com", "mail ops@example.com"])
        expect(next.outcome._tag === "Paused" && next.outcome.reason).toMatchObject({ toolIds: ["m3"] })
        expect(Messages.findTool(next.messages, "m2")?.status).toMatchObject({ _tag: "Completed", decision: { by: "alice", grant: "grant-1" } })
        // Revoked: it settles nothing more, and a second revocation is refused.
        const revoked = Result.getOrThrow(Grants.revoke(next.messages, 1))
        expect(Result.getFailure(Grants.revoke(revoked, 2))).toMatchObject({ _tag: "Some", value: { _tag: "GrantRevoked" } })
      }))

    it.effect("a user's read_* grant covers reports/ but not .key files, nor another user", () =>
      Effect.gen(function*() {
        const read = (id: string, path: string) => MockLanguageModel.toolCalls([{ id, name: "read_file", arguments: { path } }])
        const { chat, ran } = yield* setup([read("r1", "reports/q1.txt"), read("r2", "reports/q1.key")])
        const granted = yield* Grants.readsToday(Messages.fromUser("Read the reports."), "u1", 86_400_000)
        const result = yield* chat.complete(granted, { grantContext: { user: "u1" } })
        expect(ran).toEqual(["read reports/q1.txt"])
        expect(result.outcome._tag === "Paused" && result.outcome.reason).toMatchObject({ toolIds: ["r2"] })
        const { chat: other, ran: otherRan } = yield* setup([read("r1", "reports/q1.txt")])
        const elsewhere = yield* other.complete(granted, { grantContext: { user: "u2" } })
        expect(otherRan).toEqual([])
        expect(elsewhere.outcome._tag).toBe("Paused")
      }))

    it("refuses a predicate with an unknown operator", () => {
      const error = Result.getFailure(Grants.unknownOperator(Messages.fromUser("x"), 0))
      expect(error).toMatchObject({ _tag: "Some", value: { _tag: "InvalidGrant" } })
      expect(error._tag === "Some" && error.value.message).toContain("unknown operator \"regex\"")
    })
  })

  describe("errors", () => {
    it.effect("reply turns errors into text", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make([MockLanguageModel.fail(new ChatError.AuthenticationError({ message: "bad key" }))])
        const chat = yield* Chat.make().pipe(Effect.provide(model.layer))
        expect(yield* Errors.reply(chat, Messages.fromUser("hi"))).toBe("The model refused our key: check OPENAI_API_KEY.")
      }))

    it.effect("completeWithRetries resumes from the error's messages: a tool that ran is not run again", () =>
      Effect.gen(function*() {
        let deletions = 0
        const handlers = HumanInTheLoop.toolkit.toLayer({
          delete_files: ({ paths }) => Effect.sync(() => (deletions++, { deleted: [...paths] }))
        })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "d1", name: "delete_files", arguments: { paths: ["a.log"] } }]),
          MockLanguageModel.fail(new ChatError.ServerError({ message: "overloaded", status: 503 })),
          MockLanguageModel.text("Deleted a.log.")
        ])
        const chat = yield* Chat.make({ tools: HumanInTheLoop.toolkit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
        const paused = yield* chat.complete(Messages.fromUser("Delete a.log"))
        const approved = yield* Effect.fromResult(Messages.approve(paused.messages, "d1"))
        const fiber = yield* Effect.forkChild(Errors.completeWithRetries(chat, approved))
        yield* TestClock.adjust("2 seconds")
        const done = yield* Fiber.join(fiber)
        expect(done.outcome._tag).toBe("Complete")
        expect(deletions).toBe(1)
      }))

    it.effect("carryOn goes on after a handler died", () =>
      Effect.gen(function*() {
        const handlers = HumanInTheLoop.toolkit.toLayer({ delete_files: () => Effect.die("disk on fire") })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "d1", name: "delete_files", arguments: { paths: ["a.log"] } }]),
          MockLanguageModel.text("Sorry, the deletion failed.")
        ])
        const chat = yield* Chat.make({ tools: HumanInTheLoop.toolkit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
        const paused = yield* chat.complete(Messages.fromUser("Delete a.log"))
        const error = yield* chat.resume(yield* Effect.fromResult(Messages.approve(paused.messages, "d1"))).pipe(Effect.flip)
        expect(error._tag).toBe("ToolHandlerDefect")
        const done = yield* Errors.carryOn(chat, error as ChatError.ToolHandlerDefect)
        expect(done.outcome._tag).toBe("Complete")
      }))
  })

  describe("persistence", () => {
    it.effect("signed documents load back; tampered, replayed and moved ones are refused", () =>
      Effect.gen(function*() {
        const messages = Messages.fromUser("hello")
        const stored = yield* PersistenceExtras.save(messages, "conv-1", 2)
        expect(yield* PersistenceExtras.load(stored, "conv-1", 2)).toEqual({ messages, version: 2 })
        const tampered = yield* PersistenceExtras.load(stored.replace("hello", "HELLO"), "conv-1", 2).pipe(Effect.flip)
        expect(tampered._tag).toBe("StateDecodeError")
        const replayed = yield* PersistenceExtras.load(stored, "conv-1", 3).pipe(Effect.flip)
        expect(replayed.message).toContain("replayed")
        const moved = yield* PersistenceExtras.load(stored, "conv-2", 2).pipe(Effect.flip)
        expect(moved.message).toContain("another conversation")
      }).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: { STATE_SECRET: "a test secret of at least 32 bytes" } }))))

    it.effect("checkpoints hold the latest state", () =>
      Effect.gen(function*() {
        const model = MockLanguageModel.make(HumanInTheLoop.offline)
        const chat = yield* Chat.make({ tools: HumanInTheLoop.toolkit }).pipe(
          Effect.provide(Layer.merge(model.layer, HumanInTheLoop.handlers))
        )
        const store = yield* Ref.make("")
        const result = yield* PersistenceExtras.completeDurably(chat, store, Messages.fromUser("Delete the old logs."))
        expect(yield* Effect.fromResult(Messages.fromJson(yield* Ref.get(store)))).toEqual(result.messages)
      }))
  })

  it.effect("an idempotent tool whose worker died mid-run runs again, as attempt 2, once its lease expired", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const crashed: Messages.Messages = [
        Messages.user("Move 50 EUR to savings."),
        {
          role: "assistant",
          parts: [{
            _tag: "ToolCall",
            id: "t1",
            name: "transfer",
            arguments: JSON.stringify({ from: "checking", to: "savings", amount: 50 }),
            status: { _tag: "Running" }
          }]
        }
      ]
      yield* store.save("conv", crashed, { expectedVersion: 0 })
      yield* store.acquire("conv", "the worker that died", "30 seconds")
      const chat = yield* Chat.make({ tools: PersistenceExtras.transfers }).pipe(
        Effect.provide(Layer.merge(MockLanguageModel.make([MockLanguageModel.text("Moved.")]).layer, PersistenceExtras.transferHandlers))
      )
      const resume = Worker.resume(chat, "conv", (stored) => Effect.succeed(stored.messages))
      expect(yield* Effect.flip(resume)).toMatchObject({ _tag: "ConversationBusy" })
      yield* TestClock.adjust("30 seconds")
      const result = yield* resume
      expect(Messages.toolCalls(result.messages)[0]!.status).toEqual({ _tag: "Completed", result: { reference: "bank-t1", attempt: 2 } })
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  it.effect("a conversation store keeps a pause until approvals arrive, then the resumed turn", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make(HumanInTheLoop.offline)
      const chat = yield* Chat.make({ tools: HumanInTheLoop.toolkit }).pipe(
        Effect.provide(Layer.merge(model.layer, HumanInTheLoop.handlers))
      )
      const paused = yield* ConversationStoreSnippet.start(chat, "conv-1", "Delete the old logs.")
      expect(paused.outcome._tag).toBe("Paused")
      expect(yield* ConversationStoreSnippet.waitingIds).toEqual(["conv-1"])
      const done = yield* ConversationStoreSnippet.approveAll(chat, "conv-1")
      expect(done.outcome._tag).toBe("Complete")
      expect(yield* ConversationStoreSnippet.waitingIds).toEqual([])
      expect(yield* ConversationStoreSnippet.isStored("conv-1")).toBe(true)
    }).pipe(Effect.provide(ConversationStore.layerMemory)))

  describe("the README's example, against a fake OpenAI server", () => {
    const answer = (body: { readonly [key: string]: unknown }): FakeOpenAi.Reply => {
      const messages = body["messages"] as ReadonlyArray<{ readonly role: string; readonly content?: unknown }>
      const tool = messages.find((message) => message.role === "tool")
      if (tool === undefined) {
        return { toolCalls: [{ id: "call_1", name: "delete_files", arguments: `{"paths":["a.log","b.log"]}` }] }
      }
      return { text: String(tool.content).includes("rejected") ? "OK, I kept them." : "Deleted a.log and b.log." }
    }

    for (const [key, expected, deleted] of [["y", "Deleted a.log and b.log.", true], ["n", "OK, I kept them.", false]] as const) {
      it.live(`answering '${key}' at the prompt`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeOpenAi.make(answer)
          const run = yield* Effect.promise(() => runSnippet("src/snippets/readme.ts", fake.baseURL, key))
          expect(run.code).toBe(0)
          expect(run.stdout).toContain("Run delete_files")
          expect(run.stdout).toContain(expected)
          expect(run.stdout.includes("deleting a.log, b.log")).toBe(deleted)
          expect(fake.requests).toHaveLength(2)
        }), 60_000)
    }
  })
})

/** Runs a snippet file with the fake's URL and `input` on its stdin (bounded: killed after 50 seconds). */
const runSnippet = (file: string, baseURL: string, input: string) =>
  runTsx([file], { env: { ...process.env, OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: baseURL, NO_COLOR: "1" }, input })
