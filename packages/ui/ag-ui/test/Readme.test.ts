/**
 * The README's and docs/ui.md's (AG-UI section) code is test/readme-example.ts word for
 * word, and it works: the server it builds answers the client it shows,
 * through a pause and an edit, to the end.
 */
import { Chat } from "@chat-ts/core"
import { Approver } from "@chat-ts/inbox"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Readme from "./readme-example.js"
import * as Support from "./support.js"

const here = fileURLToPath(new URL(".", import.meta.url))
const root = join(here, "..", "..", "..", "..")
const source = readFileSync(join(here, "readme-example.ts"), "utf8")

const region = (name: string) => {
  const lines = source.split("\n")
  const start = lines.indexOf(`// #region ${name}`)
  const end = lines.indexOf(`// #endregion ${name}`)
  return lines.slice(start + 1, end).join("\n")
}

describe("the README example", () => {
  it("the README and docs/ui.md (AG-UI) show test/readme-example.ts word for word", () => {
    const readme = readFileSync(join(here, "..", "README.md"), "utf8")
    const docs = readFileSync(join(root, "docs", "ui.md"), "utf8")
    for (const name of ["imports", "serve", "web", "client"]) {
      assert.include(readme, "```ts\n" + region(name) + "\n```", `README: ${name}`)
      assert.include(docs, `<!-- snippet: packages/ui/ag-ui/test/readme-example.ts#${name} -->\n\`\`\`ts\n${region(name)}\n\`\`\``, `docs: ${name}`)
    }
  })

  it.effect("its server answers its client through a pause and an edit", () =>
    Effect.gen(function*() {
      const runs: Support.Runs = []
      const mock = Support.model()
      const chat = yield* Chat.make({ tools: Support.toolkit }).pipe(Effect.provide(Layer.merge(mock.layer, Support.handlers(runs))))
      const approver = Approver.make({ identify: () => Effect.succeedSome(new Approver.Identity({ id: "ann" })) })
      const context = yield* Layer.build(Readme.AgentServer(chat, approver, 0))
      const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
      const url = address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}/agent`
      const email = { id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }
      const messages = yield* Effect.promise(() =>
        Readme.converse(url, Support.asking([email]), (details) => ({ ...(details.arguments as object), subject: "edited" }))
      )
      assert.deepStrictEqual(runs, [{ tool: "send_email", params: { to: "ann@example.com", subject: "edited" } }])
      const answer = messages[messages.length - 1]!
      assert.deepStrictEqual([answer.role, answer.content], ["assistant", "All done."])
      assert.isTrue(messages.some((m) => m.role === "tool" && m.toolCallId === "e1"))
    }), { timeout: 20_000 })

  it.effect("its web handler, built once, outlives a request: a pause in one request, the resume in the next", () =>
    Effect.gen(function*() {
      const runs: Support.Runs = []
      const mock = Support.model()
      const chat = yield* Chat.make({ tools: Support.toolkit }).pipe(Effect.provide(Layer.merge(mock.layer, Support.handlers(runs))))
      const approver = Approver.make({ identify: () => Effect.succeedSome(new Approver.Identity({ id: "ann" })) })
      const agent = Readme.webAgent(chat, approver)
      yield* Effect.addFinalizer(() => Effect.promise(agent.dispose))
      const post = (body: unknown) =>
        Effect.promise(() =>
          agent.handler(new Request("http://127.0.0.1/agent", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }))
            .then(async (response) => ({ status: response.status, text: await response.text() }))
        )
      const email = { id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }
      const first = yield* post(Support.say("web-1", Support.asking([email])))
      assert.strictEqual(first.status, 200)
      assert.include(first.text, "\"type\":\"interrupt\"")
      const second = yield* post(Support.resume("web-1", [{ interruptId: "e1", status: "resolved", payload: { approved: true } }]))
      assert.strictEqual(second.status, 200)
      assert.include(second.text, "\"outcome\":{\"type\":\"success\"}")
      assert.deepStrictEqual(runs, [{ tool: "send_email", params: email.arguments }])
    }).pipe(Effect.scoped), { timeout: 20_000 })
})
