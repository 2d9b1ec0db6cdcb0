import { Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import { toContents } from "../src/internal/wire.js"

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

describe("Google: calls that did not run", () => {
  it("sends a rejected, an expired and a cancelled call as three function responses the model can tell apart", () => {
    const wire = Result.getOrThrow(toContents(outcomes))
    expectOutcomes(wire)
    expect(wire.contents.at(-1)!.parts!.map((part) => Object.keys(part.functionResponse?.response ?? {}))).toEqual([["error"], ["error"], ["error"]])
  })
})
