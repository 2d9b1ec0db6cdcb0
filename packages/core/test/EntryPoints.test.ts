/**
 * The entry points of the built package (`dist`, what users install): every
 * module of the barrel is also its own subpath export (`@chat-ts/core/Chat`),
 * the same module the barrel re-exports; and a program that imports the `Chat`
 * path loads neither the router, the worker, the signed store, the reviewer,
 * the shadow strategy, the stores and outbox nor the conformance kit, nor
 * `node:crypto`. Each check runs a fresh `node` on `dist` (built by `tsc -b`),
 * recording every module it loads with a synchronous load hook.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  readonly exports: Readonly<Record<string, unknown>>
  readonly typesVersions: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>>
}

/** The namespaces of the barrel, `export * as X from "./folder/X.js"`, from the sources, with their paths (`turn/Turn`). */
const exportsOfBarrel = [...readFileSync(new URL("../src/index.ts", import.meta.url), "utf8").matchAll(/export \* as (\w+) from "\.\/((?:\w+\/)?(\w+))\.js"/g)]
  .map((match) => ({ name: match[1]!, path: match[2]! }))
const barrel = exportsOfBarrel.map(({ name }) => name)

/**
 * Runs `node` in core's folder: registers a load hook, imports `specifiers`, then runs `then`
 * (JavaScript with `modules`, the specifiers' namespaces, `loaded`, the loaded URLs, and `crypto()`,
 * whether Node has loaded `node:crypto`, in scope)
 * and prints what it returns as JSON.
 */
const inNode = (specifiers: ReadonlyArray<string>, then: string): Promise<unknown> => {
  if (!existsSync(`${root}dist/index.js`)) throw new Error("these tests run the built package: run `npx tsc -b` first")
  const script = [
    `import { registerHooks } from "node:module"`,
    `const loaded = []`,
    `registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) })`,
    // Built-ins loaded another way (\`process.getBuiltinModule\`) do not pass the hook: Node's own list has them.
    `const crypto = () => process.moduleLoadList.includes("NativeModule crypto")`,
    `const modules = await Promise.all(${JSON.stringify(specifiers)}.map((s) => import(s)))`,
    `console.log(JSON.stringify((() => { ${then} })()))`
  ].join("\n")
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout.trim().split("\n").pop()!))
    })
  })
}

/** The loaded files of core's dist, relative to it (`chat/Chat.js`, `turn/internal/policy.js`), and the Node built-ins. */
const ofCore = (loaded: ReadonlyArray<string>): ReadonlyArray<string> =>
  loaded.flatMap((url) => {
    const at = url.indexOf("/packages/core/dist/")
    return at >= 0 ? [url.slice(at + "/packages/core/dist/".length)] : url.startsWith("node:") ? [url] : []
  })

/** What a `Chat` user does not need until it is used. */
const offTheChatPath = [
  "model/Router.js", "durable/Worker.js", "durable/SignedState.js", "governance/Reviewer.js", "governance/Shadow.js",
  "durable/ConversationStore.js", "durable/Outbox.js", "durable/OutboxDispatcher.js", "durable/Notifier.js",
  "durable/Notification.js", "provider/ProviderStream.js", "provider/ProviderCall.js", "index.js"
]

describe("entry points", () => {
  it("every namespace of the barrel is a subpath export with its types, and nothing else but the barrel, testing, its properties and package.json", () => {
    expect(barrel.length).toBeGreaterThan(20)
    expect(Object.keys(manifest.exports).sort()).toEqual(
      [".", "./package.json", "./testing", "./testing/Properties", ...barrel.map((name) => `./${name}`)].sort()
    )
    expect(manifest.exports["./testing/Properties"]).toEqual({
      types: "./dist/testing/Properties.d.ts",
      import: "./dist/testing/Properties.js",
      default: "./dist/testing/Properties.js"
    })
    expect(manifest.typesVersions["*"]!["testing/Properties"]).toEqual(["./dist/testing/Properties.d.ts"])
    for (const { name, path } of exportsOfBarrel) {
      expect(path.endsWith(`/${name}`)).toBe(true)
      expect(manifest.exports[`./${name}`]).toEqual({ types: `./dist/${path}.d.ts`, import: `./dist/${path}.js`, default: `./dist/${path}.js` })
      expect(manifest.typesVersions["*"]![name]).toEqual([`./dist/${path}.d.ts`])
    }
  })

  it("each subpath resolves to the very module the barrel re-exports", async () => {
    const specifiers = ["@chat-ts/core", ...barrel.map((name) => `@chat-ts/core/${name}`)]
    const same = await inNode(specifiers, `return ${JSON.stringify(barrel)}.map((name, i) => [name, modules[i + 1] === modules[0][name] && Object.keys(modules[i + 1]).length > 0])`)
    expect(same).toEqual(barrel.map((name) => [name, true]))
  }, 60_000)

  it("the Chat path loads no router, worker, stores, reviewer, conformance kit or node:crypto", async () => {
    const result = await inNode(
      ["Chat", "LanguageModel", "Messages", "Tool", "Toolkit"].map((name) => `@chat-ts/core/${name}`),
      "return { loaded, crypto: crypto() }"
    ) as { loaded: ReadonlyArray<string>; crypto: boolean }
    const loaded = ofCore(result.loaded)
    // The path itself is loaded (the hook sees it) ...
    for (const file of ["chat/Chat.js", "turn/Turn.js", "turn/Messages.js", "tools/Toolkit.js"]) expect(loaded).toContain(file)
    // ... and none of this.
    expect(loaded.filter((file) => offTheChatPath.includes(file) || file.startsWith("testing/") || file === "node:crypto")).toEqual([])
    expect(result.crypto).toBe(false)
  }, 60_000)

  it("the barrel loads neither the conformance kit nor node:crypto; the first arguments hash loads node:crypto", async () => {
    const result = await inNode(
      ["@chat-ts/core"],
      `const before = { loaded: loaded.slice(), crypto: crypto() }
       const hash = modules[0].DecisionPolicy.argumentsHash("{}")
       return { before, after: crypto(), hash }`
    ) as { before: { loaded: ReadonlyArray<string>; crypto: boolean }; after: boolean; hash: string }
    const before = ofCore(result.before.loaded)
    expect(before).toContain("model/Router.js")
    expect(before.filter((file) => file.startsWith("testing/") || file === "node:crypto")).toEqual([])
    expect(result.before.crypto).toBe(false)
    expect(result.after).toBe(true)
    expect(result.hash).toBe(`sha256:${createHash("sha256").update("{}", "utf8").digest("hex")}`)
  }, 60_000)

  it("fast-check is optional: without it @chat-ts/core/testing loads (its laws and traces too), only testing/Properties needs it", async () => {
    if (!existsSync(`${root}dist/testing/Properties.js`)) throw new Error("these tests run the built package: run `npx tsc -b` first")
    // A resolver that finds no fast-check, as in a project that did not install it.
    const script = [
      `import { registerHooks } from "node:module"`,
      `const loaded = []`,
      `registerHooks({`,
      `  resolve: (specifier, context, next) => {`,
      `    if (specifier === "fast-check" || specifier.startsWith("fast-check/")) {`,
      `      throw Object.assign(new Error("Cannot find package 'fast-check'"), { code: "ERR_MODULE_NOT_FOUND" })`,
      `    }`,
      `    return next(specifier, context)`,
      `  },`,
      `  load: (url, context, next) => (loaded.push(url), next(url, context))`,
      `})`,
      `const testing = await import("@chat-ts/core/testing")`,
      `const properties = await import("@chat-ts/core/testing/Properties").then(() => "loaded", (error) => error.message)`,
      `console.log(JSON.stringify({`,
      `  testing: Object.keys(testing).sort(),`,
      `  laws: testing.Law.all.map((law) => law.name),`,
      `  fastCheck: loaded.filter((url) => url.includes("/fast-check/")),`,
      `  properties`,
      `}))`
    ].join("\n")
    const result = await new Promise<{
      readonly testing: ReadonlyArray<string>
      readonly laws: ReadonlyArray<string>
      readonly fastCheck: ReadonlyArray<string>
      readonly properties: string
    }>((resolve, reject) => {
      execFile(process.execPath, ["--input-type=module", "-e", script], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${error.message}\n${stderr}`))
        else resolve(JSON.parse(stdout.trim().split("\n").pop()!))
      })
    })
    expect(result.testing).toEqual(["Agent", "Conformance", "Law", "MockLanguageModel", "ReplayServer", "Scenario", "Trace"])
    expect(result.laws).toContain("approvedBeforeRun")
    expect(result.fastCheck).toEqual([])
    expect(result.properties).toContain("Cannot find package 'fast-check'")
  }, 60_000)
})
