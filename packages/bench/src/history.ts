/**
 * Deterministic conversation histories for the pause scenarios, the same
 * conversation in three forms: chat-ts messages, OpenAI Agents SDK input
 * items, and the Chat Completions wire messages (the plain JSON of the
 * conversation that any library must keep, used as the size baseline).
 *
 * The conversation alternates user and assistant messages; every fourth
 * assistant message is a tool call (`lookup`) with its result instead of text.
 * Texts are 60–240 (user) and 200–800 (assistant) characters of prose.
 */
import { Messages } from "@chat-ts/core"
import type { AgentInputItem } from "@openai/agents"
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions"

const words = (
  "the of and to in is that for it as with was on be by this are from at or an but not have which they you one had " +
  "were all we can there their been has more if will would when what so no out up into them some could time these " +
  "two may then do first any my now such like our over man me even most made after also did many before must through"
).split(" ")

/** A deterministic pseudo-random generator (mulberry32). */
const random = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const prose = (next: () => number, min: number, max: number): string => {
  const length = min + Math.floor(next() * (max - min))
  let out = ""
  while (out.length < length) out += (out === "" ? "" : " ") + words[Math.floor(next() * words.length)]
  return out + "."
}

/** One entry of the conversation, independent of any library. */
export type Entry =
  | { readonly kind: "user"; readonly text: string }
  | { readonly kind: "assistant"; readonly text: string }
  | { readonly kind: "tool"; readonly id: string; readonly args: string; readonly result: string }

/** `size` entries (one chat-ts message each). */
export const entries = (size: number, seed = 42): ReadonlyArray<Entry> => {
  const next = random(seed)
  const out: Array<Entry> = []
  for (let i = 0; i < size; i++) {
    if (i % 2 === 0) out.push({ kind: "user", text: prose(next, 60, 240) })
    else if (i % 8 === 7) {
      out.push({
        kind: "tool",
        id: `call_h${i}`,
        args: JSON.stringify({ query: prose(next, 10, 40) }),
        result: JSON.stringify({ answer: prose(next, 80, 300) })
      })
    } else out.push({ kind: "assistant", text: prose(next, 200, 800) })
  }
  return out
}

const usage = { inputTokens: 100, outputTokens: 50 }

/** The history as chat-ts messages. */
export const toChatTs = (history: ReadonlyArray<Entry>): Messages.Messages =>
  history.map((entry): Messages.Message => {
    switch (entry.kind) {
      case "user":
        return Messages.user(entry.text)
      case "assistant":
        return { role: "assistant", parts: [Messages.text(entry.text)], usage, finishReason: "stop" }
      case "tool":
        return {
          role: "assistant",
          parts: [{
            _tag: "ToolCall",
            id: entry.id,
            name: "lookup",
            arguments: entry.args,
            status: { _tag: "Completed", result: JSON.parse(entry.result) as unknown }
          }],
          usage,
          finishReason: "tool-calls"
        }
    }
  })

/** The history as OpenAI Agents SDK input items. */
export const toAgents = (history: ReadonlyArray<Entry>): Array<AgentInputItem> =>
  history.flatMap((entry): Array<AgentInputItem> => {
    switch (entry.kind) {
      case "user":
        return [{ role: "user", content: entry.text }]
      case "assistant":
        return [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: entry.text }] }]
      case "tool":
        return [
          { type: "function_call", callId: entry.id, name: "lookup", arguments: entry.args, status: "completed" },
          { type: "function_call_result", callId: entry.id, name: "lookup", status: "completed", output: entry.result }
        ]
    }
  })

/** The history as Chat Completions wire messages. */
export const toWire = (history: ReadonlyArray<Entry>): Array<ChatCompletionMessageParam> =>
  history.flatMap((entry): Array<ChatCompletionMessageParam> => {
    switch (entry.kind) {
      case "user":
        return [{ role: "user", content: entry.text }]
      case "assistant":
        return [{ role: "assistant", content: entry.text }]
      case "tool":
        return [
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: entry.id, type: "function", function: { name: "lookup", arguments: entry.args } }]
          },
          { role: "tool", tool_call_id: entry.id, content: entry.result }
        ]
    }
  })
