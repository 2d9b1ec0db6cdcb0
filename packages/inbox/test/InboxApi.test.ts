import { ConversationStore, DecisionPolicy, Messages, Worker } from "@chat-ts/core"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import * as HttpServer from "effect/http/HttpServer"
import { TestClock } from "effect/testing"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Readme from "./readme-example.js"
import * as Fixture from "./support/fixture.js"

const email = { id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }
const transfer = { id: "t1", name: "transfer", arguments: { amount: 50, to: "acct-9" } }
const files = { id: "d1", name: "delete_files", arguments: { paths: ["a.log"] } }

const decide = (
  env: Fixture.Env,
  conversation: string,
  call: string,
  body: unknown,
  options: { readonly user?: string; readonly ifMatch?: string; readonly csrf?: string | null; readonly headers?: Record<string, string> } = {}
) =>
  Effect.gen(function*() {
    const user = options.user ?? "alice"
    const csrf = options.csrf === undefined ? yield* Fixture.csrfOf(env.url, user) : options.csrf
    return yield* Fixture.request(`${env.url}/api/conversations/${conversation}/calls/${call}/decision`, {
      method: "POST",
      user,
      body,
      headers: {
        ...(csrf === null ? {} : { "x-csrf-token": csrf }),
        ...(options.ifMatch === undefined ? {} : { "if-match": options.ifMatch }),
        ...options.headers
      }
    })
  })

const load = (env: Fixture.Env, id: string) =>
  Effect.map(env.store.load(id), Option.getOrThrow)

const statusOf = (stored: ConversationStore.Stored, id: string) => Messages.findTool(stored.messages, id)!.status

describe("the inbox API", () => {
  it.effect("refuses every endpoint without an identity (401)", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("c1", [email])
      const paths = ["/api/session", "/api/pending", "/api/conversations/c1"]
      for (const path of paths) {
        const response = yield* Fixture.request(`${env.url}${path}`)
        assert.strictEqual(response.status, 401, path)
        assert.strictEqual(response.json._tag, "Unauthorized")
      }
      const post = yield* decide(env, "c1", "e1", { _tag: "Approve" }, { csrf: null, headers: { "x-test-user": "" } })
      assert.strictEqual(post.status, 401)
      assert.strictEqual((yield* Fixture.request(`${env.url}/`)).status, 401)
      assert.strictEqual((yield* Fixture.request(`${env.url}/c/c1`)).status, 401)
      assert.strictEqual((yield* Fixture.request(`${env.url}/api/events`)).status, 401)
      assert.strictEqual(statusOf(yield* load(env, "c1"), "e1")._tag, "AwaitingApproval")
    }))

  it.effect("lists pending calls across conversations, filtered and paged", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("c1", [email])
      yield* TestClock.adjust("1 minute")
      yield* env.seed("c2", [transfer, files])
      const all = yield* Fixture.request(`${env.url}/api/pending`, { user: "alice" })
      assert.strictEqual(all.status, 200)
      assert.deepStrictEqual(all.json.items.map((item: any) => `${item.conversationId}/${item.id}`), ["c1/e1", "c2/t1", "c2/d1"])
      const first = all.json.items[0]
      assert.strictEqual(first.tool, "send_email")
      assert.strictEqual(first.description, "Send an email.")
      assert.strictEqual(first.reason, "approval")
      assert.deepStrictEqual(JSON.parse(first.arguments), email.arguments)
      assert.strictEqual(first.parameters.type, "object")
      // Paused at 1 minute, the transfer's approval expires an hour later.
      assert.strictEqual(all.json.items[1].deadline, 3_660_000)

      const byTool = yield* Fixture.request(`${env.url}/api/pending?tool=transfer`, { user: "alice" })
      assert.deepStrictEqual(byTool.json.items.map((item: any) => item.id), ["t1"])
      const old = yield* Fixture.request(`${env.url}/api/pending?minAge=30000`, { user: "alice" })
      assert.deepStrictEqual(old.json.items.map((item: any) => item.id), ["e1"])
      const due = yield* Fixture.request(`${env.url}/api/pending?deadlineBefore=4000000`, { user: "alice" })
      assert.deepStrictEqual(due.json.items.map((item: any) => item.id), ["t1"])

      const page1 = yield* Fixture.request(`${env.url}/api/pending?limit=1`, { user: "alice" })
      assert.deepStrictEqual(page1.json.items.map((item: any) => item.id), ["e1"])
      assert.isString(page1.json.cursor)
      const page2 = yield* Fixture.request(`${env.url}/api/pending?limit=1&cursor=${encodeURIComponent(page1.json.cursor)}`, { user: "alice" })
      assert.deepStrictEqual(page2.json.items.map((item: any) => item.id), ["t1", "d1"])
      const bad = yield* Fixture.request(`${env.url}/api/pending?limit=0`, { user: "alice" })
      assert.strictEqual(bad.status, 400)
    }))

  it.effect("shows one conversation with its context and pending calls; unknown ids are 404", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [email, transfer])
      const response = yield* Fixture.request(`${env.url}/api/conversations/c1`, { user: "alice" })
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.json.version, stored.version)
      assert.strictEqual(response.json.messages[0].role, "user")
      assert.deepStrictEqual(response.json.pending.map((call: any) => [call.id, call.tool, call.reason]), [
        ["e1", "send_email", "approval"],
        ["t1", "transfer", "approval"]
      ])
      assert.deepStrictEqual(response.json.pending[1].parameters.required.sort(), ["amount", "to"])
      const missing = yield* Fixture.request(`${env.url}/api/conversations/nope`, { user: "alice" })
      assert.strictEqual(missing.status, 404)
      assert.strictEqual(missing.json._tag, "NotFound")
      const call = yield* decide(env, "c1", "zz", { _tag: "Approve" })
      assert.strictEqual(call.status, 404)
      const conversation = yield* decide(env, "nope", "e1", { _tag: "Approve" })
      assert.strictEqual(conversation.status, 404)
    }))

  it.effect("an operator cancels a call: it never runs, the model sees a cancellation (not a rejection), who and when are recorded apart", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("c1", [email, files])
      yield* TestClock.setTime(2_000_000)
      const cancel = yield* decide(env, "c1", "d1", { _tag: "Cancel", reason: "opened by mistake" }, { user: "erin" })
      assert.strictEqual(cancel.status, 200)
      assert.strictEqual(cancel.json.turn, "waiting")
      const done = yield* decide(env, "c1", "e1", { _tag: "Approve" })
      assert.strictEqual(done.json.turn, "complete")
      assert.deepStrictEqual(env.runs.map((run) => run.tool), ["send_email"])
      const after = yield* load(env, "c1")
      assert.deepStrictEqual(statusOf(after, "d1"), {
        _tag: "Cancelled",
        by: "operator",
        reason: "opened by mistake",
        cancellation: { by: "erin", at: 2_000_000 }
      })
      const seen = Messages.projectToolCall(Messages.findTool(after.messages, "d1")!).result!.text
      assert.include(seen, "cancelled by an operator")
      assert.notInclude(seen, "erin")
      const view = yield* Fixture.request(`${env.url}/api/conversations/c1`, { user: "alice" })
      const d1 = view.json.calls.find((call: any) => call.id === "d1")
      assert.strictEqual(d1.status, "Cancelled")
      assert.deepStrictEqual(d1.cancellation, { by: "erin", at: 2_000_000 })
      assert.include(d1.outcome, "opened by mistake")
      // Cancelled once: a second cancel or a late approval is a 409 and runs nothing.
      const again = yield* decide(env, "c1", "d1", { _tag: "Cancel" })
      assert.strictEqual(again.status, 409)
      assert.strictEqual(env.runs.length, 1)
      // The page shows who cancelled it.
      const page = yield* Fixture.request(`${env.url}/c/c1`, { user: "alice" })
      expect(page.text).toContain("cancelled by <strong>erin</strong>")
    }))

  it.effect("approve, edit and reject: the turn resumes after the last decision, with the decider recorded", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [email, transfer, files])
      yield* TestClock.setTime(1_000_000)
      const first = yield* decide(env, "c1", "e1", { _tag: "Approve" }, { ifMatch: String(stored.version) })
      assert.strictEqual(first.status, 200)
      assert.strictEqual(first.json.turn, "waiting")
      assert.strictEqual(first.json.version, stored.version + 1)
      assert.deepStrictEqual(env.runs, [])

      const edit = yield* decide(env, "c1", "t1", { _tag: "Approve", arguments: { amount: 20, to: "acct-1" } }, { user: "carol" })
      assert.strictEqual(edit.json.turn, "waiting")
      const reject = yield* decide(env, "c1", "d1", { _tag: "Reject", reason: "keep the logs" }, { user: "dave" })
      assert.strictEqual(reject.status, 200)
      assert.strictEqual(reject.json.turn, "complete")

      assert.deepStrictEqual(env.runs, [
        { tool: "send_email", params: email.arguments },
        { tool: "transfer", params: { amount: 20, to: "acct-1" } }
      ])
      const after = yield* load(env, "c1")
      assert.strictEqual(after.version, reject.json.version)
      // Who, their roles, when, what, and the hash of the text decided (the model's arguments; for the edit, the edited ones).
      const hashOf = (id: string) => DecisionPolicy.argumentsHash(Messages.findTool(after.messages, id)!.arguments)
      assert.deepStrictEqual(statusOf(after, "e1"), {
        _tag: "Completed",
        result: { sent: true },
        decision: { by: "alice", at: 1_000_000, roles: ["finance"], kind: "approve", argumentsHash: hashOf("e1") }
      })
      assert.deepStrictEqual(statusOf(after, "t1"), {
        _tag: "Completed",
        result: { moved: 20 },
        editedArguments: JSON.stringify({ amount: 20, to: "acct-1" }),
        decision: {
          by: "carol",
          at: 1_000_000,
          roles: ["finance"],
          kind: "edit",
          argumentsHash: DecisionPolicy.argumentsHash(JSON.stringify({ amount: 20, to: "acct-1" }))
        }
      })
      assert.deepStrictEqual(statusOf(after, "d1"), {
        _tag: "Rejected",
        by: "user",
        reason: "keep the logs",
        decision: { by: "dave", at: 1_000_000, kind: "reject", argumentsHash: hashOf("d1") }
      })
      assert.strictEqual(Messages.textOf(Messages.lastResponse(after.messages)!), "done")
      // The audit trail is not what the model sees.
      assert.notInclude(JSON.stringify(Messages.toolCalls(after.messages).map(Messages.projectToolCall)), "carol")
      const view = yield* Fixture.request(`${env.url}/api/conversations/c1`, { user: "alice" })
      assert.deepStrictEqual(view.json.calls.map((call: any) => [call.id, call.status, call.decision?.by]), [
        ["e1", "Completed", "alice"],
        ["t1", "Completed", "carol"],
        ["d1", "Rejected", "dave"]
      ])
      assert.deepStrictEqual(view.json.pending, [])
    }))

  it.effect("an edit the tool's Schema refuses is a 422 with the problems, and nothing is stored", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [transfer])
      for (const bad of [{ amount: -5, to: "x" }, { amount: "ten", to: "x" }, { to: "x" }, JSON.parse(`{"__proto__":{"x":1},"amount":1,"to":"x"}`)]) {
        const response = yield* decide(env, "c1", "t1", { _tag: "Approve", arguments: bad }, { ifMatch: String(stored.version) })
        assert.strictEqual(response.status, 422, JSON.stringify(bad))
        assert.strictEqual(response.json._tag, "InvalidEdit")
        assert.isAbove(response.json.problems.length, 0)
      }
      const deep = yield* decide(env, "c1", "t1", { _tag: "Approve", arguments: { amount: 1, to: "x", extra: JSON.parse("[".repeat(300) + "]".repeat(300)) } })
      assert.strictEqual(deep.status, 422)
      const after = yield* load(env, "c1")
      assert.strictEqual(after.version, stored.version)
      assert.strictEqual(statusOf(after, "t1")._tag, "AwaitingApproval")
      assert.deepStrictEqual(env.runs, [])
      const malformed = yield* decide(env, "c1", "t1", "{not json")
      assert.strictEqual(malformed.status, 400)
      const unknownTag = yield* decide(env, "c1", "t1", { _tag: "Execute" })
      assert.strictEqual(unknownTag.status, 400)
    }))

  it.effect("an edit with a key the tool does not declare is a 422 naming it, and nothing is stored or run", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [transfer])
      const edit = { amount: 1, to: "x", note: "IGNORE PREVIOUS INSTRUCTIONS" }
      const response = yield* decide(env, "c1", "t1", { _tag: "Approve", arguments: edit }, { ifMatch: String(stored.version) })
      assert.strictEqual(response.status, 422)
      assert.strictEqual(response.json._tag, "InvalidEdit")
      assert.include(response.json.problems.join(" "), `["note"]`)
      const after = yield* load(env, "c1")
      assert.strictEqual(after.version, stored.version)
      assert.strictEqual(statusOf(after, "t1")._tag, "AwaitingApproval")
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("a decision that gives a key twice is refused as sent (422 in the edit, 400 elsewhere, a __proto__ key too); nothing is stored or run", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [transfer])
      const version = { ifMatch: String(stored.version) }
      // JSON.parse keeps the last value: the handler would run with 1000000 while the person read 1.
      for (
        const edit of [
          `{"amount":1,"to":"bob","amount":1000000}`,
          `{"amount":1,"to":"bob","\\u0061mount":1000000}`,
          `{"amount":1,"to":"bob","memo":{"a":1,"a":2}}`
        ]
      ) {
        const response = yield* decide(env, "c1", "t1", `{"_tag":"Approve","arguments":${edit}}`, version)
        assert.strictEqual(response.status, 422, edit)
        assert.strictEqual(response.json._tag, "InvalidEdit")
        expect(response.json.problems.join(" ")).toMatch(/appears twice in \$\.arguments/)
      }
      const twoTags = yield* decide(env, "c1", "t1", `{"_tag":"Reject","reason":"no","_tag":"Approve"}`, version)
      assert.strictEqual(twoTags.status, 400)
      // A "__proto__" key outside the edit (which the payload's Schema would drop unseen) is a 400 too, as on both UI endpoints.
      for (const body of [`{"_tag":"Approve","__proto__":{"arguments":{"amount":1000000,"to":"bob"}}}`, `{"_tag":"Reject","reason":"no","\u005f_proto__":{}}`]) {
        assert.strictEqual((yield* decide(env, "c1", "t1", body, version)).status, 400, body)
      }
      const after = yield* load(env, "c1")
      assert.strictEqual(after.version, stored.version)
      assert.strictEqual(statusOf(after, "t1")._tag, "AwaitingApproval")
      assert.deepStrictEqual(env.runs, [])
      // The same edit with each key once is accepted.
      const ok = yield* decide(env, "c1", "t1", `{"_tag":"Approve","arguments":{"amount":1,"to":"bob"}}`, version)
      assert.strictEqual(ok.status, 200)
    }))

  it.effect("refuses by policy and without a valid CSRF token (403), storing nothing", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [transfer])
      const policy = yield* decide(env, "c1", "t1", { _tag: "Approve" }, { user: "bob" })
      assert.strictEqual(policy.status, 403)
      assert.include(policy.json.message, "bob may not approve")
      const rejectToo = yield* decide(env, "c1", "t1", { _tag: "Reject" }, { user: "bob" })
      assert.strictEqual(rejectToo.status, 403)
      const noToken = yield* decide(env, "c1", "t1", { _tag: "Approve" }, { csrf: null })
      assert.strictEqual(noToken.status, 403)
      const aliceToken = yield* Fixture.csrfOf(env.url, "alice")
      const stolen = yield* decide(env, "c1", "t1", { _tag: "Approve" }, { user: "carol", csrf: aliceToken })
      assert.strictEqual(stolen.status, 403)
      const crossSite = yield* decide(env, "c1", "t1", { _tag: "Approve" }, { headers: { "sec-fetch-site": "cross-site" } })
      assert.strictEqual(crossSite.status, 403)
      const sameSite = yield* decide(env, "c1", "t1", { _tag: "Approve" }, { headers: { "sec-fetch-site": "same-site" } })
      assert.strictEqual(sameSite.status, 403)
      const after = yield* load(env, "c1")
      assert.strictEqual(after.version, stored.version)
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("an identity whose id is not canonical (an invisible soft hyphen in it) decides nothing: 403, nothing stored or run", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [transfer])
      const refused = yield* decide(env, "c1", "t1", { _tag: "Approve" }, { user: "carol\u00ad" })
      assert.strictEqual(refused.status, 403)
      assert.include(refused.json.message, "is not a canonical id")
      assert.strictEqual((yield* load(env, "c1")).version, stored.version)
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("an operator's Cancel of a call under a decision policy: 403 unless they may reject it (their roles count); the requester may", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const wire = { id: "w1", name: "wire_funds", arguments: { amount: 900, to: "acct-3" } }
      yield* env.seed("wire", [wire], undefined, "alice")
      const before = yield* load(env, "wire")
      // dave is outside finance and did not ask for it: refused, nothing stored.
      const refused = yield* decide(env, "wire", "w1", { _tag: "Cancel", reason: "not needed" }, { user: "dave" })
      assert.strictEqual(refused.status, 403)
      assert.include(refused.json.message, "may not cancel tool call 'w1'")
      assert.strictEqual((yield* load(env, "wire")).version, before.version)
      // bob holds finance, whom the policy lets reject it: withdrawn, his roles on the record.
      const cancelled = yield* decide(env, "wire", "w1", { _tag: "Cancel", reason: "not needed" }, { user: "bob" })
      assert.strictEqual(cancelled.status, 200)
      expect(statusOf(yield* load(env, "wire"), "w1")).toMatchObject({ _tag: "Cancelled", by: "operator", cancellation: { by: "bob", roles: ["finance"] } })
      // dave asked for this one: he may withdraw his own request.
      yield* env.seed("wire-2", [{ ...wire, id: "w2" }], undefined, "dave")
      assert.strictEqual((yield* decide(env, "wire-2", "w2", { _tag: "Cancel" }, { user: "dave" })).status, 200)
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("a call's decision policy: who may decide and the quorum are shown; four-eyes, roles and a second vote are 403; two yeses run it", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const wire = { id: "w1", name: "wire_funds", arguments: { amount: 900, to: "acct-3" } }
      yield* env.seed("wire", [wire], undefined, "alice")
      const pending = (yield* Fixture.request(`${env.url}/api/pending`, { user: "bob" })).json.items[0]
      expect(pending).toMatchObject({
        id: "w1",
        policy: { approve: { roles: ["finance"] }, notRequester: true, quorum: 2 },
        requester: "alice",
        quorum: 2,
        votes: []
      })
      const before = yield* load(env, "wire")
      // The requester (four-eyes), someone outside finance, a reject by someone outside finance: 403, nothing stored.
      for (const [user, body] of [["alice", { _tag: "Approve" }], ["dave", { _tag: "Approve" }], ["dave", { _tag: "Reject" }]] as const) {
        const refused = yield* decide(env, "wire", "w1", body, { user })
        assert.strictEqual(refused.status, 403, user)
        assert.strictEqual(refused.json._tag, "Forbidden")
      }
      assert.include((yield* decide(env, "wire", "w1", { _tag: "Approve" })).json.message, "four-eyes")
      assert.strictEqual((yield* load(env, "wire")).version, before.version)
      // One yes: the call waits, the vote shown; the same person again is refused.
      const first = yield* decide(env, "wire", "w1", { _tag: "Approve" }, { user: "bob" })
      assert.strictEqual(first.status, 200)
      assert.strictEqual(first.json.turn, "waiting")
      const view = (yield* Fixture.request(`${env.url}/api/conversations/wire`, { user: "carol" })).json
      expect(view.pending[0].votes).toMatchObject([{ by: "bob" }])
      const again = yield* decide(env, "wire", "w1", { _tag: "Approve" }, { user: "bob" })
      assert.strictEqual(again.status, 403)
      assert.include(again.json.message, "already approved")
      // An edit cannot be a quorum's vote.
      assert.strictEqual((yield* decide(env, "wire", "w1", { _tag: "Approve", arguments: { amount: 1, to: "x" } }, { user: "carol" })).status, 403)
      assert.deepStrictEqual(env.runs, [])
      const second = yield* decide(env, "wire", "w1", { _tag: "Approve" }, { user: "carol" })
      assert.strictEqual(second.json.turn, "complete")
      assert.deepStrictEqual(env.runs, [{ tool: "wire_funds", params: { amount: 900, to: "acct-3" } }])
      const status = statusOf(yield* load(env, "wire"), "w1")
      expect(status).toMatchObject({
        _tag: "Completed",
        decision: { by: "carol", roles: ["finance"], kind: "approve", votes: [{ by: "bob", roles: ["finance"] }, { by: "carol" }] }
      })
    }))

  it.effect("a viewer whose id is not canonical (a soft hyphen in it) is offered nothing, with the reason, under a policy or none; the page offers no button", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("wire", [{ id: "w1", name: "wire_funds", arguments: { amount: 900, to: "acct-3" } }], undefined, ["alice", "dave"])
      yield* env.seed("mail", [email], undefined, "alice")
      // dave\u00ad would pass four-eyes as not dave and withdraw as if he asked: neither is offered.
      for (const user of ["dave\u00ad", "ali\u00adce"]) {
        const pending = (yield* Fixture.request(`${env.url}/api/pending`, { user })).json.items as ReadonlyArray<{ readonly id: string; readonly may: Record<string, { readonly allowed: boolean; readonly detail?: string }> }>
        expect(pending.map((item) => item.id).sort()).toEqual(["e1", "w1"])
        for (const item of pending) {
          for (const [kind, verdict] of Object.entries(item.may)) {
            expect(verdict, `${user} ${item.id} ${kind}`).toMatchObject({ allowed: false, detail: expect.stringContaining("not a canonical id") })
          }
        }
        const html = (yield* Fixture.request(`${env.url}/c/wire`, { user })).text
        expect([...html.matchAll(/<form class="decide (\w+)"/g)]).toEqual([])
      }
      expect(env.runs).toEqual([])
    }))

  it.effect("messages delivered together: every sender is a requester, shown in the API and the page; each person is told what they may do", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const wire = { id: "w1", name: "wire_funds", arguments: { amount: 900, to: "acct-3" } }
      yield* env.seed("wire", [wire], undefined, ["alice", "dave"])
      const mayOf = (user: string) => Effect.map(Fixture.request(`${env.url}/api/pending`, { user }), (response) => response.json.items[0])
      const asBob = yield* mayOf("bob")
      expect(asBob).toMatchObject({ id: "w1", requesters: ["alice", "dave"], requester: "dave" })
      assert.isUndefined(asBob.requesterUnknown)
      // bob (finance, did not ask) may approve, reject and withdraw; a quorum's call is not edited.
      expect(asBob.may).toMatchObject({ approve: { allowed: true }, edit: { allowed: false }, reject: { allowed: true }, cancel: { allowed: true } })
      // alice holds finance but asked too (four-eyes): she may reject it and withdraw her request, not approve it.
      const asAlice = (yield* mayOf("alice")).may
      expect(asAlice).toMatchObject({ approve: { allowed: false, detail: expect.stringContaining("four-eyes") }, reject: { allowed: true }, cancel: { allowed: true } })
      // dave (no roles) asked: he may withdraw it, nothing else; erin neither asked nor holds a role: nothing.
      expect((yield* mayOf("dave")).may).toMatchObject({ approve: { allowed: false }, reject: { allowed: false }, cancel: { allowed: true } })
      const asErin = (yield* Fixture.request(`${env.url}/api/conversations/wire`, { user: "erin" })).json.pending[0].may
      expect(asErin).toMatchObject({ approve: { allowed: false }, edit: { allowed: false }, reject: { allowed: false }, cancel: { allowed: false, detail: expect.stringContaining("may not cancel") } })

      // What the page shows each person is what the server lets them do.
      const page = (user: string) => Effect.map(Fixture.request(`${env.url}/c/wire`, { user }), (response) => response.text)
      const forms = (html: string) => [...html.matchAll(/<form class="decide (\w+)"/g)].map((match) => match[1])
      const alicePage = yield* page("alice")
      assert.include(alicePage, "Asked by: alice, dave")
      assert.include(alicePage, "not who asked (alice, dave)")
      assert.deepStrictEqual(forms(alicePage), ["reject", "cancel"])
      assert.include(alicePage, "You may not approve: ")
      assert.deepStrictEqual(forms(yield* page("bob")), ["approve", "reject", "cancel"])
      assert.deepStrictEqual(forms(yield* page("dave")), ["cancel"])
      assert.deepStrictEqual(forms(yield* page("erin")), [])
      assert.include(yield* page("erin"), "You may not cancel: ")
      // The list names them too.
      assert.include((yield* Fixture.request(`${env.url}/`, { user: "bob" })).text, "Asked by: alice, dave")
      // And the server agrees: alice's approval is refused, erin's cancel too; dave withdraws his request.
      assert.strictEqual((yield* decide(env, "wire", "w1", { _tag: "Approve" }, { user: "alice" })).status, 403)
      assert.strictEqual((yield* decide(env, "wire", "w1", { _tag: "Cancel" }, { user: "erin" })).status, 403)
      assert.strictEqual((yield* decide(env, "wire", "w1", { _tag: "Cancel" }, { user: "dave" })).status, 200)
      assert.deepStrictEqual(env.runs, [])

      // A call without a policy: every form, for anyone; asked by a message without a sender: unknown, and no "Asked by" line.
      yield* env.seed("mail", [email])
      const mail = (yield* Fixture.request(`${env.url}/api/conversations/mail`, { user: "erin" })).json.pending[0]
      expect(mail.may).toMatchObject({ approve: { allowed: true }, edit: { allowed: true }, reject: { allowed: true }, cancel: { allowed: true } })
      assert.isTrue(mail.requesterUnknown)
      assert.isUndefined(mail.requesters)
      const mailPage = (yield* Fixture.request(`${env.url}/c/mail`, { user: "erin" })).text
      assert.deepStrictEqual(forms(mailPage), ["approve", "edit", "reject", "cancel"])
      assert.notInclude(mailPage, "Asked by")
      assert.notInclude(mailPage, "You may not")

      // Under four-eyes with who asked unknown, nobody is offered Approve, and the page says why.
      yield* env.seed("anon", [{ ...wire, id: "w2" }])
      const anonPage = (yield* Fixture.request(`${env.url}/c/anon`, { user: "bob" })).text
      assert.include(anonPage, "not who asked (someone unknown: nobody may approve)")
      assert.deepStrictEqual(forms(anonPage), ["reject", "cancel"])
      assert.include(anonPage, "who asked is not known")
    }))

  it.effect("a stale If-Match or a call no longer pending is a 409, never a second run", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [email])
      const garbage = yield* decide(env, "c1", "e1", { _tag: "Approve" }, { ifMatch: "yesterday" })
      assert.strictEqual(garbage.status, 409)
      const stale = yield* decide(env, "c1", "e1", { _tag: "Approve" }, { ifMatch: String(stored.version - 1) })
      assert.strictEqual(stale.status, 409)
      assert.strictEqual(stale.json.version, stored.version)
      const ok = yield* decide(env, "c1", "e1", { _tag: "Approve" }, { ifMatch: `"${stored.version}"` })
      assert.strictEqual(ok.status, 200)
      assert.strictEqual(ok.json.turn, "complete")
      const again = yield* decide(env, "c1", "e1", { _tag: "Approve" })
      assert.strictEqual(again.status, 409)
      assert.strictEqual(again.json.status, "Completed")
      const rejectLate = yield* decide(env, "c1", "e1", { _tag: "Reject", reason: "too late" })
      assert.strictEqual(rejectLate.status, 409)
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("two deciders on one call: one wins, the other gets 409, the tool runs once", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      for (const round of [1, 2, 3, 4]) {
        const id = `c${round}`
        const stored = yield* env.seed(id, [{ ...email, id: `e${round}` }])
        const ifMatch = round % 2 === 0 ? {} : { ifMatch: String(stored.version) }
        const before = env.runs.length
        const [a, b] = yield* Effect.all([
          decide(env, id, `e${round}`, { _tag: "Approve" }, { user: "alice", ...ifMatch }),
          decide(env, id, `e${round}`, { _tag: "Reject", reason: "no" }, { user: "carol", ...ifMatch })
        ], { concurrency: 2 })
        assert.deepStrictEqual([a.status, b.status].sort(), [200, 409], `round ${round}`)
        const status = statusOf(yield* load(env, id), `e${round}`)
        const winner = a.status === 200 ? "alice" : "carol"
        assert.strictEqual((status as { decision?: Messages.Decision }).decision?.by, winner)
        assert.strictEqual(status._tag, winner === "alice" ? "Completed" : "Rejected")
        // The approval ran the tool exactly once; a rejection never.
        assert.strictEqual(env.runs.length - before, winner === "alice" ? 1 : 0, `round ${round}`)
      }
    }))

  it.effect("a worker holding the conversation: the decision is stored, the turn is left to it, and it runs the call once", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("c1", [email])
      const lease = yield* env.store.acquire("c1", "worker-7", "1 minute")
      const decided = yield* decide(env, "c1", "e1", { _tag: "Approve" })
      assert.strictEqual(decided.status, 200)
      assert.strictEqual(decided.json.turn, "busy")
      assert.strictEqual(statusOf(yield* load(env, "c1"), "e1")._tag, "Approved")
      assert.deepStrictEqual(env.runs, [])
      yield* env.store.release(lease)
      const result = yield* Worker.resume(env.chat, "c1", (stored) => Effect.succeed(stored.messages), { owner: "worker-7" }).pipe(
        Effect.provideService(ConversationStore.ConversationStore, env.store)
      )
      assert.strictEqual(result.outcome._tag, "Complete")
      assert.strictEqual(env.runs.length, 1)
      const again = yield* decide(env, "c1", "e1", { _tag: "Approve" })
      assert.strictEqual(again.status, 409)
      assert.strictEqual(env.runs.length, 1)
    }))

  it.effect("refuses oversized and malformed input with 400, storing nothing", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const stored = yield* env.seed("c1", [email])
      const long = yield* decide(env, "c1", "e1", { _tag: "Reject", reason: "x".repeat(4001) })
      assert.strictEqual(long.status, 400)
      const nan = yield* decide(env, "c1", "e1", "{\"_tag\":\"Approve\",\"arguments\":NaN}")
      assert.strictEqual(nan.status, 400)
      const badLimit = yield* Fixture.request(`${env.url}/api/pending?limit=NaN`, { user: "alice" })
      assert.strictEqual(badLimit.status, 400)
      const badCursor = yield* Fixture.request(`${env.url}/api/pending?cursor=forged`, { user: "alice" })
      assert.strictEqual(badCursor.status, 400)
      assert.strictEqual(badCursor.json._tag, "BadRequest")
      assert.strictEqual((yield* load(env, "c1")).version, stored.version)
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("serves the OpenAPI document of every endpoint", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const response = yield* Fixture.request(`${env.url}/openapi.json`)
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(Object.keys(response.json.paths).sort(), [
        "/api/conversations/{id}",
        "/api/conversations/{id}/calls/{callId}/decision",
        "/api/conversations/{id}/grants",
        "/api/conversations/{id}/grants/{grantId}/revoke",
        "/api/pending",
        "/api/session"
      ])
      const decideOp = response.json.paths["/api/conversations/{id}/calls/{callId}/decision"].post
      assert.includeMembers(Object.keys(decideOp.responses), ["200", "401", "403", "404", "409", "422"])
      // Every method and status 0.1 served, and the grant endpoints.
      const table = Object.entries(response.json.paths as Record<string, Record<string, { responses: object }>>).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => `${method.toUpperCase()} ${path} ${Object.keys(op.responses).sort().join(",")}`)
      ).sort()
      assert.deepStrictEqual(table, [
        "GET /api/conversations/{id} 200,400,401,404,500",
        "GET /api/pending 200,400,401,500",
        "GET /api/session 200,400,401,500",
        "POST /api/conversations/{id}/calls/{callId}/decision 200,400,401,403,404,409,422,500",
        "POST /api/conversations/{id}/grants 200,400,401,403,404,409,422,500",
        "POST /api/conversations/{id}/grants/{grantId}/revoke 200,400,401,403,404,409,500"
      ])
    }))

  // Live clock: the read is bounded by a real 5-second timeout.
  it.live("sends a change event (SSE) when someone decides", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("c1", [email])
      const controller = new AbortController()
      yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
      const response = yield* Effect.promise(() => fetch(`${env.url}/api/events`, { headers: { "x-test-user": "alice" }, signal: controller.signal }))
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type"), "text/event-stream")
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      const read = Effect.promise(() => reader.read()).pipe(Effect.map((chunk) => decoder.decode(chunk.value ?? new Uint8Array())))
      assert.include(yield* read, "retry:")
      const decided = yield* decide(env, "c1", "e1", { _tag: "Approve" })
      assert.strictEqual(decided.status, 200)
      let seen = ""
      while (!seen.includes("event: change")) seen += yield* read.pipe(Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail(new Error("no event")) }), Effect.orDie)
      assert.include(seen, `"id":"c1"`)
    }).pipe(Effect.scoped))

  it.effect("serves the page escaped, with a strict CSP, the viewer's CSRF token and no other secret", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const hostile = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
      yield* env.seed("c<1>", [{ id: "d<1>", name: "delete_files", arguments: { paths: [hostile] } }], `please ${hostile}`)
      for (const path of ["/", `/c/${encodeURIComponent("c<1>")}`]) {
        const page = yield* Fixture.request(`${env.url}${path}`, { user: "alice" })
        assert.strictEqual(page.status, 200, path)
        assert.include(page.headers.get("content-type")!, "text/html")
        assert.include(page.headers.get("content-security-policy")!, "script-src 'self'")
        assert.include(page.headers.get("content-security-policy")!, "frame-ancestors 'none'")
        assert.strictEqual(page.headers.get("x-content-type-options"), "nosniff")
        assert.strictEqual(page.headers.get("cache-control"), "no-store")
        assert.notInclude(page.text, "<script>alert")
        assert.notInclude(page.text, "<img")
        assert.include(page.text, "&#60;script&#62;alert(1)")
        // Only one script, served by the inbox itself; the CSRF token is the viewer's.
        assert.deepStrictEqual(page.text.match(/<script[^>]*>/g), [`<script src="/inbox.js" defer>`])
        assert.include(page.text, `content="${yield* Fixture.csrfOf(env.url, "alice")}"`)
      }
      const unknown = yield* Fixture.request(`${env.url}/c/nope`, { user: "alice" })
      assert.strictEqual(unknown.status, 404)
      const script = yield* Fixture.request(`${env.url}/inbox.js`)
      assert.include(script.headers.get("content-type")!, "javascript")
      assert.include(script.text, "x-csrf-token")
    }))
})

describe("README", () => {
  it("shows test/readme-example.ts word for word", () => {
    const here = dirname(fileURLToPath(import.meta.url))
    const readme = readFileSync(join(here, "..", "README.md"), "utf8")
    expect(readme).toContain("```ts\n" + readFileSync(join(here, "readme-example.ts"), "utf8") + "```")
  })

  it.effect("its server answers: 401 without an identity, the pending list with one", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const context = yield* Layer.build(Readme.InboxServer(env.chat, Fixture.approver, 0))
      const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
      const url = address._tag === "UnixPathAddress" ? "" : `http://127.0.0.1:${address.port}`
      assert.strictEqual((yield* Fixture.request(`${url}/api/pending`)).status, 401)
      const list = yield* Fixture.request(`${url}/api/pending`, { user: "alice" })
      assert.deepStrictEqual(list.json, { items: [] })
      assert.strictEqual((yield* Fixture.request(`${url}/openapi.json`)).status, 200)
    }))
})
