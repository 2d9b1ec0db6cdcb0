import { ConversationStore, Messages, Worker } from "@chat-ts/core"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Fixture from "./support/fixture.js"

const email = (id: string, to = "ann@example.com") => ({ id, name: "send_email", arguments: { to, subject: "hi" } })
const toAnn = { tool: "send_email", where: { path: ["to"], equals: "ann@example.com" }, expiresAfterMillis: 3_600_000, reason: "the weekly mail" }

const post = (
  env: Fixture.Env,
  path: string,
  body: unknown,
  options: { readonly user?: string; readonly ifMatch?: string; readonly csrf?: string | null } = {}
) =>
  Effect.gen(function*() {
    const user = options.user ?? "alice"
    const csrf = options.csrf === undefined ? yield* Fixture.csrfOf(env.url, user) : options.csrf
    return yield* Fixture.request(`${env.url}${path}`, {
      method: "POST",
      user,
      body,
      headers: { ...(csrf === null ? {} : { "x-csrf-token": csrf }), ...(options.ifMatch === undefined ? {} : { "if-match": options.ifMatch }) }
    })
  })

const load = (env: Fixture.Env, id: string) => Effect.map(env.store.load(id), Option.getOrThrow)

/** Appends a user message asking for `calls` and resumes the conversation as a worker would. */
const askAgain = (env: Fixture.Env, id: string, calls: ReadonlyArray<ReturnType<typeof email>>) =>
  Worker.resume(env.chat, id, (stored) => Effect.fromResult(Messages.append(stored.messages, Messages.user(Fixture.asking(calls))))).pipe(
    Effect.provideService(ConversationStore.ConversationStore, env.store)
  )

describe("the inbox: grants", () => {
  it.effect("a grant made in the inbox leaves the pending call pending and settles a later call it covers", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const seeded = yield* env.seed("c1", [email("e1")])
      const made = yield* post(env, "/api/conversations/c1/grants", { ...toAnn, id: "g1" }, { ifMatch: String(seeded.version) })
      assert.strictEqual(made.status, 200, made.text)
      expect(made.json.grant).toMatchObject({ id: "g1", tool: "send_email", conversation: "c1", by: "alice", live: true, reason: "the weekly mail" })
      expect(made.json.version).toBe(seeded.version + 1)
      // The call on screen when the grant was made still waits.
      const view = yield* Fixture.request(`${env.url}/api/conversations/c1`, { user: "alice" })
      expect(view.json.pending.map((p: { id: string }) => p.id)).toEqual(["e1"])
      expect(view.json.grants.map((g: { id: string }) => g.id)).toEqual(["g1"])
      assert.strictEqual(Messages.findTool((yield* load(env, "c1")).messages, "e1")!.status._tag, "AwaitingApproval")
      // A person decides e1; then the user asks for two more mails: the one to ann runs on the grant, the other waits.
      const decided = yield* post(env, "/api/conversations/c1/calls/e1/decision", { _tag: "Approve" })
      assert.strictEqual(decided.status, 200, decided.text)
      const result = yield* askAgain(env, "c1", [email("e2"), email("e3", "eve@example.com")])
      assert.strictEqual(result.outcome._tag, "Paused")
      const stored = yield* load(env, "c1")
      expect(Messages.findTool(stored.messages, "e2")!.status).toMatchObject({ _tag: "Completed", decision: { by: "alice", grant: "g1" } })
      assert.strictEqual(Messages.findTool(stored.messages, "e3")!.status._tag, "AwaitingApproval")
      expect(env.runs.map((r) => r.params)).toEqual([{ to: "ann@example.com", subject: "hi" }, { to: "ann@example.com", subject: "hi" }])
    }))

  it.effect("revoking: the grant is marked and settles nothing more; revoking again is 409, an unknown grant 404", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("c1", [email("e1")])
      assert.strictEqual((yield* post(env, "/api/conversations/c1/grants", { ...toAnn, id: "g1" })).status, 200)
      const revoked = yield* post(env, "/api/conversations/c1/grants/g1/revoke", { reason: "done" }, { user: "bob" })
      assert.strictEqual(revoked.status, 200, revoked.text)
      expect(revoked.json.grant).toMatchObject({ id: "g1", live: false, revoked: { by: "bob", reason: "done" } })
      const again = yield* post(env, "/api/conversations/c1/grants/g1/revoke", {})
      assert.strictEqual(again.status, 409)
      assert.strictEqual((yield* post(env, "/api/conversations/c1/grants/nope/revoke", {})).status, 404)
      yield* post(env, "/api/conversations/c1/calls/e1/decision", { _tag: "Reject" })
      const result = yield* askAgain(env, "c1", [email("e2")])
      assert.strictEqual(result.outcome._tag, "Paused")
      assert.strictEqual(Messages.findTool((yield* load(env, "c1")).messages, "e2")!.status._tag, "AwaitingApproval")
      expect(env.runs).toEqual([])
    }))

  it.effect("a grantor whose id is not canonical (an invisible soft hyphen in it) is refused with 422, storing nothing", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const seeded = yield* env.seed("c1", [email("e1")])
      const made = yield* post(env, "/api/conversations/c1/grants", { ...toAnn, id: "g1" }, { user: "alice\u00ad" })
      assert.strictEqual(made.status, 422, made.text)
      assert.strictEqual(made.json._tag, "InvalidGrant")
      assert.include(made.json.message, "is not a canonical id")
      assert.strictEqual((yield* load(env, "c1")).version, seeded.version)
    }))

  it.effect("refuses what cannot be a grant, and who may not grant, storing nothing", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      const seeded = yield* env.seed("c1", [email("e1")])
      const cases: ReadonlyArray<readonly [string, unknown, number, { readonly user?: string; readonly ifMatch?: string; readonly csrf?: string | null }?]> = [
        ["an unknown operator", { ...toAnn, where: { path: ["to"], regex: "." } }, 422],
        ["a predicate too deep", { ...toAnn, where: Array.from({ length: 20 }).reduce<unknown>((p) => ({ not: p }), { path: [], equals: 1 }) }, 422],
        ["a __proto__ step", { ...toAnn, where: { path: ["__proto__"], equals: 1 } }, 422],
        ["a bad tool pattern", { ...toAnn, tool: "send email" }, 422],
        ["no expiry", { tool: "send_email" }, 400],
        ["a zero expiry", { ...toAnn, expiresAfterMillis: 0 }, 400],
        ["a longer expiry than a year", { ...toAnn, expiresAfterMillis: 400 * 86_400_000 }, 400],
        ["a key twice in the body", `{"tool":"send_email","tool":"transfer","expiresAfterMillis":1000}`, 400],
        ["no CSRF token", toAnn, 403, { csrf: null }],
        ["bob granting transfer (the approver's policy)", { ...toAnn, tool: "transfer", where: undefined }, 403, { user: "bob" }],
        ["a stale If-Match", toAnn, 409, { ifMatch: String(seeded.version - 1) }]
      ]
      for (const [what, body, status, options] of cases) {
        const response = yield* post(env, "/api/conversations/c1/grants", body, options)
        assert.strictEqual(response.status, status, `${what}: ${response.text}`)
      }
      assert.strictEqual((yield* post(env, "/api/conversations/nobody/grants", toAnn)).status, 404)
      const after = yield* load(env, "c1")
      assert.strictEqual(after.version, seeded.version)
      expect(after.messages.some((m) => m.grants !== undefined)).toBe(false)
      // A duplicate id: the first is stored, the second refused with 409.
      assert.strictEqual((yield* post(env, "/api/conversations/c1/grants", { ...toAnn, id: "g1" })).status, 200)
      assert.strictEqual((yield* post(env, "/api/conversations/c1/grants", { ...toAnn, id: "g1" })).status, 409)
    }))
})
