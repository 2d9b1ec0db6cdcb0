import { Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ChatCompletions from "../src/internal/chatCompletions.js"
import * as Responses from "../src/internal/responses.js"

/** A conversation whose three calls ended without running: rejected, expired, cancelled (issue 26). */
const outcomes: Messages.Messages = [
  Messages.user("Pay, email and delete."),
  Messages.assistant([
    { ...Messages.toolCall({ id: "r", name: "pay", arguments: "{}" }), status: { _tag: "Rejected", by: "user", reason: "too much" } },
    { ...Messages.toolCall({ id: "e", name: "email", arguments: "{}" }), status: { _tag: "Expired", expiresAt: 1_000 } },
    {
      ...Messages.toolCall({ id: "c", name: "remove", arguments: "{}" }),
      status: { _tag: "Cancelled", by: "operator", reason: "duplicate", cancellation: { by: "ops-erin", at: 5 } }
    }
  ])
]

/** What the model must read for each, and never the audit record. */
const expectOutcomes = (wire: unknown) => {
  const text = JSON.stringify(wire)
  expect(text).toContain("The user rejected this tool call; it did not run. Reason: too much")
  expect(text).toContain("This tool call did not run: nobody decided in time. The approval request expired at 1970-01-01T00:00:01.000Z")
  expect(text).toContain("This tool call was cancelled by an operator; it did not run. Reason: duplicate")
  expect(text).not.toContain("ops-erin")
}

describe("OpenAI: calls that did not run", () => {
  it("Chat Completions: a rejected, an expired and a cancelled call are three tool messages the model can tell apart", () => {
    const wire = Result.getOrThrow(ChatCompletions.toMessages(outcomes))
    expectOutcomes(wire)
    expect(wire.filter((message) => message.role === "tool")).toHaveLength(3)
  })

  it("Responses: the same, as three function_call_output items", () => {
    const wire = Result.getOrThrow(Responses.toInput(outcomes, false, false))
    expectOutcomes(wire)
    expect(JSON.stringify(wire).match(/function_call_output/g)).toHaveLength(3)
  })
})
