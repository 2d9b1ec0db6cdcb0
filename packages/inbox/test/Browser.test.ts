/**
 * The inbox page in a real browser: playwright-core driving the Chromium
 * that the `@sparticuz/chromium` npm package ships (unpacked at run time,
 * nothing downloaded). A person approves one call (with the keyboard), edits
 * another with an invalid then a valid value, rejects a third with a reason,
 * and sees a new pause and someone else's decision arrive live. Under a
 * decision policy, the page shows who asked (every sender of the messages
 * delivered together), who may decide and the quorum's progress, offers each
 * person only the decisions they may take (no Approve for a requester under
 * four-eyes, nor a second yes by one person; Cancel for a requester), and
 * runs the call once two people of finance approved it.
 */
import { Messages } from "@chat-ts/core"
import sparticuz from "@sparticuz/chromium"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import type { BrowserContext } from "playwright-core"
import * as Fixture from "./support/fixture.js"

/** Where the screenshots go (docs/images holds copies of them). */
const output = fileURLToPath(new URL("../test-output/", import.meta.url))

const launch = (user: string) =>
  Effect.acquireRelease(
    Effect.tryPromise(async () => {
      const executablePath = await sparticuz.executablePath()
      const profile = mkdtempSync(join(tmpdir(), "inbox-chromium-"))
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
        viewport: { width: 420, height: 860 },
        deviceScaleFactor: 1,
        extraHTTPHeaders: { "x-test-user": user },
        timeout: 30_000
      })
      context.setDefaultTimeout(10_000)
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

const statusOf = (env: Fixture.Env, conversation: string, call: string) =>
  Effect.map(env.store.load(conversation), (stored) => Messages.findTool(Option.getOrThrow(stored).messages, call)!.status)

describe("the inbox page in Chromium", () => {
  it.live("approve, edit (invalid then valid), reject with a reason, cancel as an operator, and live updates", () =>
    Effect.gen(function*() {
      mkdirSync(output, { recursive: true })
      const env = yield* Fixture.make({ pollInterval: "200 millis" })
      yield* env.seed("order-17", [{ id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "Your order shipped" } }], "Tell Ann that her order shipped.")
      yield* env.seed("refund-4", [{ id: "t1", name: "transfer", arguments: { amount: 50, to: "acct-9" } }], "Refund 50 to account 9.")
      yield* env.seed("cleanup-2", [{ id: "d1", name: "delete_files", arguments: { paths: ["/var/log/app.log", "/etc/passwd"] } }], "Clean up the old logs.")
      const { context } = yield* launch("alice")
      const page: Awaited<ReturnType<BrowserContext["newPage"]>> = yield* step(() => context.newPage())
      const problems: Array<string> = []
      page.on("pageerror", (error) => problems.push(error.message))
      // The browser logs the refused edit's 422 itself; anything else logged as an error is a problem.
      page.on("console", (message) => message.type() === "error" && !message.text().includes("status of 422") && problems.push(message.text()))

      // The list: three pending calls, with the person signed in.
      yield* step(() => page.goto(`${env.url}/`))
      assert.strictEqual(yield* step(() => page.locator(".item").count()), 3)
      assert.include(yield* step(() => page.locator("header").innerText()), "alice")
      // The transfer's approval expires in an hour: counted down.
      yield* step(() => page.locator("[data-deadline]").first().filter({ hasText: /^in 59m \d+s$/ }).waitFor())
      yield* step(() => page.screenshot({ path: join(output, "inbox-list.png"), fullPage: true }))

      // A new pause shows up without a reload (SSE).
      yield* env.seed("invoice-9", [{ id: "e2", name: "send_email", arguments: { to: "bob@example.com", subject: "Invoice" } }], "Send Bob his invoice.")
      yield* step(() => page.locator(".item", { hasText: "invoice-9" }).waitFor())

      // Approve with the keyboard.
      yield* step(() => page.click(`a[href="/c/order-17#call-e1"]`))
      yield* step(() => page.locator("form.approve button").waitFor())
      yield* step(() => page.screenshot({ path: join(output, "inbox-detail.png"), fullPage: true }))
      yield* step(() => page.focus("form.approve button"))
      yield* step(() => page.keyboard.press("Enter"))
      yield* step(() => page.locator(".call.status-Completed .decision", { hasText: "alice" }).waitFor())
      assert.strictEqual((yield* statusOf(env, "order-17", "e1"))._tag, "Completed")

      // Edit: a key given twice (JSON.parse would keep 500 while the person reads 5) is refused on the page, with
      // where (the server refuses the same text too: see InboxApi.test.ts); the page sends edits as typed.
      yield* step(() => page.goto(`${env.url}/c/refund-4`))
      yield* step(() => page.fill("form.edit textarea", `{"amount":5,"to":"acct-9","memo":{"n":[1,{"k":1,"k":2}]},"amount":500}`))
      yield* step(() => page.click("form.edit button"))
      yield* step(() => page.locator("form.edit .problems").filter({ hasText: `the key "k" appears twice in $.memo.n[1]` }).waitFor())
      yield* step(() => page.fill("form.edit textarea", `{"amount":5,"to":"acct-9","amount":500}`))
      yield* step(() => page.click("form.edit button"))
      yield* step(() => page.locator("form.edit .problems").filter({ hasText: `the key "amount" appears twice in $` }).waitFor())
      assert.strictEqual((yield* statusOf(env, "refund-4", "t1"))._tag, "AwaitingApproval")
      // Edit: an amount the tool refuses, the server's message inline, then a valid one.
      yield* step(() => page.fill("form.edit textarea", JSON.stringify({ amount: 5000, to: "acct-9" })))
      yield* step(() => page.click("form.edit button"))
      const error = page.locator("form.edit .problems")
      yield* step(() => error.filter({ hasText: "1000" }).waitFor())
      assert.strictEqual(yield* step(() => page.getAttribute("form.edit textarea", "aria-invalid")), "true")
      yield* step(() => page.screenshot({ path: join(output, "inbox-edit-error.png"), fullPage: true }))
      assert.strictEqual((yield* statusOf(env, "refund-4", "t1"))._tag, "AwaitingApproval")
      yield* step(() => page.fill("form.edit textarea", JSON.stringify({ amount: 500, to: "acct-9" })))
      yield* step(() => page.click("form.edit button"))
      yield* step(() => page.locator(".call.status-Completed", { hasText: "500" }).waitFor())

      // Reject with a reason.
      yield* step(() => page.goto(`${env.url}/c/cleanup-2`))
      yield* step(() => page.fill("form.reject input", "never touch /etc"))
      yield* step(() => page.click("form.reject button"))
      yield* step(() => page.locator(".call.status-Rejected .decision", { hasText: "alice" }).waitFor())
      yield* step(() => page.screenshot({ path: join(output, "inbox-decided.png"), fullPage: true }))

      // Someone else decides the call on screen: the page shows it.
      yield* step(() => page.goto(`${env.url}/c/invoice-9`))
      yield* step(() => page.locator("form.approve button").waitFor())
      const carol = yield* Fixture.csrfOf(env.url, "carol")
      const other = yield* Fixture.request(`${env.url}/api/conversations/invoice-9/calls/e2/decision`, {
        method: "POST",
        user: "carol",
        headers: { "x-csrf-token": carol },
        body: { _tag: "Reject", reason: "duplicate" }
      })
      assert.strictEqual(other.status, 200)
      yield* step(() => page.locator(".call.status-Rejected .decision", { hasText: "carol" }).waitFor())
      assert.strictEqual(yield* step(() => page.locator("form.decide").count()), 0)

      // Cancel as an operator: withdrawn, not rejected; the page shows who cancelled it and what the model reads.
      yield* env.seed("dup-3", [{ id: "e3", name: "send_email", arguments: { to: "ann@example.com", subject: "Your order shipped" } }], "Tell Ann again.")
      yield* step(() => page.goto(`${env.url}/c/dup-3`))
      yield* step(() => page.fill("form.cancel input", "sent twice by mistake"))
      yield* step(() => page.click("form.cancel button"))
      yield* step(() => page.locator(".call.status-Cancelled .cancellation", { hasText: "alice" }).waitFor())
      yield* step(() => page.locator(".call.status-Cancelled .outcome", { hasText: "cancelled by an operator" }).waitFor())
      const cancelled = yield* statusOf(env, "dup-3", "e3")
      assert.deepStrictEqual(
        [cancelled._tag, (cancelled as { by?: string }).by, (cancelled as { cancellation?: Messages.Decision }).cancellation?.by],
        ["Cancelled", "operator", "alice"]
      )

      // The store and the tool runs.
      assert.deepStrictEqual(env.runs, [
        { tool: "send_email", params: { to: "ann@example.com", subject: "Your order shipped" } },
        { tool: "transfer", params: { amount: 500, to: "acct-9" } }
      ])
      const transfer = yield* statusOf(env, "refund-4", "t1")
      assert.strictEqual(transfer._tag, "Completed")
      assert.strictEqual((transfer as { editedArguments?: string }).editedArguments, JSON.stringify({ amount: 500, to: "acct-9" }))
      assert.strictEqual((transfer as { decision?: Messages.Decision }).decision?.by, "alice")
      const rejected = yield* statusOf(env, "cleanup-2", "d1")
      assert.strictEqual(rejected._tag, "Rejected")
      assert.strictEqual((rejected as { reason?: string }).reason, "never touch /etc")
      assert.strictEqual((rejected as { decision?: Messages.Decision }).decision?.by, "alice")

      // Back to the list: nothing waits any more.
      yield* step(() => page.goto(`${env.url}/`))
      yield* step(() => page.locator(".empty").waitFor())
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.scoped), { timeout: 90_000 })

  it.live("who may decide: who asked, only the buttons each person may use (four-eyes, a second yes) and a quorum of two, person by person in the page", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make({ pollInterval: "200 millis" })
      yield* env.seed("wire-1", [{ id: "w1", name: "wire_funds", arguments: { amount: 900, to: "acct-3" } }], "Wire 900 to account 3.", ["alice", "dave"])
      const { context } = yield* launch("alice")
      const problems: Array<string> = []
      /** A page signed in as `user` (the header set per page, over the context's). */
      const pageAs = (user: string) =>
        Effect.gen(function*() {
          const page = yield* step(() => context.newPage())
          yield* step(() => page.setExtraHTTPHeaders({ "x-test-user": user }))
          page.on("pageerror", (error) => problems.push(error.message))
          // The browser logs each refused decision's 403 itself; anything else logged as an error is a problem.
          page.on("console", (message) => message.type() === "error" && !message.text().includes("status of 403") && problems.push(message.text()))
          yield* step(() => page.goto(`${env.url}/c/wire-1`))
          assert.include(yield* step(() => page.locator("header").innerText()), user)
          return page
        })

      /** Presses Approve and returns the server's answer (the live region may be overwritten by a refresh since). */
      const approveIn = (page: Awaited<ReturnType<BrowserContext["newPage"]>>) =>
        step(async () => {
          const [response] = await Promise.all([
            page.waitForResponse((r) => r.url().endsWith("/calls/w1/decision")),
            page.click("form.approve button")
          ])
          return { status: response.status(), body: await response.json() as { _tag?: string; message?: string } }
        })

      // A requester sees who asked (both senders of the messages delivered together) and who may decide;
      // four-eyes keeps her from approving, so the page offers her no Approve, and says why.
      const alice = yield* pageAs("alice")
      assert.strictEqual(yield* step(() => alice.locator(".pending .requesters").innerText()), "Asked by: alice, dave")
      const who = yield* step(() => alice.locator(".pending .who-may").innerText())
      assert.include(who, "role finance")
      assert.include(who, "not who asked (alice, dave)")
      assert.strictEqual(yield* step(() => alice.locator(".pending .quorum").innerText()), "Approvals: 0 of 2")
      // A quorum approves the arguments as proposed: the page offers no edit.
      assert.strictEqual(yield* step(() => alice.locator("form.edit").count()), 0)
      assert.strictEqual(yield* step(() => alice.locator("form.approve").count()), 0)
      assert.include(yield* step(() => alice.locator(".pending .not-allowed").innerText()), "four-eyes")
      // She may still reject it (finance) or withdraw her own request.
      assert.strictEqual(yield* step(() => alice.locator("form.reject").count()), 1)
      assert.strictEqual(yield* step(() => alice.locator("form.cancel").count()), 1)
      yield* step(() => alice.screenshot({ path: join(output, "inbox-policy.png"), fullPage: true }))
      // dave asked too and holds no role: only Cancel (withdrawing his request).
      const dave = yield* pageAs("dave")
      assert.deepStrictEqual(yield* step(() => dave.locator("form.decide").evaluateAll((forms) => forms.map((form) => form.getAttribute("data-kind")))), ["cancel"])
      const untouched = yield* statusOf(env, "wire-1", "w1")
      assert.deepStrictEqual(untouched, { _tag: "AwaitingApproval", policy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 } })

      // Bob's yes is the first of two: the call waits, the page counts it and offers him no second yes.
      const bob = yield* pageAs("bob")
      assert.strictEqual((yield* approveIn(bob)).status, 200)
      yield* step(() => bob.locator(".pending .quorum", { hasText: "Approvals: 1 of 2 (bob)" }).waitFor())
      assert.strictEqual(yield* step(() => bob.locator("form.approve").count()), 0)
      assert.include(yield* step(() => bob.locator(".pending .not-allowed").innerText()), "already approved")
      const once = yield* statusOf(env, "wire-1", "w1")
      assert.strictEqual(once._tag, "AwaitingApproval")
      assert.deepStrictEqual((once as { votes?: ReadonlyArray<Messages.Vote> }).votes?.map((vote) => vote.by), ["bob"])
      assert.deepStrictEqual(env.runs, [])

      // Carol's yes completes the quorum: the call runs once, both votes on its record.
      const carol = yield* pageAs("carol")
      yield* step(() => carol.locator(".pending .quorum", { hasText: "1 of 2" }).waitFor())
      yield* step(() => carol.click("form.approve button"))
      yield* step(() => carol.locator(".call.status-Completed .decision", { hasText: "carol" }).waitFor())
      assert.deepStrictEqual(env.runs, [{ tool: "wire_funds", params: { amount: 900, to: "acct-3" } }])
      const done = yield* statusOf(env, "wire-1", "w1")
      assert.deepStrictEqual((done as { decision?: Messages.Decision }).decision?.votes?.map((vote) => vote.by), ["bob", "carol"])
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.scoped), { timeout: 90_000 })

  it.live("grants: a refused predicate shown inline, a grant made (the call on screen still waits), then revoked", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make({ pollInterval: "200 millis" })
      yield* env.seed("news-3", [{ id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "News" } }], "Send Ann the news.")
      const { context } = yield* launch("alice")
      const page: Awaited<ReturnType<BrowserContext["newPage"]>> = yield* step(() => context.newPage())
      const problems: Array<string> = []
      page.on("pageerror", (error) => problems.push(error.message))
      // The browser logs the refused grant's 422 itself; anything else logged as an error is a problem.
      page.on("console", (message) => message.type() === "error" && !message.text().includes("status of 422") && problems.push(message.text()))
      yield* step(() => page.goto(`${env.url}/c/news-3`))
      yield* step(() => page.fill("form.grant-new input[name=tool]", "send_email"))
      yield* step(() => page.fill("form.grant-new textarea", `{"path":["to"],"regex":".*"}`))
      yield* step(() => page.click("form.grant-new button"))
      yield* step(() => page.locator("form.grant-new .problems").filter({ hasText: "unknown operator" }).waitFor())
      yield* step(() => page.fill("form.grant-new textarea", `{"path":["to"],"equals":"ann@example.com"}`))
      yield* step(() => page.fill("form.grant-new input[name=reason]", "newsletter"))
      yield* step(() => page.click("form.grant-new button"))
      yield* step(() => page.locator(".grant.grant-live", { hasText: "newsletter" }).waitFor())
      // The call that was on screen when the grant was made still waits for a person.
      assert.strictEqual(yield* step(() => page.locator("form.approve").count()), 1)
      assert.strictEqual((yield* statusOf(env, "news-3", "e1"))._tag, "AwaitingApproval")
      yield* step(() => page.screenshot({ path: join(output, "inbox-grants.png"), fullPage: true }))
      yield* step(() => page.fill("form.grant-revoke input", "campaign over"))
      yield* step(() => page.click("form.grant-revoke button"))
      yield* step(() => page.locator(".grant.grant-revoked", { hasText: "revoked by alice" }).waitFor())
      const stored = Option.getOrThrow(yield* env.store.load("news-3")).messages
      const grant = stored.flatMap((m) => m.grants ?? [])
      assert.strictEqual(grant.length, 1)
      assert.deepStrictEqual(grant[0]!.where, { path: ["to"], equals: "ann@example.com" })
      assert.strictEqual(grant[0]!.scope?.conversation, "news-3")
      assert.strictEqual(grant[0]!.revoked?.reason, "campaign over")
      assert.deepStrictEqual(env.runs, [])
      assert.deepStrictEqual(problems, [])
    }).pipe(Effect.scoped), { timeout: 90_000 })
})
