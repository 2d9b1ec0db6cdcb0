import * as Result from "effect/Result"
import { describe, expect, it } from "@effect/vitest"
import type * as ChatError from "../src/data/ChatError.js"
import * as Messages from "../src/turn/Messages.js"
import type { Message, ToolCallStatus } from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import { call, conversation, deepFreeze, expectOutcome, left, response, right, snapshot, statusOf, step, T0 } from "./support/fixtures.js"

/** A paused conversation: one call of each status. */
const everyStatus = (): Messages.Messages =>
  conversation(
    response([
      call("proposed", { _tag: "Proposed" }),
      call("asking", { _tag: "AwaitingApproval", expiresAt: T0 + 10 }),
      call("scheduled", { _tag: "Scheduled", at: T0 + 20 }),
      call("approved", { _tag: "Approved" }),
      call("running", { _tag: "Running" }),
      call("completed", { _tag: "Completed", result: { ok: true } }),
      call("failed", { _tag: "Failed", error: "boom" }),
      call("rejected", { _tag: "Rejected", by: "user", reason: "no" })
    ])
  )

const paused = (): Messages.Messages =>
  conversation(
    response([call("a", { _tag: "AwaitingApproval" }), call("b", { _tag: "Scheduled", at: T0 + 1000 })])
  )

describe("Messages", () => {
  describe("constructors", () => {
    it("builds messages from text or parts", () => {
      expect(Messages.user("hi")).toStrictEqual({ role: "user", parts: [{ _tag: "Text", text: "hi" }] })
      expect(Messages.system("be brief")).toStrictEqual({ role: "system", parts: [{ _tag: "Text", text: "be brief" }] })
      expect(Messages.assistant("hello")).toStrictEqual({ role: "assistant", parts: [{ _tag: "Text", text: "hello" }] })
      const parts = [Messages.text("a"), Messages.text("b")]
      expect(Messages.user(parts)).toStrictEqual({ role: "user", parts })
      expect(Messages.fromUser("hi")).toStrictEqual([Messages.user("hi")])
      expect(Messages.fromSystem("s")).toStrictEqual([Messages.system("s")])
      expect(Messages.empty).toStrictEqual([])
      expect(Messages.text("t")).toStrictEqual({ _tag: "Text", text: "t" })
    })

    it("builds file parts from base64 or a URL, with a filename only when given", () => {
      expect(Messages.file({ mediaType: "image/png", base64: "AAAA" })).toStrictEqual({
        _tag: "File",
        mediaType: "image/png",
        data: { _tag: "Base64", base64: "AAAA" }
      })
      expect(Messages.file({ mediaType: "application/pdf", url: "https://x/y.pdf", filename: "y.pdf" })).toStrictEqual({
        _tag: "File",
        mediaType: "application/pdf",
        data: { _tag: "Url", url: "https://x/y.pdf" },
        filename: "y.pdf"
      })
    })

    it("builds a tool call as proposed", () => {
      expect(Messages.toolCall({ id: "1", name: "ls", arguments: "{}" })).toStrictEqual({
        _tag: "ToolCall",
        id: "1",
        name: "ls",
        arguments: "{}",
        status: { _tag: "Proposed" }
      })
    })
  })

  describe("queries", () => {
    it("findTool finds a call in any message, data-first and data-last", () => {
      const messages = deepFreeze([
        Messages.user("x"),
        response([call("a", { _tag: "Completed", result: 1 })]),
        response([Messages.text("t"), call("b")])
      ])
      expect(Messages.findTool(messages, "a")?.status).toEqual({ _tag: "Completed", result: 1 })
      expect(Messages.findTool("b")(messages)?.id).toBe("b")
      expect(Messages.findTool(messages, "c")).toBeUndefined()
    })

    it("pendingTools lists the calls without a final answer, in order", () => {
      expect(Messages.pendingTools(everyStatus()).map((c) => c.id)).toEqual([
        "proposed",
        "asking",
        "scheduled",
        "approved",
        "running"
      ])
      expect(Messages.pendingTools(conversation(Messages.assistant("done")))).toEqual([])
    })

    it("lastResponse is the last assistant message", () => {
      const a = response([Messages.text("first")])
      const b = response([Messages.text("second")])
      expect(Messages.lastResponse(deepFreeze([Messages.user("x"), a, b, Messages.user("y")]))).toBe(b)
      expect(Messages.lastResponse(Messages.fromUser("x"))).toBeUndefined()
    })

    it("lastCalls: the calls of the last message when it is a response, none after a user message", () => {
      const r = response([Messages.text("a"), call("1"), call("2", { _tag: "Running" })])
      expect(Messages.lastCalls(deepFreeze(conversation(r))).map((c) => c.id)).toEqual(["1", "2"])
      expect(Messages.lastCalls(deepFreeze([...conversation(r), Messages.user("next")]))).toEqual([])
      expect(Messages.lastCalls(conversation(Messages.assistant("done")))).toEqual([])
      expect(Messages.lastCalls([])).toEqual([])
    })

    it("textOf, toolCallsOf, toolCalls and turnUsage", () => {
      const r = response([Messages.text("a"), call("1"), Messages.text("b")], { inputTokens: 1, outputTokens: 2 })
      expect(Messages.textOf(r)).toBe("ab")
      expect(Messages.toolCallsOf(r).map((c) => c.id)).toEqual(["1"])
      const messages = deepFreeze([
        Messages.user("x"),
        { ...Messages.assistant("old"), usage: { inputTokens: 100, outputTokens: 100 } },
        Messages.user("y"),
        r,
        response([call("2")], { inputTokens: 3, outputTokens: 4, cachedInputTokens: 5 })
      ])
      expect(Messages.toolCalls(messages).map((c) => c.id)).toEqual(["1", "2"])
      expect(Messages.turnUsage(messages)).toEqual({ inputTokens: 4, outputTokens: 6, cachedInputTokens: 5 })
    })

    it("parsedArguments parses the effective arguments, or gives the raw text", () => {
      expect(Messages.parsedArguments(call("a", { _tag: "Proposed" }, { arguments: "{\"n\":1}" }))).toEqual({ n: 1 })
      expect(Messages.parsedArguments(call("a", { _tag: "Approved", editedArguments: "[2]" }))).toEqual([2])
      expect(Messages.parsedArguments(call("a", { _tag: "Proposed" }, { arguments: "{oops" }))).toBe("{oops")
    })
  })

  describe("approve", () => {
    it("approves a call awaiting approval, as asked", () => {
      const messages = paused()
      const before = snapshot(messages)
      const next = right(Messages.approve(messages, "a"))
      expect(statusOf(next, "a")).toStrictEqual({ _tag: "Approved" })
      expect(statusOf(next, "b")).toEqual({ _tag: "Scheduled", at: T0 + 1000 })
      expect(messages).toStrictEqual(before)
    })

    it("approves with edited arguments given as a JSON value, or as JSON text with approveJson", () => {
      const value = right(Messages.approve(paused(), "a", { path: "/tmp" }))
      expect(statusOf(value, "a")).toEqual({ _tag: "Approved", editedArguments: "{\"path\":\"/tmp\"}" })
      const textual = right(Messages.approveJson(paused(), "a", "{\"path\": \"/var\"}"))
      expect(statusOf(textual, "a")).toEqual({ _tag: "Approved", editedArguments: "{\"path\": \"/var\"}" })
      expect(Messages.effectiveArguments(Messages.findTool(textual, "a")!)).toBe("{\"path\": \"/var\"}")
    })

    it("never reads a string edit as JSON text: it is a JSON string (which no object parameters accept)", () => {
      const text = right(Messages.approve(paused(), "a", "{\"path\": \"/var\"}"))
      expect(statusOf(text, "a")).toEqual({ _tag: "Approved", editedArguments: JSON.stringify("{\"path\": \"/var\"}") })
    })

    it("refuses edits that are not JSON data, and JSON text that is not JSON, with InvalidEditedArguments", () => {
      const cyclic: { self?: unknown } = {}
      cyclic.self = cyclic
      for (const edit of [{ n: 10n }, cyclic, { when: new Date(0) }, { n: Number.NaN }, JSON.parse("{\"__proto__\":{\"admin\":true}}")]) {
        const error = left(Messages.approve(paused(), "a", edit))
        expect(error).toMatchObject({ _tag: "InvalidEditedArguments", id: "a", name: "tool_a" })
      }
      expect(left(Messages.approveJson(paused(), "a", "{not json"))).toMatchObject({ _tag: "InvalidEditedArguments", id: "a" })
      // An unknown id is still UnknownToolCall, whatever the edit.
      expect(left(Messages.approve(paused(), "nope", { n: 10n }))._tag).toBe("UnknownToolCall")
    })

    it("works data-last", () => {
      const next = right(Messages.approve("a", { n: 1 })(paused()))
      expect(statusOf(next, "a")).toEqual({ _tag: "Approved", editedArguments: "{\"n\":1}" })
      expect(statusOf(right(Messages.approve("a")(paused())), "a")).toStrictEqual({ _tag: "Approved" })
    })

    it("may approve a scheduled call early (it runs on the next resume)", () => {
      const next = right(Messages.approve(paused(), "b"))
      // The scheduled time is kept, so that a refused edit can put the call back as it was.
      expect(statusOf(next, "b")).toStrictEqual({ _tag: "Approved", scheduledAt: T0 + 1000 })
      const [, outcome] = step(next, Turn.Event.Resume({ now: T0 }))
      expect(outcome._tag).toBe("RunTools")
    })

    it("fails with UnknownToolCall for an unknown id", () => {
      const error = left(Messages.approve(paused(), "nope"))
      expect(error._tag).toBe("UnknownToolCall")
      expect(error).toMatchObject({ id: "nope" })
    })

    it("fails with ToolCallNotAwaitingDecision for a proposed call", () => {
      const error = left(Messages.approve(everyStatus(), "proposed"))
      expect(error._tag).toBe("ToolCallNotAwaitingDecision")
      expect(error).toMatchObject({ id: "proposed", status: "Proposed" })
    })

    it("fails with ToolCallAlreadyResolved for decided or finished calls", () => {
      for (const id of ["approved", "running", "completed", "failed", "rejected"]) {
        const error = left(Messages.approve(everyStatus(), id))
        expect(error._tag).toBe("ToolCallAlreadyResolved")
        expect(error).toMatchObject({ id })
        expect(left(Messages.reject(everyStatus(), id))._tag).toBe("ToolCallAlreadyResolved")
      }
    })

    it("never makes a completed call run again", () => {
      const messages = conversation(response([call("a", { _tag: "Completed", result: 1 })]))
      expect(Messages.approve(messages, "a")._tag).toBe("Failure")
      const [next, outcome] = step(messages, Turn.Event.Resume({ now: T0 }))
      expect(outcome).toEqual(Turn.Outcome.CallModel({ step: 2 }))
      expect(statusOf(next, "a")).toEqual({ _tag: "Completed", result: 1 })
    })
  })

  describe("reject", () => {
    it("rejects by the user, with or without a reason", () => {
      const withReason = right(Messages.reject(paused(), "a", "too risky"))
      expect(statusOf(withReason, "a")).toStrictEqual({ _tag: "Rejected", by: "user", reason: "too risky" })
      const without = right(Messages.reject("a")(paused()))
      expect(statusOf(without, "a")).toStrictEqual({ _tag: "Rejected", by: "user" })
    })

    it("may reject a scheduled call", () => {
      const next = right(Messages.reject(paused(), "b", "not needed"))
      expect(statusOf(next, "b")).toEqual({ _tag: "Rejected", by: "user", reason: "not needed" })
    })

    it("fails with typed errors like approve", () => {
      expect(left(Messages.reject(paused(), "zz"))._tag).toBe("UnknownToolCall")
      expect(left(Messages.reject(everyStatus(), "proposed"))._tag).toBe("ToolCallNotAwaitingDecision")
    })
  })

  describe("append", () => {
    it("appends a message or messages when nothing is pending", () => {
      const messages = conversation(Messages.assistant("done"))
      const one = right(Messages.append(messages, Messages.user("next")))
      expect(one).toStrictEqual([...snapshot(messages), Messages.user("next")])
      const many = right(Messages.append([Messages.user("a"), Messages.assistant("b")])(messages))
      expect(many).toHaveLength(4)
      expect(right(Messages.append(Messages.user("c"))(messages))).toHaveLength(3)
    })

    it("refuses a user message while calls are pending, naming them", () => {
      const error = left(Messages.append(everyStatus(), Messages.user("next"))) as ChatError.PendingToolCalls
      expect(error._tag).toBe("PendingToolCalls")
      expect(error.ids).toEqual(["proposed", "asking", "scheduled", "approved", "running"])
      expect((left(Messages.append(Messages.user("next"))(paused())) as ChatError.PendingToolCalls).ids).toEqual(["a", "b"])
    })

    it("with supersede, cancels every pending call (by a newer user message) with the reason", () => {
      const messages = everyStatus()
      const next = right(Messages.append(messages, Messages.user("Forget it."), { supersede: "The user moved on." }))
      expect(next.at(-1)).toStrictEqual(Messages.user("Forget it."))
      for (const id of ["proposed", "asking", "scheduled", "approved"]) {
        expect(statusOf(next, id)).toStrictEqual({ _tag: "Cancelled", by: "user-message", reason: "The user moved on." })
      }
      // A running call may have run: it is recorded as failed, not rejected.
      const running = statusOf(next, "running")
      expect(running._tag).toBe("Failed")
      expect(String((running as { error: unknown }).error)).toContain("The user moved on.")
      // Resolved calls keep their answers.
      expect(statusOf(next, "completed")).toEqual({ _tag: "Completed", result: { ok: true } })
      expect(statusOf(next, "rejected")).toEqual({ _tag: "Rejected", by: "user", reason: "no" })
      expect(Messages.pendingTools(next)).toEqual([])
      expect(step(next, Turn.Event.Resume({ now: T0 }))[1]).toEqual(Turn.Outcome.CallModel({ step: 1 }))

      const dataLast = right(Messages.append(Messages.user("x"), { supersede: "r" })(paused()))
      expect(statusOf(dataLast, "a")).toEqual({ _tag: "Cancelled", by: "user-message", reason: "r" })
    })

    it("keeps the edited arguments of a superseded running call (it may have run with them)", () => {
      const edited = "{\"safe\":true}"
      const messages = conversation(response([call("a", { _tag: "Running", editedArguments: edited })]))
      const next = right(Messages.append(messages, Messages.user("stop"), { supersede: "stopped" }))
      expect(statusOf(next, "a")).toMatchObject({ _tag: "Failed", editedArguments: edited })
      expect(Messages.projectToolCall(Messages.findTool(next, "a")!).arguments).toBe(edited)
    })
  })

  describe("projectToolCall", () => {
    const project = (status: ToolCallStatus, args = "{\"q\":1}") =>
      Messages.projectToolCall(call("id", status, { name: "search", arguments: args }))

    it("gives no result while the call is unresolved", () => {
      const unresolved: ReadonlyArray<ToolCallStatus> = [
        { _tag: "Proposed" },
        { _tag: "AwaitingApproval" },
        { _tag: "Scheduled", at: 1 },
        { _tag: "Approved" },
        { _tag: "Running" }
      ]
      for (const status of unresolved) {
        expect(project(status)).toStrictEqual({ id: "id", name: "search", arguments: "{\"q\":1}", result: undefined })
      }
    })

    it("shows the edited arguments instead of the model's", () => {
      expect(project({ _tag: "Approved", editedArguments: "{\"q\":2}" }).arguments).toBe("{\"q\":2}")
      expect(project({ _tag: "Running", editedArguments: "{\"q\":2}" }).arguments).toBe("{\"q\":2}")
      expect(project({ _tag: "Completed", result: 1, editedArguments: "{\"q\":2}" }).arguments).toBe("{\"q\":2}")
      expect(project({ _tag: "Failed", error: "e", editedArguments: "{\"q\":2}" }).arguments).toBe("{\"q\":2}")
    })

    it("shows a completed call's result", () => {
      expect(project({ _tag: "Completed", result: { hits: 3 } }).result).toStrictEqual({
        isError: false,
        value: { hits: 3 },
        text: "{\"hits\":3}"
      })
      expect(project({ _tag: "Completed", result: "plain" }).result).toStrictEqual({
        isError: false,
        value: "plain",
        text: "plain"
      })
    })

    it("shows a failure as an error", () => {
      expect(project({ _tag: "Failed", error: "timeout" }).result).toStrictEqual({
        isError: true,
        value: { error: "timeout" },
        text: "{\"error\":\"timeout\"}"
      })
    })

    it("shows a rejection as an error carrying the reason", () => {
      const byUser = project({ _tag: "Rejected", by: "user", reason: "too expensive" }).result!
      expect(byUser.isError).toBe(true)
      expect(byUser.value).toEqual({ error: "The user rejected this tool call; it did not run. Reason: too expensive" })
      const byPolicy = project({ _tag: "Rejected", by: "policy" }).result!
      expect(byPolicy.value).toEqual({ error: "This tool call was rejected by policy; it did not run." })
      expect(byPolicy.text).toBe(JSON.stringify(byPolicy.value))
    })
  })

  describe("versioned encoding", () => {
    const rich = (): Messages.Messages =>
      deepFreeze([
        Messages.system("Be careful."),
        Messages.user([Messages.text("Look at this"), Messages.file({ mediaType: "image/png", base64: "AAAA", filename: "a.png" })]),
        {
          role: "assistant",
          parts: [
            { _tag: "Reasoning", text: "hmm", signature: "sig", providerMetadata: { anthropic: { x: 1 } } },
            Messages.text("Let me check."),
            call("a", { _tag: "Completed", result: { rows: [1, "two", null] }, editedArguments: "{}" }),
            call("b", { _tag: "Rejected", by: "policy", reason: "r" }),
            call("c", { _tag: "AwaitingApproval", expiresAt: T0 }),
            call("d", { _tag: "Scheduled", at: T0 + 5 }),
            call("e", { _tag: "Failed", error: { code: 1 } }),
            call("f", { _tag: "Running" }),
            call("g", { _tag: "Approved", editedArguments: "[1]" }),
            call("h")
          ],
          usage: { inputTokens: 1, outputTokens: 2, reasoningTokens: 3, cachedInputTokens: 4 },
          finishReason: "tool-calls",
          providerMetadata: { openai: { responseId: "r1" } }
        }
      ])

    const document = (messages: ReadonlyArray<unknown>, extra: object = {}) => ({
      format: "chat-ts/messages",
      version: 1,
      messages,
      ...extra
    })

    const tamperedCall = (status: unknown) => ({
      role: "assistant",
      parts: [{ _tag: "ToolCall", id: "a", name: "n", arguments: "{}", status }]
    })

    const decodeError = (input: unknown): string => {
      const error = left(Messages.decode(input))
      expect(error._tag).toBe("StateDecodeError")
      return error.detail
    }

    it("round-trips through JSON unchanged", () => {
      const messages = rich()
      const json = Result.getOrThrow(Messages.toJson(messages))
      expect(JSON.parse(json)).toMatchObject({ format: "chat-ts/messages", version: Messages.currentVersion })
      expect(right(Messages.fromJson(json))).toStrictEqual(snapshot(messages))
      expect(right(Messages.decode(Result.getOrThrow(Messages.encode(messages))))).toStrictEqual(snapshot(messages))
    })

    it("rejects text that is not JSON", () => {
      const error = left(Messages.fromJson("{\"format\": "))
      expect(error._tag).toBe("StateDecodeError")
      expect(error.detail).toMatch(/not JSON/)
    })

    it("rejects a document of the wrong shape", () => {
      decodeError(null)
      decodeError([])
      decodeError({ format: "chat-ts/messages", version: 1 })
      decodeError({ format: "other", version: 1, messages: [] })
      decodeError(document([{ role: "robot", parts: [] }]))
      decodeError(document([{ role: "user", parts: [{ _tag: "Text" }] }]))
      decodeError(document([{ role: "user", parts: [{ _tag: "Text", text: "x" }], usage: { inputTokens: "1" } }]))
      decodeError(document([tamperedCall({ _tag: "Scheduled", at: "tomorrow" })]))
      decodeError(document([{ role: "assistant", parts: [{ _tag: "ToolCall", id: "", name: "n", arguments: "{}", status: { _tag: "Proposed" } }] }]))
    })

    it("rejects a tool call outside an assistant message", () => {
      const user = { role: "user", parts: [{ _tag: "ToolCall", id: "a", name: "n", arguments: "{}", status: { _tag: "Completed", result: 1 } }] }
      expect(decodeError(document([user]))).toMatch(/only assistant messages/)
    })

    it("rejects duplicate tool call ids", () => {
      const twice = document([
        tamperedCall({ _tag: "Completed", result: 1 }),
        Messages.user("again"),
        tamperedCall({ _tag: "Proposed" })
      ])
      expect(decodeError(twice)).toMatch(/more than once/)
    })

    it("rejects an unknown status tag", () => {
      decodeError(document([tamperedCall({ _tag: "Executed" })]))
      decodeError(document([tamperedCall({ _tag: "Rejected", by: "admin" })]))
    })

    it("rejects extra fields anywhere", () => {
      decodeError(document([], { extra: true }))
      decodeError(document([{ role: "user", parts: [], admin: true }]))
      decodeError(document([{ role: "user", parts: [{ _tag: "Text", text: "x", bold: true }] }]))
      decodeError(document([tamperedCall({ _tag: "Proposed", approvedBy: "me" })]))
    })

    it("rejects an unknown version", () => {
      for (const version of [0, 2, "1", null]) {
        expect(decodeError(document([], { version }))).toMatch(/unsupported version/)
      }
      expect(Messages.fromJson(JSON.stringify(document([], { version: 2 })))._tag).toBe("Failure")
    })

    it("accepts the stored document it writes, and its statuses resume correctly", () => {
      const restored = right(Messages.fromJson(Result.getOrThrow(Messages.toJson(paused()))))
      const approved = right(Messages.approve(restored, "a"))
      const [, outcome] = step(approved, Turn.Event.Resume({ now: T0 }))
      expect(expectOutcome(outcome, "RunTools").calls.map((c) => c.id)).toEqual(["a"])
    })
  })

  it("never mutates its inputs", () => {
    const messages = everyStatus()
    const before = snapshot(messages)
    const message: Message = deepFreeze(Messages.user("x"))
    Messages.append(messages, message, { supersede: "r" })
    Messages.approve(messages, "asking", { x: 1 })
    Messages.reject(messages, "scheduled", "r")
    Messages.updateTool(messages, "completed", (c) => ({ ...c, name: "other" }))
    expect(messages).toStrictEqual(before)
  })
})

describe("a decision's audit record", () => {
  const decision = { by: "alice", at: T0 }

  it("is carried from Approved through Running to Completed and Failed, and never reaches the model", () => {
    const approved = conversation(response([
      call("a", { _tag: "Approved", editedArguments: "{\"x\":1}", decision }),
      call("b", { _tag: "Approved", decision })
    ]))
    const [running] = step(approved, Turn.Event.Resume({ now: T0 }))
    expect(statusOf(running, "a")).toEqual({ _tag: "Running", editedArguments: "{\"x\":1}", decision })
    expect(statusOf(running, "b")).toEqual({ _tag: "Running", decision })
    const [succeeded] = step(running, Turn.Event.ToolSucceeded({ id: "a", result: 1 }))
    const [failed] = step(succeeded, Turn.Event.ToolFailed({ id: "b", error: "no" }))
    expect(statusOf(failed, "a")).toEqual({ _tag: "Completed", result: 1, editedArguments: "{\"x\":1}", decision })
    expect(statusOf(failed, "b")).toEqual({ _tag: "Failed", error: "no", decision })
    expect(JSON.stringify(Messages.toolCalls(failed).map(Messages.projectToolCall))).not.toContain("alice")
    expect(right(Messages.fromJson(right(Messages.toJson(failed))))).toEqual(failed)
  })

  it("survives supersede: a running call recorded as failed and an approved call cancelled keep it", () => {
    const decided = conversation(response([
      call("running", { _tag: "Running", editedArguments: "{\"x\":1}", decision }),
      call("approved", { _tag: "Approved", decision }),
      call("asking", { _tag: "AwaitingApproval" })
    ]))
    const next = right(Messages.append(decided, Messages.user("Never mind."), { supersede: "moved on" }))
    expect(statusOf(next, "running")).toEqual({
      _tag: "Failed",
      error: "Superseded while running; it may or may not have completed. moved on",
      editedArguments: "{\"x\":1}",
      decision
    })
    expect(statusOf(next, "approved")).toEqual({ _tag: "Cancelled", by: "user-message", reason: "moved on", decision })
    expect(statusOf(next, "asking")).toEqual({ _tag: "Cancelled", by: "user-message", reason: "moved on" })
  })

  it("survives an expiry: approved in time but resumed after the deadline, or with a deadline that is no time", () => {
    const late = conversation(response([
      call("late", { _tag: "Approved", expiresAt: T0, decision }),
      call("broken", { _tag: "Approved", expiresAt: Number.NaN, editedArguments: "{}", decision })
    ]))
    const [next] = step(late, Turn.Event.Resume({ now: T0 + 1 }))
    expect(statusOf(next, "late")).toStrictEqual({ _tag: "Expired", expiresAt: T0, approvedLate: true, decision })
    expect(statusOf(next, "broken")).toStrictEqual({ _tag: "Expired", approvedLate: true, decision })
    expect(JSON.stringify(Messages.toolCalls(next).map(Messages.projectToolCall))).not.toContain("alice")
  })

  it("survives a crash: a call left running is recorded as failed (or run again) with it", () => {
    const crashed = conversation(response([
      call("lost", { _tag: "Running", decision }),
      call("again", { _tag: "Running", attempt: 1, decision })
    ]))
    const [next] = step(crashed, Turn.Event.Resume({ now: T0, rerun: ["again"] }))
    expect(statusOf(next, "lost")).toMatchObject({ _tag: "Failed", decision })
    expect(statusOf(next, "again")).toEqual({ _tag: "Running", attempt: 2, decision })
  })

  it("is dropped only when the approval is undone: a refused edit puts the call back to wait for a new decision", () => {
    const edited = conversation(response([call("a", { _tag: "Approved", editedArguments: "{}", expiresAt: T0 + 10, decision })]))
    const [next] = step(edited, Turn.Event.Resume({ now: T0, invalidEdits: [{ id: "a", detail: "bad" }] }))
    expect(statusOf(next, "a")).toEqual({ _tag: "AwaitingApproval", expiresAt: T0 + 10 })
  })

  it("is optional: a document stored without it decodes unchanged, a malformed one is refused", () => {
    const old = JSON.stringify({
      format: "chat-ts/messages",
      version: 1,
      messages: [{ role: "assistant", parts: [{ _tag: "ToolCall", id: "a", name: "t", arguments: "{}", status: { _tag: "Rejected", by: "user" } }] }]
    })
    expect(statusOf(right(Messages.fromJson(old)), "a")).toEqual({ _tag: "Rejected", by: "user" })
    const forged = old.replace(`"by":"user"}`, `"by":"user","decision":{"by":"eve","at":"yesterday"}}`)
    expect(left(Messages.fromJson(forged))._tag).toBe("StateDecodeError")
  })
})
