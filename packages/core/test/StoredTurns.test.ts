/**
 * The in-memory compaction of issue 27 (statuses and usage built as plain
 * literals, the messages array made at its exact length) changes how turns
 * are held, never what they store: the stored JSON of real turns is byte for
 * byte what the code before it wrote (`fixtures/stored-turns`), and what a
 * later step or a decision builds never changes messages already handed out.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { readFileSync } from "node:fs"
import { Action, Chat, LanguageModel, Messages, Tool, Toolkit } from "../src/index.js"
import { documents } from "./support/storedTurns.js"

const fixture = JSON.parse(readFileSync(new URL("./fixtures/stored-turns/documents.json", import.meta.url), "utf8")) as Record<string, string>

describe("stored turns", () => {
  it.effect("every turn's toJson is byte for byte the document written before the compaction, and decodes back to the same messages", () =>
    Effect.gen(function*() {
      const now = yield* documents
      expect(Object.keys(now)).toEqual(Object.keys(fixture))
      for (const [name, json] of Object.entries(fixture)) {
        expect(now[name], name).toBe(json)
        const decoded = Result.getOrThrow(Messages.fromJson(json))
        expect(Result.getOrThrow(Messages.toJson(decoded)), name).toBe(json)
      }
    }))
})

const Noop = Tool.make("noop", { description: "Does nothing.", parameters: {}, success: Schema.Struct({ ok: Schema.Boolean }) })
const Delete = Tool.make("delete", {
  description: "Deletes.",
  parameters: { path: Schema.String },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { approval: true }
})
const kit = Toolkit.make(Noop, Delete).pipe(
  Toolkit.withStrategy((_call, metadata) => ((metadata as { readonly approval?: boolean } | undefined)?.approval === true ? Action.RequireApproval() : Action.Execute()))
)
const handlers = kit.toLayer({ noop: () => Effect.succeed({ ok: true }), delete: () => Effect.succeed({ deleted: 1 }) })

/**
 * A stateless model: after a user message, one `noop`; after a `noop` result, a `delete` (which
 * waits for a person); after the delete's answer, text. Ids are unique per conversation position.
 */
const model = LanguageModel.make({
  generate: (request) =>
    Effect.sync((): LanguageModel.Response => {
      const messages = request.messages
      const last = messages[messages.length - 1]!
      const id = `c${messages.length}`
      const calls = last.role === "assistant" ? Messages.toolCallsOf(last) : []
      const parts = last.role === "user"
        ? [Messages.toolCall({ id, name: "noop", arguments: "{}" })]
        : calls.some((call) => call.name === "noop")
        ? [Messages.toolCall({ id, name: "delete", arguments: "{\"path\":\"a\"}" })]
        : [Messages.text("Done.")]
      return { parts, usage: { inputTokens: messages.length, outputTokens: 1 }, finishReason: parts[0]!._tag === "Text" ? "stop" : "tool-calls" }
    })
})

type Op =
  | { readonly _tag: "approve"; readonly turn: number; readonly edit: boolean }
  | { readonly _tag: "reject"; readonly turn: number }
  | { readonly _tag: "cancel"; readonly turn: number }
  | { readonly _tag: "resume"; readonly turn: number }
  | { readonly _tag: "append"; readonly turn: number; readonly supersede: boolean }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constant("approve" as const), turn: fc.nat(3), edit: fc.boolean() }),
  fc.record({ _tag: fc.constant("reject" as const), turn: fc.nat(3) }),
  fc.record({ _tag: fc.constant("cancel" as const), turn: fc.nat(3) }),
  fc.record({ _tag: fc.constant("resume" as const), turn: fc.nat(3) }),
  fc.record({ _tag: fc.constant("append" as const), turn: fc.nat(3), supersede: fc.boolean() })
)

const json = (messages: Messages.Messages): string => Result.getOrThrow(Messages.toJson(messages))

describe("messages handed out are never changed by later steps", () => {
  it.effect("four turns of one chat, then decisions, resumes and appends in any order: every state handed out keeps its JSON", () =>
    Effect.gen(function*() {
      const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(LanguageModel.layer(model), handlers)))
      const first = yield* Effect.forEach([0, 1, 2, 3], (i) => chat.complete(Messages.fromUser(`turn ${i}`)).pipe(Effect.map((r) => r.messages)))
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
            // Every state any turn had, with its JSON when it was handed out.
            const seen: Array<{ readonly messages: Messages.Messages; readonly json: string }> = first.map((m) => ({ messages: m, json: json(m) }))
            const latest = [...first]
            for (const o of ops) {
              const current = latest[o.turn]!
              const pending = Messages.pendingTools(current)[0]
              let next: Messages.Messages | undefined
              switch (o._tag) {
                case "approve":
                  if (pending !== undefined) next = Result.getOrUndefined(Messages.approve(current, pending.id, o.edit ? { path: "b" } : undefined))
                  break
                case "reject":
                  if (pending !== undefined) next = Result.getOrUndefined(Messages.reject(current, pending.id, "no"))
                  break
                case "cancel":
                  if (pending !== undefined) next = Result.getOrUndefined(Messages.cancel(current, pending.id, { reason: "withdrawn" }))
                  break
                case "resume":
                  next = (await Effect.runPromise(chat.resume(current))).messages
                  break
                case "append":
                  next = Result.getOrUndefined(Messages.append(current, Messages.user("again"), o.supersede ? { supersede: "changed my mind" } : undefined))
                  break
              }
              if (next === undefined) continue
              latest[o.turn] = next
              seen.push({ messages: next, json: json(next) })
              for (const state of seen) expect(json(state.messages)).toBe(state.json)
            }
          }),
          { numRuns: 40 }
        )
      )
    }), 60_000)
})
