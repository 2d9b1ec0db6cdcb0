/**
 * A fresh app on the lowest effect the peer ranges of core and openai allow
 * (4.1.0; the packages pinned to 4.1.x are covered by the newest app):
 * one copy of effect, strict node16 and bundler compiles with skipLibCheck
 * off, and the compiled program run with plain node against a fake OpenAI server.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type App, compile, copiesOf, expectedLines, lowestOf, makeApp, runProgram, workspaceVersion } from "./app.js"
import * as FakeOpenAi from "./fakeOpenAi.js"
import { cleanEnv } from "./support.js"

describe("a fresh app on the lowest effect core and providers allow", () => {
  let app: App
  let effect: string

  beforeAll(async () => {
    // The app's programs use core and providers; the other packed libraries are checked as tarballs.
    const packed = inject("packed").filter((p) => ["@chat-ts/core", "@chat-ts/openai", "@chat-ts/ai-sdk-provider"].includes(p.name))
    expect(packed.map((p) => p.name).sort()).toEqual(["@chat-ts/ai-sdk-provider", "@chat-ts/core", "@chat-ts/openai"])
    const ranges = new Set(packed.map((p) => p.peerDependencies["effect"]))
    expect(ranges.size).toBe(1) // core and providers ask for the same effect
    effect = lowestOf([...ranges][0]!)
    app = await makeApp({
      tarballs: packed,
      dependencies: { effect, "@types/node": await workspaceVersion("@types/node") },
      leaveOut: ["store.ts"]
    })
  })
  afterAll(() => app?.remove())

  it("has one copy of effect, the lowest", async () => {
    expect(await copiesOf(app.folder, "effect")).toEqual([`node_modules/effect@${effect}`])
  })

  it("type-checks under strict settings with bundler resolution", async () => {
    await compile(app.folder, "bundler")
  })

  it("compiles under strict settings with node16 resolution and runs with plain node", async () => {
    await compile(app.folder, "node16")
    expect(await runProgram(app.folder, "core")).toEqual(expectedLines)
    const server = await FakeOpenAi.start()
    try {
      const env = cleanEnv({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "sk-fake-key" })
      expect(await runProgram(app.folder, "providers", env)).toEqual(expectedLines)
      expect(server.requests.map((request) => request.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"])
      // The second request carries the approved call's result.
      const second = server.requests[1]!.body["messages"] as ReadonlyArray<{ role: string; content?: unknown }>
      expect(second.find((message) => message.role === "tool")?.content).toBe(JSON.stringify({ deleted: 2 }))
    } finally {
      await server.close()
    }
    // The same turn on an AI SDK model through @chat-ts/ai-sdk-provider.
    expect(await runProgram(app.folder, "aiSdk")).toEqual(expectedLines)
  })
})
