/**
 * Safe defaults for time (issue 24, defect 7): a call made with the default
 * options never waits forever on a server that sends its headers and then
 * stalls. `generate` and each embeddings request are bounded by
 * `GoogleDefaults.totalTimeout`, a stream by `GoogleDefaults.idleTimeout`;
 * both are overridable, `false` turns them off. Real SDK, loopback replay
 * server; the defaults are checked on the TestClock (one millisecond short of
 * the default nothing happens, at the default the call fails), a short
 * override in real time.
 */
import { type ChatError, Messages } from "@chat-ts/core"
import { ReplayServer } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { withSleepProbe } from "../../openai/test/support/SleepProbe.js"
import { failsExactlyAt, waitsUnbounded } from "../../openai/test/support/Stalls.js"
import * as GoogleDefaults from "../src/GoogleDefaults.js"
import * as GoogleEmbeddings from "../src/GoogleEmbeddings.js"
import * as GoogleLanguageModel from "../src/GoogleLanguageModel.js"
import { clientLayer, request } from "./support/helpers.js"

const ask = request([Messages.user("Hello")])

/** A timeout option of the layers. */
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
    name: "generate",
    run: (server, timeouts) =>
      GoogleLanguageModel.make({ model: GoogleDefaults.model, ...timeouts }).pipe(
        Effect.provide(clientLayer(server)),
        Effect.flatMap((model) => model.generate(ask))
      )
  },
  {
    name: "embed",
    run: (server, timeouts) =>
      GoogleEmbeddings.make({
        model: GoogleDefaults.embeddingModel,
        ...(timeouts.totalTimeout === undefined ? {} : { totalTimeout: timeouts.totalTimeout })
      }).pipe(
        Effect.provide(clientLayer(server)),
        Effect.flatMap((model) => model.embed(["a cat"]))
      )
  }
]

/** A stream with nothing but the model id and `timeouts`. */
const stream = (server: ReplayServer.ReplayServer, timeouts: Timeouts) =>
  GoogleLanguageModel.make({ model: GoogleDefaults.model, ...timeouts }).pipe(
    Effect.provide(clientLayer(server)),
    Effect.flatMap((model) => Stream.runDrain(model.stream(ask)))
  )

describe("the defaults", () => {
  it("are 10 minutes for a whole non-streamed call and 5 minutes between two stream events", () => {
    expect(Duration.toMillis(GoogleDefaults.totalTimeout)).toBe(600_000)
    expect(Duration.toMillis(GoogleDefaults.idleTimeout)).toBe(300_000)
  })
})

describe.each(calls)("$name on a server that stalls after its headers", ({ run }) => {
  it.effect("fails with a NetworkError at GoogleDefaults.totalTimeout, not before, and closes the request", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make()
        server.enqueue(ReplayServer.hang())
        const error = yield* failsExactlyAt(probe, server, run(server, {}), GoogleDefaults.totalTimeout)
        expect(error._tag).toBe("NetworkError")
        expect(error.message).toContain("totalTimeout")
        expect(error.message).toContain("10m")
        expect(server.requests).toHaveLength(1)
      })
    ))

  it.live("fails after a shorter totalTimeout, in real time", () =>
    Effect.gen(function*() {
      const server = yield* ReplayServer.make()
      server.enqueue(ReplayServer.hang())
      const error = yield* Effect.flip(run(server, { totalTimeout: "300 millis" }))
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("totalTimeout")
      yield* server.waitForClientCloses(1)
    }))

  it.effect("with totalTimeout: false waits on (no timer is started)", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make()
        server.enqueue(ReplayServer.hang())
        yield* waitsUnbounded(probe, server, run(server, { totalTimeout: false }))
      })
    ))
})

describe("a stream on a server that stalls after its headers", () => {
  it.effect("fails with a NetworkError at GoogleDefaults.idleTimeout, not before; no total bound by default", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make()
        server.enqueue(ReplayServer.hang({ sse: true }))
        const error = yield* failsExactlyAt(probe, server, stream(server, {}), GoogleDefaults.idleTimeout)
        expect(error._tag).toBe("NetworkError")
        expect(error.message).toContain("idleTimeout")
        expect(error.message).toContain("5m")
      })
    ))

  it.effect("with idleTimeout: false waits on", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make()
        server.enqueue(ReplayServer.hang({ sse: true }))
        yield* waitsUnbounded(probe, server, stream(server, { idleTimeout: false }))
      })
    ))
})
