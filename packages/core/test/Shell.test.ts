/**
 * `Shell`, the kit of shells around `Turn.step`: the starting `Resume`, outcome to error and a
 * handler's defect as the turn's error, as `Chat` uses them (the workflow shell's use is checked
 * in packages/workflow/test/ChatWorkflow.property.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import * as ChatError from "../src/data/ChatError.js"
import * as Shell from "../src/chat/Shell.js"
import * as Turn from "../src/turn/Turn.js"
import { call, conversation, response, T0 } from "./support/fixtures.js"

const messages = conversation(response([call("a", { _tag: "Running" }), call("b", { _tag: "Approved", editedArguments: "{}" })]))

describe("Shell.start", () => {
  it("is the Resume at `now` with the edits the steps refuse and the calls they may run again", () => {
    const seen: Array<unknown> = []
    const steps = {
      checkEdits: (m: typeof messages) => (seen.push(m), [{ id: "b", detail: "no" }]),
      rerunnable: (m: typeof messages) => (seen.push(m), ["a"])
    }
    expect(Shell.start(steps, messages, T0)).toStrictEqual(
      Turn.Event.Resume({ now: T0, invalidEdits: [{ id: "b", detail: "no" }], rerun: ["a"] })
    )
    expect(seen).toEqual([messages, messages])
  })
})

describe("Shell.failureOf", () => {
  it("StepLimit: StepLimitReached with the limit and the messages", () => {
    const error = Shell.failureOf(Turn.Outcome.StepLimit({ maxSteps: 3 }), messages)
    expect(error).toBeInstanceOf(ChatError.StepLimitReached)
    expect(error).toMatchObject({ maxSteps: 3 })
    expect(error.messages).toStrictEqual(messages)
  })

  it("InvalidEdits: InvalidEditedArguments naming the first edit, detailing every one, with the messages", () => {
    const error = Shell.failureOf(
      Turn.Outcome.InvalidEdits({ edits: [{ id: "b", name: "tool_b", detail: "bad" }, { id: "c", name: "tool_c", detail: "worse" }] }),
      messages
    )
    expect(error).toBeInstanceOf(ChatError.InvalidEditedArguments)
    expect(error).toMatchObject({ id: "b", name: "tool_b", detail: "b: bad; c: worse" })
    expect(error.messages).toStrictEqual(messages)
  })

  it("PendingCalls: PendingToolCalls with the ids and the messages", () => {
    const error = Shell.failureOf(Turn.Outcome.PendingCalls({ ids: ["a", "b"] }), messages)
    expect(error).toBeInstanceOf(ChatError.PendingToolCalls)
    expect(error).toMatchObject({ ids: ["a", "b"] })
    expect(error.messages).toStrictEqual(messages)
  })
})

describe("Shell.defectFailure", () => {
  it("is ToolHandlerDefect with the call, its tool, the detail as given and the messages", () => {
    const error = Shell.defectFailure({ id: "a", name: "tool_a", detail: "boom" }, messages)
    expect(error).toBeInstanceOf(ChatError.ToolHandlerDefect)
    expect(error).toMatchObject({ id: "a", name: "tool_a", detail: "boom" })
    expect(error.messages).toStrictEqual(messages)
  })
})
