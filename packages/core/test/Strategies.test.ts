/**
 * The rules that decide a proposed call before the reducer sees it (`turn/Strategies.ts`), and the
 * two rules a shell applies to what it puts into events (`turn/Stepping.ts`: unique call ids,
 * which calls left running may run again), as pure functions. `Chat` runs them (Chat.hostile,
 * Chat.policy, Chat.grants and Worker tests drive them end to end).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Action from "../src/turn/Action.js"
import * as Messages from "../src/turn/Messages.js"
import * as Stepping from "../src/turn/Stepping.js"
import * as Strategies from "../src/turn/Strategies.js"
import * as Turn from "../src/turn/Turn.js"

const call = (status: Messages.ToolCallStatus, id = "c1", name = "send"): Messages.ToolCallPart =>
  ({ _tag: "ToolCall", id, name, arguments: "{}", status }) as Messages.ToolCallPart
const toolPolicy = { quorum: 2 } as Messages.DecisionPolicy
const named = { quorum: 3 } as Messages.DecisionPolicy

describe("Strategies: a proposed call's decision", () => {
  it("an unknown tool or arguments that do not decode: Invalid, with a message for the model; no strategy: Execute", () => {
    expect(Strategies.unknownTool(call({ _tag: "Proposed" }), "a, b")).toStrictEqual(
      Turn.Decision.Invalid({ message: "There is no tool named 'send'. Available tools: a, b." })
    )
    expect(Strategies.invalidArguments("n: expected a number")).toStrictEqual(Turn.Decision.Invalid({ message: "n: expected a number" }))
    expect(Strategies.withoutStrategy()).toStrictEqual(Turn.Decision.Execute())
  })

  it("a strategy that failed: the call awaits approval under the tool's policy, and says why", () => {
    expect(Strategies.ofStrategy(Result.fail("boom"), 0, toolPolicy)).toStrictEqual({
      decision: Turn.Decision.RequireApproval({ policy: toolPolicy }),
      refused: "it failed"
    })
    expect(Strategies.ofStrategy(Result.fail("boom"), 0, undefined).decision).toStrictEqual(Turn.Decision.RequireApproval({}))
  })

  it("a value that is not a valid Action: approval, under the policy the value named, else the tool's", () => {
    const notAction = Strategies.ofStrategy(Result.succeed(42), 0, toolPolicy)
    expect(notAction.decision).toStrictEqual(Turn.Decision.RequireApproval({ policy: toolPolicy }))
    expect(notAction.refused).toContain("not an Action")
    const badTime = Strategies.ofStrategy(Result.succeed(Action.Defer({ after: -5, policy: named })), 0, toolPolicy)
    expect(badTime.decision).toStrictEqual(Turn.Decision.RequireApproval({ policy: named }))
    expect(badTime.refused).toContain("not a valid Action")
  })

  it("a valid Action: its decision, times resolved against now, the tool's policy when it names none", () => {
    expect(Strategies.ofStrategy(Result.succeed(Action.Execute()), 0, toolPolicy)).toStrictEqual({ decision: Turn.Decision.Execute() })
    expect(Strategies.ofStrategy(Result.succeed(Action.Defer({ after: 1000 })), 5, toolPolicy)).toStrictEqual({
      decision: Turn.Decision.Defer({ at: 1005, policy: toolPolicy })
    })
    expect(Strategies.ofStrategy(Result.succeed(Action.Reject({ reason: "no" })), 0, undefined)).toStrictEqual({
      decision: Turn.Decision.Reject({ reason: "no" })
    })
  })

  it("a Granted decision whose grant cannot settle the call is kept, with why (the reducer makes it wait)", () => {
    const granted = Turn.Decision.Granted({ grant: "g1" })
    expect(Strategies.grantRefusal(Turn.Decision.Execute(), call({ _tag: "Proposed" }), 0, [], undefined)).toBeUndefined()
    expect(Strategies.grantRefusal(granted, call({ _tag: "Proposed" }), 0, undefined, undefined)).toBe(
      "the grants were not given to the strategy"
    )
    expect(Strategies.grantRefusal(granted, call({ _tag: "Proposed" }), 0, Messages.fromUser("Go."), undefined)).toEqual(expect.any(String))
  })
})

describe("Stepping: the rules a shell applies to what it puts into events", () => {
  it("a call left running may run again only when its tool is idempotent and it has attempts left", () => {
    const running = (attempt?: number) => call(attempt === undefined ? { _tag: "Running" } : { _tag: "Running", attempt })
    const idempotent = { idempotent: true, maxAttempts: 3 }
    expect(Stepping.mayRunAgain(running(), idempotent)).toBe(true)
    expect(Stepping.mayRunAgain(running(2), idempotent)).toBe(true)
    expect(Stepping.mayRunAgain(running(3), idempotent)).toBe(false)
    expect(Stepping.mayRunAgain(running(), { idempotent: false, maxAttempts: 3 })).toBe(false)
    expect(Stepping.mayRunAgain(running(), undefined)).toBe(false)
    expect(Stepping.mayRunAgain(call({ _tag: "Approved" }), idempotent)).toBe(false)
    const messages: Messages.Messages = [
      ...Messages.fromUser("Go."),
      { role: "assistant", parts: [running(1), { ...running(3), id: "c2" }, { ...running(1), id: "c3", name: "other" }] }
    ]
    expect(Stepping.rerunnable(messages, (name) => name === "send" ? idempotent : undefined)).toStrictEqual(["c1"])
    expect(Stepping.rerunnable(Messages.fromUser("Go."), () => idempotent)).toStrictEqual([])
  })

  it("a response's call ids are made unique in the conversation, in order", () => {
    const taken = new Set(["a"])
    const parts = Stepping.uniqueIds(taken, [call({ _tag: "Proposed" }, "a"), call({ _tag: "Proposed" }, ""), call({ _tag: "Proposed" }, "a")])
    expect(parts.map((part) => part._tag === "ToolCall" ? part.id : undefined)).toStrictEqual(["a_2", "call_3", "a_3"])
    expect([...taken]).toStrictEqual(["a", "a_2", "call_3", "a_3"])
  })
})
