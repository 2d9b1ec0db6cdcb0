/**
 * The README's smallest program is the file it says (word for word) and
 * runs: `@ai-sdk/mistral`'s default provider, its requests sent to a
 * loopback replay server instead of api.mistral.ai by a `fetch` swapped in
 * for the test, answers a turn.
 */
import { ReplayServer } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { readFileSync } from "node:fs"
import * as Chat from "./support/chatCompletions.js"
import { redirect } from "./support/redirect.js"

const root = new URL("../../../../", import.meta.url)
const snippet = "packages/providers/ai-sdk/test/readme/smallest.ts#smallest"

const region = (text: string, name: string) => {
  const lines = text.split("\n")
  return lines.slice(lines.indexOf(`// #region ${name}`) + 1, lines.indexOf(`// #endregion ${name}`)).join("\n").trim()
}

describe("README", () => {
  it("shows the smallest program word for word", () => {
    const readme = readFileSync(new URL("packages/providers/ai-sdk/README.md", root), "utf8")
    const code = region(readFileSync(new URL("packages/providers/ai-sdk/test/readme/smallest.ts", root), "utf8"), "smallest")
    expect(readme).toContain(`<!-- snippet: ${snippet} -->\n\`\`\`ts\n${code}\n\`\`\``)
  })

  it.effect("its program answers a turn through @ai-sdk/mistral's default provider", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.json(Chat.completion({ model: "mistral-large-latest", typedCalls: false }, {
        id: "cmpl-readme",
        content: "Bonjour !",
        finish: "stop",
        usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 }
      })))
      const fetch = globalThis.fetch
      const key = process.env.MISTRAL_API_KEY
      globalThis.fetch = redirect(server.url)
      process.env.MISTRAL_API_KEY = "readme-key"
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          globalThis.fetch = fetch
          if (key === undefined) delete process.env.MISTRAL_API_KEY
          else process.env.MISTRAL_API_KEY = key
        })
      )
      const { program } = yield* Effect.promise(() => import("./readme/smallest.js"))
      const result = yield* program
      expect(result.outcome._tag).toBe("Complete")
      expect(result.messages.at(-1)?.parts).toEqual([{ _tag: "Text", text: "Bonjour !" }])
      expect(server.requests[0]!.path).toBe("/v1/chat/completions")
      expect(server.requests[0]!.headers.authorization).toBe("Bearer readme-key")
    }))
})
