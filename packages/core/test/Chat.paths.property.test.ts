/**
 * A turn takes the synchronous path when nothing is announced or saved (no stream, no
 * checkpoint: each reducer step is a plain call, see `internal/turnRunner.ts`), and the general
 * one otherwise (every event announced and checkpointed). Property: for any script of responses
 * (valid, invalid, unknown and duplicated-key calls, typed failures, calls that need approval,
 * repeated or missing ids, a step limit), both paths, and the stream, end the same way with the
 * same messages, and run the same handlers with the same arguments.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import { Chat, type ChatEvent, Messages } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { checkProperty, fileHandlers, files, recorder } from "./support/Chat.helpers.js"

/** The calls a response may hold: what the tool and its arguments make of it. */
const callKinds = [
  { name: "list_files", arguments: "{\"folder\":\"src\"}" },
  { name: "read_file", arguments: "{\"path\":\"a.txt\"}" },
  // A typed failure of the handler.
  { name: "read_file", arguments: "{\"path\":\"missing\"}" },
  // Needs a person: the turn pauses.
  { name: "delete_files", arguments: "{\"paths\":[\"a.log\"]}" },
  // Arguments that do not decode, are not JSON, give a key twice; a tool nobody serves.
  { name: "list_files", arguments: "{}" },
  { name: "list_files", arguments: "{" },
  { name: "list_files", arguments: "{\"folder\":\"a\",\"folder\":\"b\"}" },
  { name: "nope", arguments: "{}" }
] as const

const arbCall = fc.record({ kind: fc.nat({ max: callKinds.length - 1 }), id: fc.constantFrom("a", "b", "", "call_1") })

const arbScenario = fc.record({
  steps: fc.array(fc.array(arbCall, { minLength: 1, maxLength: 3 }), { maxLength: 4 }),
  maxSteps: fc.integer({ min: 1, max: 6 })
})

type Scenario = typeof arbScenario extends fc.Arbitrary<infer A> ? A : never

/** The model of a scenario: its steps' calls one response after the other, then an answer. */
const modelOf = (scenario: Scenario) =>
  MockLanguageModel.make((_request, index) => {
    const step = scenario.steps[index]
    return step === undefined
      ? MockLanguageModel.text("Done.")
      : { toolCalls: step.map((call) => ({ id: call.id, ...callKinds[call.kind]! })) }
  })

/** How a turn ended: its outcome and messages, or its error's tag (a stream's last event's) and the messages it carries. */
interface End {
  readonly ok: boolean
  readonly messages: Messages.Messages | undefined
  readonly outcome?: { readonly _tag: string }
  readonly tag?: string | undefined
}

const ending = (exit: Exit.Exit<{ readonly messages: Messages.Messages; readonly outcome: { readonly _tag: string } }, unknown>): End => {
  if (Exit.isSuccess(exit)) return { ok: true, messages: exit.value.messages, outcome: exit.value.outcome }
  const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  const failure = error?._tag === "Fail" ? error.error as { readonly _tag?: string; readonly messages?: Messages.Messages } : undefined
  return { ok: false, tag: failure?._tag, messages: failure?.messages }
}

/** Runs one turn of the scenario in `mode` on a fresh chat; returns how it ended and the handlers it ran. */
const play = (scenario: Scenario, mode: "quiet" | "checkpointed" | "streamed") =>
  Effect.gen(function*() {
    const rec = recorder()
    const model = modelOf(scenario)
    const chat = yield* Chat.make({ tools: files, maxSteps: scenario.maxSteps }).pipe(
      Effect.provide(Layer.merge(model.layer, fileHandlers(rec)))
    )
    const input = Messages.fromUser("Go.")
    const saved: Array<Messages.Messages> = []
    if (mode === "streamed") {
      const exit = yield* Effect.exit(Stream.runCollect(chat.stream(input)))
      if (Exit.isFailure(exit)) return { end: ending(exit as Exit.Exit<never, unknown>), ran: rec.calls, saved }
      const last = exit.value[exit.value.length - 1] as ChatEvent.ChatEvent
      const messages = last._tag === "Completed" || last._tag === "Paused" ? last.messages : undefined
      const end: End = { ok: messages !== undefined, messages, tag: last._tag }
      return { end, ran: rec.calls, saved }
    }
    const exit = yield* Effect.exit(
      mode === "quiet" ? chat.complete(input) : chat.complete(input, { checkpoint: (messages) => Effect.sync(() => void saved.push(messages)) })
    )
    return { end: ending(exit), ran: rec.calls, saved }
  })

describe("Chat: the synchronous and the general path of a turn (property)", () => {
  it.effect("without a stream or checkpoint, a turn ends as it does with them: the same outcome, messages and handler calls", () =>
    checkProperty(arbScenario, (scenario) =>
      Effect.gen(function*() {
        const quiet = yield* play(scenario, "quiet")
        const checkpointed = yield* play(scenario, "checkpointed")
        const streamed = yield* play(scenario, "streamed")
        expect(checkpointed.end).toEqual(quiet.end)
        expect(checkpointed.ran).toEqual(quiet.ran)
        // The last checkpoint is the state the turn ended in.
        if (checkpointed.saved.length > 0 && quiet.end.messages !== undefined) {
          expect(checkpointed.saved[checkpointed.saved.length - 1]).toEqual(quiet.end.messages)
        }
        expect(streamed.ran).toEqual(quiet.ran)
        expect(streamed.end.ok).toBe(quiet.end.ok)
        expect(streamed.end.messages).toEqual(quiet.end.messages)
        if (quiet.end.ok) {
          expect(streamed.end.tag).toBe(quiet.end.outcome?._tag === "Complete" ? "Completed" : "Paused")
        } else {
          expect(streamed.end.tag).toBe(quiet.end.tag)
        }
      }), { numRuns: 60 }))
})
