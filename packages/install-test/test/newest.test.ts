/**
 * A fresh app on the newest effect the workspace uses, with all three
 * libraries: one copy of effect in its tree, a strict node16 compile with
 * skipLibCheck off, every chat-ts import resolving under node10 (effect 4
 * itself does not), and the compiled
 * program run with plain node against a fake OpenAI server.
 */
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type App, compile, copiesOf, expectedLines, makeApp, runProgram, workspaceVersion } from "./app.js"
import * as FakeOpenAi from "./fakeOpenAi.js"
import { cleanEnv, root, run } from "./support.js"

describe("a fresh app on the newest effect, with core, providers and sql", () => {
  let app: App
  let effect: string
  // The node16 build (out/) is what node runs; made once, by whichever test needs it first.
  let built: Promise<string> | undefined
  const buildNode16 = () => (built ??= compile(app.folder, "node16"))

  beforeAll(async () => {
    effect = await workspaceVersion("effect")
    app = await makeApp({
      // The app's programs use these four; the other packed libraries are checked as tarballs.
      tarballs: inject("packed").filter((p) => ["@chat-ts/core", "@chat-ts/openai", "@chat-ts/sql", "@chat-ts/ai-sdk-provider"].includes(p.name)),
      dependencies: {
        effect,
        "@types/node": await workspaceVersion("@types/node")
      }
    })
  })
  afterAll(() => app?.remove())

  it("has one copy of effect", async () => {
    expect(await copiesOf(app.folder, "effect")).toEqual([`node_modules/effect@${effect}`])
  })

  it("type-checks under strict settings with node16 resolution; under node10 every chat-ts import resolves", async () => {
    await buildNode16()
    // node10 ignores "exports". effect 4 itself publishes its types through "exports" only, so
    // under node10 `effect` cannot be resolved at all (and what depends on its types fails with
    // it); every chat-ts import must still resolve (through "types" and "typesVersions").
    const ran = await run(join(root, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.node10.json", "--skipLibCheck"], { cwd: app.folder })
    const unresolved = [...ran.stdout.matchAll(/error TS2307: Cannot find module '([^']+)'/g)].map((match) => match[1]!)
    expect(unresolved.length).toBeGreaterThan(0)
    expect(unresolved.filter((specifier) => specifier !== "effect" && !specifier.startsWith("effect/"))).toEqual([])
    expect(ran.stdout).not.toMatch(/@chat-ts\//)
  })

  it("runs with plain node: the core and providers programs pause for an approval, go through JSON and resume", async () => {
    await buildNode16()
    expect(await runProgram(app.folder, "core")).toEqual(expectedLines)
    const server = await FakeOpenAi.start()
    try {
      const env = cleanEnv({ OPENAI_BASE_URL: server.baseURL, OPENAI_API_KEY: "sk-fake-key" })
      expect(await runProgram(app.folder, "providers", env)).toEqual(expectedLines)
      expect(server.requests.map((request) => request.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"])
      // The second request carries the approved call's result.
      const second = server.requests[1]!.body["messages"] as ReadonlyArray<{ role: string; content?: unknown }>
      expect(second.find((message) => message.role === "tool")?.content).toBe(JSON.stringify({ deleted: 2 }))
      expect(await runProgram(app.folder, "store")).toEqual([JSON.stringify({ store: "function" })])
    } finally {
      await server.close()
    }
  })
})
