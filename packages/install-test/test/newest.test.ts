/**
 * A fresh app on the newest effect the workspace uses, with all three
 * libraries: one copy of effect in its tree, a strict node16 compile with
 * skipLibCheck off, imports resolving under node10, and the compiled
 * program run with plain node against a fake OpenAI server.
 */
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type App, compile, copiesOf, makeApp, workspaceVersion } from "./app.js"
import * as FakeOpenAi from "./fakeOpenAi.js"
import { cleanEnv, runOk } from "./support.js"

const expectedTurn = {
  waiting: ["call_1"],
  ranBeforeApproval: 0,
  deleted: ["a.log", "b.log"],
  answer: "Deleted a.log and b.log."
}

// @effect/platform's and @effect/experimental's own declarations (installed with @effect/sql)
// name the DOM's Crypto and Storage, so an app using them with skipLibCheck off needs the DOM lib.
const platformLib = ["--lib", "ES2022,DOM"]

describe("a fresh app on the newest effect, with core, providers and sql", () => {
  let app: App
  let effect: string
  // The node16 build (out/) is what node runs; made once, by whichever test needs it first.
  let built: Promise<string> | undefined
  const buildNode16 = () => (built ??= compile(app.folder, "node16", platformLib))

  beforeAll(async () => {
    effect = await workspaceVersion("effect")
    app = await makeApp({
      tarballs: inject("packed"),
      dependencies: {
        effect,
        "@effect/sql": await workspaceVersion("@effect/sql"),
        "@types/node": await workspaceVersion("@types/node")
      }
    })
  })
  afterAll(() => app?.remove())

  it("has one copy of effect", async () => {
    expect(await copiesOf(app.folder, "effect")).toEqual([`node_modules/effect@${effect}`])
  })

  it("type-checks under strict settings with node16 resolution, and resolves under node10", async () => {
    await buildNode16()
    // node10 ignores "exports": this checks that every import resolves (through "types" and
    // "typesVersions"); the declarations themselves were just checked above.
    await compile(app.folder, "node10", [...platformLib, "--skipLibCheck"])
  })

  it("runs with plain node: turns that pause for an approval, go through JSON and resume", async () => {
    await buildNode16()
    const server = await FakeOpenAi.start()
    try {
      const env = cleanEnv({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "sk-fake-key" })
      const out = await runOk(process.execPath, [join("out", "main.js")], { cwd: app.folder, env, timeoutMs: 60_000 })
      expect(JSON.parse(out.trim())).toEqual({ scripted: expectedTurn, openAi: expectedTurn })
      expect(server.requests.map((request) => request.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"])
      // The second request carries the approved call's result.
      const second = server.requests[1]!.body["messages"] as ReadonlyArray<{ role: string; content?: unknown }>
      expect(second.find((message) => message.role === "tool")?.content).toBe(JSON.stringify({ deleted: 2 }))
      const store = await runOk(process.execPath, [join("out", "store.js")], { cwd: app.folder, timeoutMs: 60_000 })
      expect(JSON.parse(store.trim())).toEqual({ store: "function" })
    } finally {
      await server.close()
    }
  })
})
