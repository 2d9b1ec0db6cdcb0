/**
 * Safe defaults for time (issue 24, defect 7): a call made with the default
 * options never waits forever on a server that sends its headers and then
 * stalls. A non-streamed call (Chat Completions, Responses, a compatible
 * preset, embeddings) is bounded by `OpenAiDefaults.totalTimeout`, a stream by
 * `OpenAiDefaults.idleTimeout`; both are overridable, `false` turns them off.
 * Real SDK, loopback replay server; the defaults are checked on the
 * TestClock (the code's timers are on Effect's clock: one millisecond short
 * of the default nothing happens, at the default the call fails), a short
 * override in real time.
 */
import type { ChatError } from "@chat-ts/core"
import { Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as OpenAiChatCompletions from "../src/OpenAiChatCompletions.js"
import * as OpenAiCompatible from "../src/OpenAiCompatible.js"
import * as OpenAiDefaults from "../src/OpenAiDefaults.js"
import * as OpenAiEmbeddings from "../src/OpenAiEmbeddings.js"
import * as OpenAiResponses from "../src/OpenAiResponses.js"
import { clientLayer, request } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"
import { withSleepProbe } from "./support/SleepProbe.js"
import { failsExactlyAt, waitsUnbounded } from "./support/Stalls.js"

const ask = request([Messages.user("What is the capital of France?")])

/** A timeout option of every layer. */
interface Timeouts {
  readonly totalTimeout?: Duration.Input | false
  readonly idleTimeout?: Duration.Input | false
}

/** One non-streamed call, made with a layer built from nothing but its model id and `timeouts`. */
interface Call {
  readonly name: string
  readonly run: (server: ReplayServer.ReplayServer, timeouts: Timeouts) => Effect.Effect<unknown, ChatError.ModelError>
}

const calls: ReadonlyArray<Call> = [
  {
    name: "Chat Completions generate",
    run: (server, timeouts) =>
      OpenAiChatCompletions.make({ model: OpenAiDefaults.chatModel, ...timeouts }).pipe(
        Effect.provide(clientLayer(server)),
        Effect.flatMap((model) => model.generate(ask))
      )
  },
  {
    name: "Responses generate",
    run: (server, timeouts) =>
      OpenAiResponses.make({ model: OpenAiDefaults.chatModel, ...timeouts }).pipe(
        Effect.provide(clientLayer(server)),
        Effect.flatMap((model) => model.generate(ask))
      )
  },
  {
    name: "a compatible preset's generate (Ollama)",
    run: (server, timeouts) =>
      OpenAiChatCompletions.make({ model: "llama3.2", ...timeouts }).pipe(
        Effect.provide(OpenAiCompatible.layer("ollama", { baseURL: server.baseURL })),
        Effect.flatMap((model) => model.generate(ask))
      )
  },
  {
    name: "embed",
    run: (server, timeouts) =>
      OpenAiEmbeddings.make({
        model: OpenAiDefaults.embeddingModel,
        ...(timeouts.totalTimeout === undefined ? {} : { totalTimeout: timeouts.totalTimeout })
      }).pipe(
        Effect.provide(clientLayer(server)),
        Effect.flatMap((model) => model.embed(["a cat"]))
      )
  }
]

/** One stream, from a layer built from nothing but its model id and `timeouts`. */
interface Streamed {
  readonly name: string
  readonly run: (server: ReplayServer.ReplayServer, timeouts: Timeouts) => Effect.Effect<void, ChatError.ModelError>
}

const streams: ReadonlyArray<Streamed> = [
  {
    name: "Chat Completions stream",
    run: (server, timeouts) =>
      OpenAiChatCompletions.make({ model: OpenAiDefaults.chatModel, ...timeouts }).pipe(
        Effect.provide(clientLayer(server)),
        Effect.flatMap((model) => Stream.runDrain(model.stream(ask)))
      )
  },
  {
    name: "Responses stream",
    run: (server, timeouts) =>
      OpenAiResponses.make({ model: OpenAiDefaults.chatModel, ...timeouts }).pipe(
        Effect.provide(clientLayer(server)),
        Effect.flatMap((model) => Stream.runDrain(model.stream(ask)))
      )
  }
]

describe("the defaults", () => {
  it("are 10 minutes for a whole non-streamed call and 5 minutes between two stream events", () => {
    expect(Duration.toMillis(OpenAiDefaults.totalTimeout)).toBe(600_000)
    expect(Duration.toMillis(OpenAiDefaults.idleTimeout)).toBe(300_000)
  })
})

describe.each(calls)("$name on a server that stalls after its headers", ({ run }) => {
  it.effect("fails with a NetworkError at OpenAiDefaults.totalTimeout, not before, and closes the request", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang())
        const error = yield* failsExactlyAt(probe, server, run(server, {}), OpenAiDefaults.totalTimeout)
        expect(error._tag).toBe("NetworkError")
        expect(error.message).toContain("totalTimeout")
        expect(error.message).toContain("10m")
        expect(server.requests).toHaveLength(1)
      })
    ))

  it.live("fails after a shorter totalTimeout, in real time", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make
      server.enqueue(ReplayServer.hang())
      const started = Date.now()
      const error = yield* Effect.flip(run(server, { totalTimeout: "300 millis" }))
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("totalTimeout")
      expect(Date.now() - started).toBeGreaterThanOrEqual(250)
      yield* server.waitForClientCloses(1)
    }))

  it.effect("with totalTimeout: false waits on (no timer is started)", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang())
        yield* waitsUnbounded(probe, server, run(server, { totalTimeout: false }))
      })
    ))
})

describe.each(streams)("$name on a server that stalls after its headers", ({ run }) => {
  it.effect("fails with a NetworkError at OpenAiDefaults.idleTimeout, not before; no total bound by default", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang({ sse: true }))
        const error = yield* failsExactlyAt(probe, server, run(server, {}), OpenAiDefaults.idleTimeout)
        expect(error._tag).toBe("NetworkError")
        expect(error.message).toContain("idleTimeout")
        expect(error.message).toContain("5m")
      })
    ))

  it.effect("with idleTimeout: false and no totalTimeout waits on", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang({ sse: true }))
        yield* waitsUnbounded(probe, server, run(server, { idleTimeout: false }))
      })
    ))
})
