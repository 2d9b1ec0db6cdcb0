/**
 * The deltas `chat.stream` announces agree with the calls the response is
 * gathered into: for any order of parts, the same ids and the same arguments.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { StreamedCalls } from "../src/chat/internal/streamedCalls.js"
import { uniqueId } from "../src/turn/Stepping.js"
import * as LanguageModel from "../src/model/LanguageModel.js"
import * as Messages from "../src/turn/Messages.js"

const id = fc.constantFrom("", "a", "b", "a_2", "call_2")
const name = fc.constantFrom("x", "y")

/** Any parts of a response's calls, in any order (interleaved, fragments before starts, whole calls between). */
const arbParts = fc.array(
  fc.oneof(
    fc.record({ _tag: fc.constant("ToolCallStart" as const), id, name }, { noNullPrototype: true }),
    fc.record({ _tag: fc.constant("ToolCallDelta" as const), id, argumentsDelta: fc.string({ maxLength: 4 }) }, { noNullPrototype: true }),
    // Whole calls are named "whole", so they can be told apart once gathered.
    id.map((id): LanguageModel.StreamPart => ({ _tag: "Part", part: Messages.toolCall({ id, name: "whole", arguments: "{}" }) }))
  ),
  { maxLength: 14 }
)

describe("StreamedCalls", () => {
  it("for any parts: each named call's deltas carry the id it gets in the messages and join into its arguments; an unnamed one has none", () => {
    fc.assert(fc.property(arbParts, fc.subarray(["a", "b", "call_1"]), (parts, used) => {
      const taken = new Set(used)
      const calls = new StreamedCalls(taken)
      const acc = new LanguageModel.Accumulator()
      const deltas: Array<{ id: string; name: string; argumentsDelta: string }> = []
      for (const part of [...parts, { _tag: "Finish", usage: LanguageModel.noUsage, finishReason: "tool-calls" } as const]) {
        acc.add(part)
        const event = calls.event(part)
        if (event !== undefined && event._tag === "ToolCallDelta") deltas.push(event)
      }
      // The ids the chat gives the gathered calls (as `Stepping.uniqueIds` does).
      const final = acc.response()!.parts.flatMap((part) => {
        if (part._tag !== "ToolCall") return []
        const unique = uniqueId(part.id, (x) => taken.has(x), taken.size)
        taken.add(unique)
        return [{ ...part, id: unique }]
      })
      for (const call of final) {
        const own = deltas.filter((d) => d.id === call.id)
        // A whole call, or fragments whose start never came: nothing announced.
        if (call.name === "" || call.name === "whole") {
          expect(own).toEqual([])
          continue
        }
        expect(own.every((d) => d.name === call.name)).toBe(true)
        expect(own.map((d) => d.argumentsDelta).join("")).toBe(call.arguments)
      }
      expect(deltas.every((d) => final.some((call) => call.id === d.id))).toBe(true)
    }), { numRuns: 500 })
  })
})
