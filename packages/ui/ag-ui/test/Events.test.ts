/**
 * The event mapping, for any streamed turn: whatever the order of text,
 * reasoning and tool call fragments within model calls, and the results
 * between them, the AG-UI events pass `@ag-ui/client`'s own verifier (every
 * message, tool call and step opened is closed, in order, before the run
 * ends), each is an event `@ag-ui/core` accepts, and each call's arguments
 * are the fragments the model streamed, joined.
 */
import { verifyEvents } from "@ag-ui/client"
import { EventSchema } from "@ag-ui/core/schemas"
import { ChatEvent, Messages, Usage } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { from, lastValueFrom, toArray } from "rxjs"
import { RunEvents } from "../src/internal/events.js"

type Piece =
  | { readonly kind: "text" | "reasoning"; readonly text: string }
  | { readonly kind: "args"; readonly call: number; readonly delta: string }

const piece: fc.Arbitrary<Piece> = fc.oneof(
  fc.record({ kind: fc.constantFrom("text" as const, "reasoning" as const), text: fc.string({ maxLength: 5 }) }),
  fc.record({ kind: fc.constant("args" as const), call: fc.nat({ max: 2 }), delta: fc.string({ maxLength: 5 }) })
)

/** A model call: its fragments in order, and whether its calls get results before the next one. */
const modelCall = fc.record({ pieces: fc.array(piece, { maxLength: 12 }), results: fc.boolean() })

/** The chat events of a turn of these model calls, and the arguments each call streamed. */
const turn = (calls: ReadonlyArray<{ readonly pieces: ReadonlyArray<Piece>; readonly results: boolean }>, pause: boolean) => {
  const events: Array<ChatEvent.ChatEvent> = []
  const args = new Map<string, string>()
  calls.forEach((call, step) => {
    const ids: Array<string> = []
    for (const p of call.pieces) {
      if (p.kind === "text") events.push(ChatEvent.ChatEvent.TextDelta({ text: p.text }))
      else if (p.kind === "reasoning") events.push(ChatEvent.ChatEvent.ReasoningDelta({ text: p.text }))
      else if (p.kind === "args") {
        const id = `s${step}c${p.call}`
        if (!ids.includes(id)) ids.push(id)
        args.set(id, (args.get(id) ?? "") + p.delta)
        events.push(ChatEvent.ChatEvent.ToolCallDelta({ id, name: "tool", argumentsDelta: p.delta }))
      }
    }
    const parts = ids.map((id) => Messages.toolCall({ id, name: "tool", arguments: args.get(id)! }))
    for (const part of parts) events.push(ChatEvent.ChatEvent.ToolCall({ call: part }))
    events.push(ChatEvent.ChatEvent.StepFinished({ step: step + 1, usage: Usage.empty, finishReason: "tool-calls" }))
    if (call.results) {
      for (const part of parts) {
        events.push(ChatEvent.ChatEvent.ToolResult({ call: { ...part, status: { _tag: "Completed", result: { ok: true } } } }))
      }
    }
  })
  const mapper = new RunEvents("thread", "run")
  const out = [mapper.started(), ...events.flatMap((event) => mapper.of(event))]
  out.push(...(pause ? mapper.paused([{ id: "x", reason: "tool_call" }]) : mapper.completed("done")))
  return { out, args }
}

describe("the event mapping", () => {
  it("any streamed turn gives events the AG-UI client verifies, with each call's arguments joined", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(modelCall, { maxLength: 4 }), fc.boolean(), async (calls, pause) => {
        const { args, out } = turn(calls, pause)
        for (const event of out) EventSchema.parse(event)
        const verified = await lastValueFrom(from(out as Array<any>).pipe(verifyEvents(), toArray()))
        expect(verified.length).toBe(out.length)
        for (const [id, text] of args) {
          const joined = out.filter((e) => e.type === "TOOL_CALL_ARGS" && e.toolCallId === id).map((e) => e.delta).join("")
          expect(joined).toBe(text)
          expect(out.filter((e) => e.type === "TOOL_CALL_START" && e.toolCallId === id)).toHaveLength(1)
        }
        expect(out[out.length - 1]!.type).toBe("RUN_FINISHED")
        // One assistant message per model call: its calls name it as their parent, and its text is it.
        let step: Array<any> = []
        for (const event of out as Array<any>) {
          if (event.type === "STEP_STARTED") step = []
          step.push(event)
          if (event.type !== "STEP_FINISHED") continue
          const parents = new Set(step.filter((e) => e.type === "TOOL_CALL_START").map((e) => e.parentMessageId))
          const texts = new Set(step.filter((e) => e.type === "TEXT_MESSAGE_START").map((e) => e.messageId))
          expect(parents.has(undefined)).toBe(false)
          expect(parents.size).toBeLessThanOrEqual(1)
          expect(texts.size).toBeLessThanOrEqual(1)
          if (parents.size === 1 && texts.size === 1) expect([...parents]).toEqual([...texts])
        }
      }),
      { numRuns: 200 }
    )
  })
})
