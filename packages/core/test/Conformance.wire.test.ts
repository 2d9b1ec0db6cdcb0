/**
 * The pieces the conformance suite looks into request bodies with, and the
 * test kit's replay server on its own (without any SDK: `fetch`).
 */
import { ReplayServer } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Wire from "../src/testing/internal/wire.js"

describe("searching a request body", () => {
  const body = {
    messages: [
      { role: "tool", content: "{\"temperature\":21}" },
      { role: "assistant", tool_calls: [{ function: { arguments: "{\"city\":\"Paris\"}" } }] },
      { role: "user", content: [{ type: "text", text: "Rejected. Reason: not today" }] }
    ],
    tools: [{ parameters: { type: "object", properties: { city: {}, units: {} } } }]
  }

  it("finds a value as data or as JSON text in a string, and nothing else", () => {
    expect(Wire.containsValue(body, { temperature: 21 })).toBe(true)
    expect(Wire.containsValue(body, { city: "Paris" })).toBe(true)
    expect(Wire.containsValue(body, { city: "Pariss" })).toBe(false)
    expect(Wire.containsValue(body, { temperature: 21, extra: 1 })).toBe(false)
    expect(Wire.containsValue({ a: { city: "Paris" } }, { city: "Paris" })).toBe(true)
  })

  it("finds text inside strings, and schemas by their property names", () => {
    expect(Wire.containsText(body, "not today")).toBe(true)
    expect(Wire.containsText(body, "tomorrow")).toBe(false)
    expect(Wire.containsSchemaWith(body, ["units", "city"])).toBe(true)
    expect(Wire.containsSchemaWith(body, ["city"])).toBe(false)
  })

  it("stops walking at a depth of 64 (a hostile body cannot overflow the stack)", () => {
    let deep: unknown = "needle"
    for (let i = 0; i < 10_000; i++) deep = [deep]
    expect(Wire.containsText(deep, "needle")).toBe(false)
  })
})

describe("tools from example arguments", () => {
  it("derives a Schema that accepts the example and refuses another shape", () => {
    const example = { city: "Paris", days: 3, metric: true, tags: ["a"], limit: null, where: { lat: 1 } }
    const schema = Schema.Struct(Wire.fieldsOf(example))
    expect(Schema.decodeUnknownSync(schema)(example)).toEqual(example)
    expect(() => Schema.decodeUnknownSync(schema)({ ...example, days: "3" })).toThrow()
  })

  it("edits the first string, else the first number, else gives up", () => {
    expect(Wire.edited({ n: 1, city: "Paris" })).toEqual({ n: 1, city: "Paris (edited)" })
    expect(Wire.edited({ flag: true, n: 1 })).toEqual({ flag: true, n: 2 })
    expect(Wire.edited({ flag: true })).toBeUndefined()
  })
})

describe("SSE bodies", () => {
  const body = "event: a\ndata: {\"x\":1}\n\nevent: b\ndata: {\"y\":2}\n\ndata: [DONE]\n\n"

  it("counts events, takes the first ones, and breaks the first event's JSON", () => {
    expect(ReplayServer.eventCount(body)).toBe(3)
    expect(ReplayServer.firstEvents(body, 1)).toBe("event: a\ndata: {\"x\":1}\n\n")
    expect(ReplayServer.firstEvents(body.replace(/\n/g, "\r\n"), 2)).toBe("event: a\ndata: {\"x\":1}\n\nevent: b\ndata: {\"y\":2}\n\n")
    const broken = Wire.corruptFirstEvent(body)
    expect(broken.split("\n")[1]).toBe("data: {")
    expect(broken.endsWith("event: b\ndata: {\"y\":2}\n\ndata: [DONE]\n\n")).toBe(true)
  })
})

describe("ReplayServer", () => {
  it.live("serves queued replies in order on 127.0.0.1, records requests, answers 599 when empty", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make({ basePath: "/api" })
      expect(server.baseURL).toBe(`${server.url}/api`)
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      server.enqueue(ReplayServer.json({ ok: 1 }, { status: 201, headers: { "x-a": "b" } }), ReplayServer.sse("data: 1\n\n"))
      const first = yield* Effect.promise(() => fetch(`${server.baseURL}/x?y=1`, { method: "POST", body: JSON.stringify({ q: 1 }) }))
      expect([first.status, first.headers.get("x-a"), yield* Effect.promise(() => first.json())]).toEqual([201, "b", { ok: 1 }])
      const second = yield* Effect.promise(() => fetch(server.url, { method: "POST", body: "not json" }))
      expect(second.headers.get("content-type")).toBe("text/event-stream")
      expect(yield* Effect.promise(() => second.text())).toBe("data: 1\n\n")
      const third = yield* Effect.promise(() => fetch(server.url))
      expect(third.status).toBe(599)
      expect(server.requests.map((r) => [r.method, r.path, r.body])).toEqual([
        ["POST", "/api/x?y=1", { q: 1 }],
        ["POST", "/", "not json"],
        ["GET", "/", undefined]
      ])
      expect(server.pending()).toBe(0)
    }).pipe(Effect.scoped))

  it.live("a wait for a request that never comes dies after its bound, naming what it waited for", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      const exit = yield* Effect.exit(server.waitForRequests(1, 50))
      expect(Exit.isFailure(exit) && String(Exit.isFailure(exit) ? exit.cause : "")).toContain("1 request(s), got 0")
    }).pipe(Effect.scoped))

  it.live("a cut reply breaks the connection; a hanging one is closed by the client", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.cut("data: 1\n\n"), ReplayServer.hang({ sse: true, body: "data: 2\n\n" }))
      const cut = yield* Effect.promise(() => fetch(server.url).then((r) => r.text()).then(() => "ended", () => "broken"))
      expect(cut).toBe("broken")
      const controller = new AbortController()
      const response = yield* Effect.promise(() => fetch(server.url, { signal: controller.signal }))
      const reader = response.body!.getReader()
      const chunk = yield* Effect.promise(() => reader.read())
      expect(new TextDecoder().decode(chunk.value)).toBe("data: 2\n\n")
      controller.abort()
      yield* server.waitForClientCloses(1)
      expect(server.clientCloses()).toBe(1)
    }).pipe(Effect.scoped))
})
