/**
 * The `phase` of assistant message items goes back on follow-up input
 * (issue 24, defect 8). gpt-5.x models label each message item `commentary`
 * or `final_answer`; OpenAI asks clients to "preserve and resend phase on all
 * assistant messages" (the SDK's `EasyInputMessage.phase`). Real SDK, replay
 * server; the first answer is a recorded response with both phases
 * (`fixtures/responses/phase-commentary-final-answer.json`, see the README
 * there) or its streamed, constructed twin.
 */
import { LanguageModel, Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { EasyInputMessage, ResponseInputItem } from "openai/resources/responses/responses"
import { request, responsesModel } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const recorded = ReplayServer.fixture("responses/phase-commentary-final-answer.json")

/** The two texts of the recorded response, in order. */
const [commentary, finalAnswer] = (JSON.parse(recorded) as { readonly output: ReadonlyArray<{ readonly content: ReadonlyArray<{ readonly text: string }> }> })
  .output.map((item) => item.content[0]!.text)

/**
 * The SDK's `EasyInputMessage` as a schema, for the items this package sends
 * (string content): decoding with `onExcessProperty: "error"` refuses any
 * field the type does not declare and any phase it does not list.
 */
const EasyInput = Schema.Struct({
  role: Schema.Literals(["user", "assistant", "system", "developer"]),
  content: Schema.String,
  phase: Schema.optionalKey(Schema.NullOr(Schema.Literals(["commentary", "final_answer"]))),
  type: Schema.optionalKey(Schema.Literal("message"))
})

/** Compile-time: what the schema accepts is an `EasyInputMessage`, hence a `ResponseInputItem`. */
const asInputItem = (item: typeof EasyInput.Type): ResponseInputItem => item satisfies EasyInputMessage

/** The assistant message the conversation stores for a response (as `Turn` does). */
const stored = (response: LanguageModel.Response): Messages.Message => ({
  role: "assistant",
  parts: response.parts,
  ...(response.providerMetadata === undefined ? {} : { providerMetadata: response.providerMetadata })
})

/** The `input` items of the `index`-th request the server received. */
const inputOf = (server: ReplayServer.ReplayServer, index: number): ReadonlyArray<unknown> =>
  (server.requests[index]!.body as { readonly input: ReadonlyArray<unknown> }).input

/** The assistant items of an input, each decoded as an `EasyInputMessage` (fails on anything else). */
const assistantItems = (input: ReadonlyArray<unknown>): ReadonlyArray<ResponseInputItem> =>
  input
    .filter((item) => (item as { readonly role?: unknown }).role === "assistant")
    .map((item) => asInputItem(Schema.decodeUnknownSync(EasyInput)(item, { onExcessProperty: "error" })))

const first = [Messages.user("What is the latest AI news today?")]

describe("Responses: phase goes back on follow-up input", () => {
  it.effect("a recorded answer's commentary and final answer are sent back with their phase", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(recorded), ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server, { model: "gpt-5.3-codex" })
      const answer = yield* model.generate(request(first))
      yield* model.generate(request([...first, stored(answer), Messages.user("And yesterday?")]))
      expect(assistantItems(inputOf(server, 1))).toEqual([
        { role: "assistant", content: commentary, phase: "commentary" },
        { role: "assistant", content: finalAnswer, phase: "final_answer" }
      ])
    }))

  it.effect("so are a streamed answer's", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(
        ReplayServer.sse(ReplayServer.fixture("constructed/responses-stream-two-messages-phase.sse")),
        ReplayServer.json(ReplayServer.fixture("responses/text.json"))
      )
      const model = yield* responsesModel(server, { model: "gpt-5.1" })
      const answer = yield* LanguageModel.collect(model.stream(request(first)))
      yield* model.generate(request([...first, stored(answer), Messages.user("Thanks.")]))
      expect(assistantItems(inputOf(server, 1))).toEqual([
        { role: "assistant", content: "Got it", phase: "commentary" },
        { role: "assistant", content: "Here are the results.", phase: "final_answer" }
      ])
    }))

  it.effect("a phase the API does not define, or none recorded, sends no phase field", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.json(ReplayServer.fixture("responses/text.json")))
      const model = yield* responsesModel(server, { model: "gpt-5.1" })
      const odd: Messages.Message = {
        role: "assistant",
        parts: [Messages.text("Thinking aloud."), Messages.text("Done."), Messages.text("Plain.")],
        providerMetadata: {
          openai: { texts: [{ itemId: "msg_1", phase: "planning" }, { itemId: "msg_2", phase: "final_answer" }] }
        }
      }
      yield* model.generate(request([...first, odd, Messages.user("Go on.")]))
      expect(assistantItems(inputOf(server, 0))).toEqual([
        { role: "assistant", content: "Thinking aloud." },
        { role: "assistant", content: "Done.", phase: "final_answer" },
        { role: "assistant", content: "Plain." }
      ])
    }))
})
