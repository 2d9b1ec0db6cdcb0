/**
 * A fresh app on `effect@latest` as the registry serves it today. Core and the
 * providers ask for `effect ^4.1.0`, so they must install, compile and run on
 * any 4.x; the packages on modules Effect marks unstable (sql, inbox, workflow,
 * effect-ai, ag-ui) pin `>=4.1.0 <4.2.0`, so npm must accept them on 4.1.x and refuse
 * them (ERESOLVE) on a newer minor, and the test says which it found.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type App, compile, copiesOf, expectedLines, makeApp, runProgram, workspaceVersion } from "./app.js"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { cleanEnv, folderOf, root, runOk } from "./support.js"

/** The `@chat-ts/*` packages a published package depends on. */
const workspaceDependencies = (name: string): ReadonlyArray<string> => {
  const manifest = JSON.parse(readFileSync(join(root, "packages", folderOf(name), "package.json"), "utf8")) as {
    readonly dependencies?: Readonly<Record<string, string>>
  }
  return Object.keys(manifest.dependencies ?? {}).filter((dependency) => dependency.startsWith("@chat-ts/"))
}

/** Whether `version` is within a `>=A.B.C <A.D.0` range (the form of the unstable pins). */
const withinPin = (version: string, range: string): boolean => {
  const match = /^>=(\d+)\.(\d+)\.(\d+) <(\d+)\.(\d+)\.0$/.exec(range)
  if (match === null) throw new Error(`not a pinned range: ${range}`)
  const [major, minor, patch] = version.split(".").map((part) => Number.parseInt(part, 10)) as [number, number, number]
  const [lo, hi] = [[+match[1]!, +match[2]!, +match[3]!], [+match[4]!, +match[5]!, 0]] as const
  const cmp = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!
  return cmp([major, minor, patch], lo) >= 0 && cmp([major, minor, patch], hi) < 0
}

describe("a fresh app on effect@latest", () => {
  let latest: string
  let app: App

  beforeAll(async () => {
    latest = (await runOk("npm", ["view", "effect@latest", "version"], { cwd: process.cwd(), env: cleanEnv() })).trim()
    const packed = inject("packed").filter((p) => ["@chat-ts/core", "@chat-ts/openai", "@chat-ts/ai-sdk-provider"].includes(p.name))
    app = await makeApp({
      tarballs: packed,
      dependencies: { effect: latest, "@types/node": await workspaceVersion("@types/node") },
      leaveOut: ["store.ts"]
    })
  })
  afterAll(() => app?.remove())

  it("core, openai and ai-sdk-provider install on it with one copy of effect, compile strictly and run", async () => {
    expect(latest).toMatch(/^4\.\d+\.\d+$/)
    expect(await copiesOf(app.folder, "effect")).toEqual([`node_modules/effect@${latest}`])
    await compile(app.folder, "node16")
    expect(await runProgram(app.folder, "core")).toEqual(expectedLines)
    expect(await runProgram(app.folder, "aiSdk")).toEqual(expectedLines)
  })

  it("the unstable-module packages install on it exactly when it is within their pin", async () => {
    const pinned = inject("packed").filter((p) => p.peerDependencies["effect"]?.startsWith(">="))
    expect(pinned.map((p) => p.name).sort()).toEqual(["@chat-ts/ag-ui", "@chat-ts/ai-sdk-ui", "@chat-ts/effect-ai", "@chat-ts/inbox", "@chat-ts/sql", "@chat-ts/workflow"])
    for (const library of pinned) {
      const range = library.peerDependencies["effect"]!
      const expected = withinPin(latest, range)
      // With the workspace packages it depends on (core; the inbox for ag-ui), which the registry may not have yet.
      const needed = ["@chat-ts/core", library.name, ...workspaceDependencies(library.name)]
      const tried = await makeApp({
        tarballs: inject("packed").filter((p) => needed.includes(p.name)),
        dependencies: { effect: latest },
        leaveOut: ["src"]
      }).then((made) => made.remove().then(() => "installed"), (error: Error) => String(error.message))
      // Reported in the test output either way: the canary for widening the pins.
      console.log(`effect@${latest} and ${library.name} (effect ${range}): ${expected ? "within the pin" : "outside the pin"}; npm: ${tried === "installed" ? "installed" : "refused"}`)
      if (expected) expect(tried).toBe("installed")
      else expect(tried).toMatch(/ERESOLVE/)
    }
  })
})
