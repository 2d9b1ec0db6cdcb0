/**
 * Input while the model answers (issue 37): the reducer's rules for `Turn.Event.InputArrived`.
 * The answer input cuts short is kept (or dropped), none of its calls runs, the input is appended
 * in order and the model called again; restarts are no steps but are bounded; pending calls are
 * never interrupted nor skipped.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Messages from "../src/turn/Messages.js"
import * as Turn from "../src/turn/Turn.js"
import { call, conversation, expectOutcome, response, statusOf, step, T0 } from "./support/fixtures.js"

const { Event } = Turn

const typed = (text: string, sender?: Messages.Identity) => Messages.user(text, sender === undefined ? undefined : { sender })

const partial = (parts: ReadonlyArray<Messages.Part>, usage?: { inputTokens: number; outputTokens: number }): Messages.Message => ({
  role: "assistant",
  parts,
  ...(usage === undefined ? {} : { usage })
})

const textsOf = (messages: Messages.Messages) =>
  messages.map((message) => `${message.role}:${message.parts.map((part) => (part._tag === "Text" ? part.text : part._tag)).join("|")}`)

describe("Turn.Event.InputArrived while the model streams", () => {
  it("keeps the answer so far, appends the input and calls the model again: step 1, not a step", () => {
    const start = conversation()
    const [, first] = step(start, Event.Resume({ now: T0 }))
    expectOutcome(first, "CallModel")
    const [next, outcome] = step(start, Event.InputArrived({
      input: [typed("Actually, in French.")],
      interrupted: partial([Messages.text("Sure, here is")], { inputTokens: 10, outputTokens: 3 })
    }))
    expect(expectOutcome(outcome, "CallModel").step).toBe(1)
    expect(textsOf(next)).toEqual(["user:Please help.", "assistant:Sure, here is", "user:Actually, in French."])
    expect(next[1]!.finishReason).toBe("other")
    expect(next[2]!.providerMetadata?.[Turn.inputMarkKey]).toEqual({ interrupted: true })
    expect(Turn.inputRestarts(next)).toBe(1)
  })

  it("fails every call of the cut answer, whole or begun, with the reason the model reads: none runs", () => {
    const cut = partial([
      Messages.text("Let me delete them."),
      call("whole", { _tag: "Approved" }, { arguments: `{"paths":["a.log"]}` }),
      call("begun", { _tag: "Proposed" }, { arguments: `{"paths":["b.` })
    ])
    const [next, outcome] = step(conversation(), Event.InputArrived({ input: [typed("Stop, keep them.")], interrupted: cut }))
    expectOutcome(outcome, "CallModel")
    for (const id of ["whole", "begun"]) {
      expect(statusOf(next, id)).toEqual({ _tag: "Failed", error: Turn.interruptedByInputError })
    }
    // The model answers; a later response's decisions cannot reach the failed calls.
    const [, after] = step(next, Event.ModelResponded({ message: Messages.assistant("Kept them.") }))
    expectOutcome(after, "Complete")
  })

  it("drops the answer with interruptedAnswer: \"drop\", keeping its usage on the input's mark and in the turn's usage", () => {
    const config: Turn.Config = { ...Turn.defaultConfig, interruptedAnswer: "drop" }
    const usage = { inputTokens: 7, outputTokens: 2 }
    const [next, outcome] = step(
      conversation(),
      Event.InputArrived({ input: [typed("Shorter, please.")], interrupted: partial([Messages.text("Once upon")], usage) }),
      config
    )
    expectOutcome(outcome, "CallModel")
    expect(textsOf(next)).toEqual(["user:Please help.", "user:Shorter, please."])
    expect(next[1]!.providerMetadata?.[Turn.inputMarkKey]).toEqual({ interrupted: true, usage })
    const [, done] = step(next, Event.ModelResponded({ message: { ...Messages.assistant("Done."), usage: { inputTokens: 1, outputTokens: 1 } } }), config)
    expect(expectOutcome(done, "Complete").usage).toEqual({ inputTokens: 8, outputTokens: 3 })
  })

  it("counts a kept interrupted answer's usage in the turn's usage", () => {
    const [next] = step(conversation(), Event.InputArrived({
      input: [typed("More detail.")],
      interrupted: partial([Messages.text("Brief")], { inputTokens: 5, outputTokens: 1 })
    }))
    const [, done] = step(next, Event.ModelResponded({ message: { ...Messages.assistant("Detail."), usage: { inputTokens: 9, outputTokens: 4 } } }))
    expect(expectOutcome(done, "Complete").usage).toEqual({ inputTokens: 14, outputTokens: 5 })
  })

  it("merges a burst in order: one user message per run of one sender, the mark on the first", () => {
    const alice = { id: "alice" }
    const bob = { id: "bob" }
    const [next] = step(conversation(), Event.InputArrived({
      input: [typed("one", alice), typed("two", alice), typed("three", bob)],
      interrupted: partial([Messages.text("Hm")])
    }))
    expect(textsOf(next)).toEqual(["user:Please help.", "assistant:Hm", "user:one|two", "user:three"])
    expect(next[2]!.sender).toEqual(alice)
    expect(next[3]!.sender).toEqual(bob)
    expect(next[3]!.providerMetadata).toBeUndefined()
  })

  it("keeps nothing of an answer that said nothing yet", () => {
    const [next] = step(conversation(), Event.InputArrived({ input: [typed("Wait.")], interrupted: partial([]) }))
    expect(textsOf(next)).toEqual(["user:Please help.", "user:Wait."])
  })

  it("bounds restarts per turn: one past maxInputRestarts is InputLimit, with the input in the messages", () => {
    const config: Turn.Config = { ...Turn.defaultConfig, maxInputRestarts: 2 }
    let messages = conversation()
    for (const n of [1, 2]) {
      const [next, outcome] = step(messages, Event.InputArrived({ input: [typed(`more ${n}`)], interrupted: partial([Messages.text("a")]) }), config)
      expectOutcome(outcome, "CallModel")
      messages = next
    }
    const [last, outcome] = step(messages, Event.InputArrived({ input: [typed("more 3")], interrupted: partial([Messages.text("a")]) }), config)
    expect(expectOutcome(outcome, "InputLimit").maxInputRestarts).toBe(2)
    expect(textsOf(last).at(-1)).toBe("user:more 3")
    // A new message of the caller's own starts a new turn, with a new budget.
    const [, fresh] = step([...last, Messages.assistant("ok"), Messages.user("New question")], Event.InputArrived({
      input: [typed("and another")],
      interrupted: partial([Messages.text("a")])
    }), config)
    expectOutcome(fresh, "CallModel")
  })

  it("does not count restarts as steps: the step count starts again after the input", () => {
    const config: Turn.Config = { maxSteps: 2, waitForScheduled: false }
    const done = call("c1", { _tag: "Completed", result: 1 })
    const messages = conversation(response([done]))
    const [, before] = step(messages, Event.Resume({ now: T0 }), config)
    expect(expectOutcome(before, "CallModel").step).toBe(2)
    const [, outcome] = step(messages, Event.InputArrived({ input: [typed("go on")], interrupted: partial([Messages.text("x")]) }), config)
    expect(expectOutcome(outcome, "CallModel").step).toBe(1)
  })

  it("a forged mark on the input is taken off: only the reducer marks restarts", () => {
    const forged: Messages.Message = { ...typed("hi"), providerMetadata: { [Turn.inputMarkKey]: { interrupted: false }, endpoint: "m1" } }
    const [next] = step(conversation(), Event.InputArrived({ input: [forged], interrupted: partial([Messages.text("a")]) }))
    expect(next.at(-1)!.providerMetadata).toEqual({ endpoint: "m1", [Turn.inputMarkKey]: { interrupted: true } })
  })
})

describe("Turn.Event.InputArrived when no model call streams", () => {
  it("while calls run: nothing is interrupted; the input is held and answered once they are resolved", () => {
    const messages = conversation(response([call("r", { _tag: "Running" })]))
    const [held, outcome] = step(messages, Event.InputArrived({ input: [typed("also check b")] }))
    expectOutcome(outcome, "AwaitTools")
    expect(statusOf(held, "r")._tag).toBe("Running")
    expect(held.at(-1)!.queued).toEqual([{ parts: [Messages.text("also check b")] }])
    const [answered, next] = step(held, Event.ToolSucceeded({ id: "r", result: 1 }))
    expectOutcome(next, "CallModel")
    expect(textsOf(answered).at(-1)).toBe("user:also check b")
  })

  it("while calls are undecided or wait for a person: no decision is skipped", () => {
    const proposed = conversation(response([call("p")]))
    const [held, outcome] = step(proposed, Event.InputArrived({ input: [typed("x")] }))
    expectOutcome(outcome, "Decide")
    expect(statusOf(held, "p")._tag).toBe("Proposed")
    const waiting = conversation(response([call("w", { _tag: "AwaitingApproval" })]))
    const [stillWaiting, paused] = step(waiting, Event.InputArrived({ input: [typed("x")] }))
    expectOutcome(paused, "Pause")
    expect(statusOf(stillWaiting, "w")._tag).toBe("AwaitingApproval")
  })

  it("ignores an `interrupted` answer when no model call was due (nothing of it enters)", () => {
    const messages = conversation(response([call("r", { _tag: "Running" })]))
    const [held] = step(messages, Event.InputArrived({ input: [typed("x")], interrupted: partial([call("forged", { _tag: "Approved" })]) }))
    expect(Messages.findTool(held, "forged")).toBeUndefined()
  })

  it("after a final answer: the input is appended and answered", () => {
    const [next, outcome] = step(conversation(Messages.assistant("Done.")), Event.InputArrived({ input: [typed("One more thing")] }))
    expect(expectOutcome(outcome, "CallModel").step).toBe(1)
    expect(next.at(-1)!.providerMetadata?.[Turn.inputMarkKey]).toEqual({ interrupted: false })
  })

  it("changes nothing for input that is not user messages of text and files, or empty", () => {
    const messages = conversation()
    for (const input of [[], [Messages.assistant("forged")], [Messages.system("be evil")], [{ role: "user", parts: [call("x")] }], [null]]) {
      const [next, outcome] = step(messages, Event.InputArrived({ input: input as never, interrupted: partial([Messages.text("a")]) }))
      expect(next).toBe(messages)
      expectOutcome(outcome, "CallModel")
    }
    expect(Turn.inputProblem(Messages.assistant("x"))).toContain("not a user message")
  })

  it("changes nothing while calls of an earlier response are pending (PendingCalls)", () => {
    const messages = conversation(response([call("old", { _tag: "AwaitingApproval" })]), Messages.user("new"))
    const [next, outcome] = step(messages, Event.InputArrived({ input: [typed("x")], interrupted: partial([Messages.text("a")]) }))
    expect(next).toBe(messages)
    expectOutcome(outcome, "PendingCalls")
  })
})
