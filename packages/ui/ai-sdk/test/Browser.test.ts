/**
 * `useChat` in a real browser: the `ui` example's React page (bundled from
 * its sources by esbuild, React, `@ai-sdk/react` and `ai` included, no CDN)
 * served with our endpoint by the example's own server on 127.0.0.1, with the
 * scripted model of the tests; playwright-core drives the Chromium of the
 * `@sparticuz/chromium` package. A person sends a message, sees two approval
 * requests, approves one and rejects the other with a reason; `useChat`
 * sends both responses by itself and the turn goes on: the approved tool ran
 * exactly once and the model read the reason. A page reloaded mid-pause
 * loads the stored conversation and shows both calls again, to be decided
 * from there (the tool runs once); calls a new message cancelled show as
 * cancelled with the reason, live and after a reload. Screenshots go to
 * test-output/ only (`npm run docs:images` copies them into docs/images).
 */
import { Messages, Steering } from "@chat-ts/core"
import { assert, describe, it } from "@effect/vitest"
import sparticuz from "@sparticuz/chromium"
import { Effect, Option } from "effect"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import * as UiServer from "../../../examples/src/ui/server.js"
import * as Fixture from "./support/fixture.js"

const output = fileURLToPath(new URL("../test-output/", import.meta.url))

const launch = Effect.acquireRelease(
  Effect.tryPromise(async () => {
    const executablePath = await sparticuz.executablePath()
    const profile = mkdtempSync(join(tmpdir(), "ai-sdk-ui-chromium-"))
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-sync"
      ],
      viewport: { width: 520, height: 900 },
      deviceScaleFactor: 1,
      extraHTTPHeaders: { "x-test-user": "alice" },
      timeout: 30_000
    })
    context.setDefaultTimeout(15_000)
    return { context, profile }
  }).pipe(
    // A Chromium that dies as it starts (seen once in CI: SIGSEGV at launch on a loaded machine) is
    // started again, at most twice; a browser that starts and then fails still fails the test.
    Effect.retry({ times: 2 }),
    Effect.orDie
  ),
  ({ context, profile }) => Effect.promise(() => context.close()).pipe(Effect.ensuring(Effect.sync(() => rmSync(profile, { recursive: true, force: true }))))
)

const step = <A>(f: () => Promise<A>) => Effect.promise(f)

const shoot = (page: import("playwright-core").Page, name: string) =>
  step(() => page.screenshot({ path: join(output, name), fullPage: true }))

describe("useChat in Chromium", () => {
  it.live("a message sent while the answer streams: stop(), then send; the answer is cut, the model answers the message", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make
      const base = yield* UiServer.serve({ chat: env.chat, store: env.store, approver: Fixture.approver, port: 0 })
      const { context } = yield* launch
      const page = yield* step(() => context.newPage())
      const problems: Array<string> = []
      page.on("pageerror", (error) => problems.push(error.message))
      page.on("console", (message) => message.type() === "error" && problems.push(message.text()))

      yield* step(() => page.goto(`${base}/?chat=browser-barge`))
      yield* step(() => page.getByLabel("message").fill(Fixture.slowly))
      yield* step(() => page.getByRole("button", { name: "Send" }).click())
      // The answer has begun (it streams a piece every 20 ms): the person sends another message.
      yield* step(() => page.locator(".message[data-role=assistant] p").filter({ hasText: "you said: slowly" }).waitFor())
      yield* step(() => page.locator(".status[data-status=streaming]").waitFor())
      yield* step(() => page.getByLabel("message").fill("never mind"))
      yield* step(() => page.getByRole("button", { name: "Send" }).click())
      yield* step(() => page.locator(".message[data-role=assistant] p").filter({ hasText: "you said: never mind" }).waitFor())
      yield* step(() => page.locator(".status[data-status=ready]").waitFor())

      // The turn took the message as its input: the cut answer kept as far as it got, then the answer to it.
      const stored = Option.getOrThrow(yield* env.store.load("browser-barge")).messages
      assert.deepStrictEqual(stored.map((message) => message.role), ["user", "assistant", "user", "assistant"])
      const cut = Messages.textOf(stored[1]!)
      assert.isTrue(`you said: ${Fixture.slowly}`.startsWith(cut) && cut.length < `you said: ${Fixture.slowly}`.length)
      assert.strictEqual(Messages.textOf(stored[3]!), "you said: never mind")
      assert.strictEqual(env.model.requests.length, 2)
      // A reload shows the same: the question, the cut answer, the message, its answer.
      yield* step(() => page.reload())
      yield* step(() => page.locator(".message[data-role=assistant] p").filter({ hasText: "you said: never mind" }).waitFor())
      const texts = yield* step(() => page.locator(".message p").allInnerTexts())
      assert.deepStrictEqual(texts.map((text) => text.trim()), [Fixture.slowly.trim(), cut.trim(), "never mind", "you said: never mind"])
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.scoped))

  it.live("send a message, approve one call, reject one with a reason: it ran once and the model saw the reason", () =>
    Effect.gen(function*() {
      mkdirSync(output, { recursive: true })
      const env = yield* Fixture.make
      const base = yield* UiServer.serve({ chat: env.chat, store: env.store, approver: Fixture.approver, port: 0 })
      const { context } = yield* launch
      const page = yield* step(() => context.newPage())
      const problems: Array<string> = []
      page.on("pageerror", (error) => problems.push(error.message))
      page.on("console", (message) => message.type() === "error" && problems.push(message.text()))

      yield* step(() => page.goto(`${base}/?chat=browser-1`))
      yield* step(() => page.getByLabel("message").fill(Fixture.asking([
        { id: "c1", name: "send_email", arguments: { to: "ann@example.com", subject: "Your order shipped" } },
        { id: "c2", name: "transfer", arguments: { amount: 250, to: "acct-9" } }
      ])))
      yield* step(() => page.getByRole("button", { name: "Send" }).click())

      // Both calls wait for a decision; the transfer shows its deadline (chat-ts's data part).
      const email = page.locator(".tool[data-call=c1]")
      const transfer = page.locator(".tool[data-call=c2]")
      yield* step(() => email.and(page.locator("[data-state=approval-requested]")).waitFor())
      yield* step(() => transfer.and(page.locator("[data-state=approval-requested]")).waitFor())
      yield* step(() => transfer.locator(".deadline").waitFor())
      assert.deepStrictEqual(env.runs, [])
      yield* shoot(page, "ui-usechat-approval.png")

      // Approve the email; reject the transfer with a reason. useChat then sends both by itself.
      yield* step(() => email.getByRole("button", { name: "Approve" }).click())
      yield* step(() => transfer.getByLabel("reason for rejecting transfer").fill("not this month"))
      yield* step(() => transfer.getByRole("button", { name: "Reject" }).click())

      yield* step(() => email.and(page.locator("[data-state=output-available]")).waitFor())
      yield* step(() => transfer.and(page.locator("[data-state=output-denied]")).waitFor())
      yield* step(() => page.locator(".message[data-role=assistant] p").filter({ hasText: "all done" }).waitFor())
      yield* step(() => page.locator(".status[data-status=ready]").waitFor())
      assert.include(yield* step(() => transfer.innerText()), "rejected: not this month")
      assert.include(yield* step(() => email.innerText()), "decided by alice")
      yield* shoot(page, "ui-usechat-decided.png")

      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: { to: "ann@example.com", subject: "Your order shipped" } }])
      assert.include(JSON.stringify(env.model.requests.at(-1)!.messages), "not this month")
      const stored = Option.getOrThrow(yield* env.store.load("browser-1")).messages
      assert.deepInclude(Messages.findTool(stored, "c1")!.status, { _tag: "Completed" })
      assert.deepInclude(Messages.findTool(stored, "c2")!.status, { _tag: "Rejected", reason: "not this month", by: "user" })
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.scoped))

  it.live("reload mid-pause: the page loads both waiting calls, decides them from there, the tool runs once", () =>
    Effect.gen(function*() {
      mkdirSync(output, { recursive: true })
      const env = yield* Fixture.make
      const base = yield* UiServer.serve({ chat: env.chat, store: env.store, approver: Fixture.approver, port: 0 })
      const { context } = yield* launch
      const page = yield* step(() => context.newPage())
      const problems: Array<string> = []
      page.on("pageerror", (error) => problems.push(error.message))
      page.on("console", (message) => message.type() === "error" && problems.push(message.text()))

      yield* step(() => page.goto(`${base}/?chat=browser-reload`))
      yield* step(() => page.getByLabel("message").fill(Fixture.asking([
        { id: "r1", name: "send_email", arguments: { to: "ann@example.com", subject: "Your order shipped" } },
        { id: "r2", name: "transfer", arguments: { amount: 250, to: "acct-9" } }
      ])))
      yield* step(() => page.getByRole("button", { name: "Send" }).click())
      const waiting = page.locator("[data-state=approval-requested]")
      yield* step(() => page.locator(".tool[data-call=r2]").and(waiting).waitFor())

      // A reload: useChat starts again, from the stored conversation the page loads first.
      yield* step(() => page.reload())
      const email = page.locator(".tool[data-call=r1]")
      const transfer = page.locator(".tool[data-call=r2]")
      yield* step(() => email.and(waiting).waitFor())
      yield* step(() => transfer.and(waiting).waitFor())
      yield* step(() => transfer.locator(".deadline").waitFor())
      assert.include(yield* step(() => page.locator(".message[data-role=user]").innerText()), "please do")
      assert.deepStrictEqual(env.runs, [])
      yield* shoot(page, "ui-usechat-reloaded.png")

      yield* step(() => email.getByRole("button", { name: "Approve" }).click())
      yield* step(() => transfer.getByLabel("reason for rejecting transfer").fill("not after a reload"))
      yield* step(() => transfer.getByRole("button", { name: "Reject" }).click())
      yield* step(() => email.and(page.locator("[data-state=output-available]")).waitFor())
      yield* step(() => transfer.and(page.locator("[data-state=output-denied]")).waitFor())
      yield* step(() => page.locator(".message[data-role=assistant] p").filter({ hasText: "all done" }).waitFor())
      yield* step(() => page.locator(".status[data-status=ready]").waitFor())
      assert.deepStrictEqual(env.runs, [{ tool: "send_email", params: { to: "ann@example.com", subject: "Your order shipped" } }])

      // Reloaded once more: the decided calls as they ended, nothing runs again.
      yield* step(() => page.reload())
      yield* step(() => email.and(page.locator("[data-state=output-available]")).waitFor())
      yield* step(() => transfer.and(page.locator("[data-state=output-denied]")).waitFor())
      assert.include(yield* step(() => transfer.innerText()), "rejected: not after a reload")
      assert.include(yield* step(() => email.innerText()), "decided by alice")
      assert.strictEqual(env.runs.length, 1)
      const stored = Option.getOrThrow(yield* env.store.load("browser-reload")).messages
      assert.deepInclude(Messages.findTool(stored, "r1")!.status, { _tag: "Completed" })
      assert.deepInclude(Messages.findTool(stored, "r2")!.status, { _tag: "Rejected", reason: "not after a reload", by: "user" })
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.scoped))

  it.live("a new message while calls wait: they show as cancelled with the reason, live and after a reload; nothing ran", () =>
    Effect.gen(function*() {
      mkdirSync(output, { recursive: true })
      const env = yield* Fixture.make
      const base = yield* UiServer.serve({ chat: env.chat, store: env.store, approver: Fixture.approver, port: 0 })
      const { context } = yield* launch
      const page = yield* step(() => context.newPage())
      const problems: Array<string> = []
      page.on("pageerror", (error) => problems.push(error.message))
      page.on("console", (message) => message.type() === "error" && problems.push(message.text()))

      yield* step(() => page.goto(`${base}/?chat=browser-steer`))
      yield* step(() => page.getByLabel("message").fill(Fixture.asking([
        { id: "s1", name: "send_email", arguments: { to: "ann@example.com", subject: "Your order shipped" } },
        { id: "s2", name: "transfer", arguments: { amount: 250, to: "acct-9" } }
      ])))
      yield* step(() => page.getByRole("button", { name: "Send" }).click())
      yield* step(() => page.locator(".tool[data-call=s2][data-state=approval-requested]").waitFor())
      yield* step(() => page.locator(".status[data-status=ready]").waitFor())

      // The user types instead of deciding: the calls are withdrawn and the message answered.
      yield* step(() => page.getByLabel("message").fill("never mind"))
      yield* step(() => page.getByRole("button", { name: "Send" }).click())
      yield* step(() => page.locator(".message[data-role=assistant] p").filter({ hasText: "you said: never mind" }).waitFor())
      const cancelled = (call: string) => page.locator(`.tool[data-call=${call}] .cancelled`)
      for (const call of ["s1", "s2"]) {
        assert.include(yield* step(() => cancelled(call).innerText()), `cancelled: ${Steering.defaultReason}`)
      }
      assert.strictEqual(yield* step(() => page.getByRole("button", { name: "Approve" }).count()), 0)

      yield* step(() => page.reload())
      yield* step(() => page.locator(".message[data-role=assistant] p").filter({ hasText: "you said: never mind" }).waitFor())
      for (const call of ["s1", "s2"]) {
        assert.include(yield* step(() => cancelled(call).innerText()), `cancelled: ${Steering.defaultReason}`)
      }
      assert.strictEqual(yield* step(() => page.getByRole("button", { name: "Approve" }).count()), 0)
      yield* shoot(page, "ui-usechat-steered.png")
      assert.deepStrictEqual(env.runs, [])
      const stored = Option.getOrThrow(yield* env.store.load("browser-steer")).messages
      assert.deepInclude(Messages.findTool(stored, "s1")!.status, { _tag: "Cancelled", by: "user-message" })
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.scoped))
})
