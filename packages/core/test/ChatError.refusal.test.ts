/**
 * `ChatError.refusalOf`: every member of `ResolveError` as the kind of refusal the front doors
 * (inbox, `UiChat`, AG-UI) answer it with, and an edit's problems as lines.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ChatError from "../src/data/ChatError.js"
import * as Messages from "../src/turn/Messages.js"
import { call, conversation, response } from "./support/fixtures.js"

/** One error of each `ResolveError` member (keyed by tag: a new member fails to compile until it is added here). */
const every: { readonly [Tag in ChatError.ResolveError["_tag"]]: Extract<ChatError.ResolveError, { readonly _tag: Tag }> } = {
  UnknownToolCall: new ChatError.UnknownToolCall({ id: "c1" }),
  ToolCallAlreadyResolved: new ChatError.ToolCallAlreadyResolved({ id: "c1", status: "Completed" }),
  ToolCallNotAwaitingDecision: new ChatError.ToolCallNotAwaitingDecision({ id: "c1", status: "Proposed" }),
  InvalidEditedArguments: new ChatError.InvalidEditedArguments({
    id: "c1",
    name: "send_email",
    detail: "Expected string, got 3   \r\n  at [\"to\"]\n\n   \nMissing key\n  at [\"subject\"]\n",
    messages: []
  }),
  DecisionNotAllowed: new ChatError.DecisionNotAllowed({ id: "c1", by: "bob", kind: "approve", detail: "only alice may decide" }),
  DuplicateVote: new ChatError.DuplicateVote({ id: "c1", by: "alice" })
}

describe("ChatError.refusalOf", () => {
  it("classifies every ResolveError member", () => {
    const kinds = Object.fromEntries(Object.values(every).map((error) => [error._tag, ChatError.refusalOf(error).kind]))
    expect(kinds).toStrictEqual({
      UnknownToolCall: "not_found",
      ToolCallAlreadyResolved: "already_decided",
      ToolCallNotAwaitingDecision: "already_decided",
      InvalidEditedArguments: "invalid_edit",
      DecisionNotAllowed: "forbidden",
      DuplicateVote: "forbidden"
    })
  })

  it("gives a policy's refusal its own reason, and no problems", () => {
    expect(ChatError.refusalOf(every.DecisionNotAllowed)).toStrictEqual({
      kind: "forbidden",
      id: "c1",
      message: every.DecisionNotAllowed.message,
      problems: []
    })
    expect(ChatError.refusalOf(every.DuplicateVote)).toStrictEqual({ kind: "forbidden", id: "c1", message: every.DuplicateVote.message, problems: [] })
  })

  it("splits an edit's detail into its problem lines, without trailing blanks or empty lines", () => {
    expect(ChatError.refusalOf(every.InvalidEditedArguments)).toStrictEqual({
      kind: "invalid_edit",
      id: "c1",
      message: "the edited arguments do not fit the parameters of 'send_email'",
      problems: ["Expected string, got 3", "  at [\"to\"]", "Missing key", "  at [\"subject\"]"]
    })
  })

  it("names the missing call, and what a decided call became", () => {
    expect(ChatError.refusalOf(every.UnknownToolCall)).toStrictEqual({
      kind: "not_found",
      id: "c1",
      message: "no call 'c1' in this conversation",
      problems: []
    })
    expect(ChatError.refusalOf(every.ToolCallAlreadyResolved)).toMatchObject({ kind: "already_decided", id: "c1", status: "Completed", problems: [] })
    expect(ChatError.refusalOf(every.ToolCallNotAwaitingDecision)).toMatchObject({ kind: "already_decided", id: "c1", status: "Proposed", problems: [] })
  })

  it("classifies what Messages refuses", () => {
    const messages = conversation(response([
      call("waiting", { _tag: "AwaitingApproval" }),
      call("done", { _tag: "Completed", result: { ok: true } })
    ]))
    const refused = (result: Result.Result<Messages.Messages, ChatError.ResolveError>) =>
      Result.isFailure(result) ? ChatError.refusalOf(result.failure).kind : "applied"
    expect(refused(Messages.approve(messages, "nope"))).toBe("not_found")
    expect(refused(Messages.approve(messages, "done"))).toBe("already_decided")
    expect(refused(Messages.reject(messages, "done", "no"))).toBe("already_decided")
    expect(refused(Messages.approve(messages, "waiting", { n: 10n }))).toBe("invalid_edit")
    expect(refused(Messages.approve(messages, "waiting"))).toBe("applied")
  })
})
