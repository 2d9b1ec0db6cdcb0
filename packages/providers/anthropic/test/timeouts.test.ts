/**
 * Safe defaults for time (issue 24, defect 7): a call made with the default
 * options never waits forever on a server that sends its headers and then
 * stalls. `generate` is bounded by `AnthropicDefaults.totalTimeout`, a stream
 * by `AnthropicDefaults.idleTimeout`; both are overridable, `false` turns
 * them off. Real SDK, loopback replay server; the defaults are checked on the
 * TestClock (one millisecond short of the default nothing happens, at the
 * default the call fails), a short override in real time.
 */
import { Messages } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { withSleepProbe } from "../../openai/test/support/SleepProbe.js"
import { failsExactlyAt, waitsUnbounded } from "../../openai/test/support/Stalls.js"
import * as AnthropicDefaults from "../src/AnthropicDefaults.js"
import * as AnthropicLanguageModel from "../src/AnthropicLanguageModel.js"
import { clientLayer, request } from "./support/helpers.js"
import * as ReplayServer from "./support/ReplayServer.js"

const ask = request([Messages.user("Hello")])

/** The model with nothing but its id and `timeouts`. */
const claude = (
  server: ReplayServer.ReplayServer,
  timeouts: { readonly totalTimeout?: Duration.Input | false; readonly idleTimeout?: Duration.Input | false }
) => AnthropicLanguageModel.make({ model: AnthropicDefaults.model, ...timeouts }).pipe(Effect.provide(clientLayer(server)))

describe("the defaults", () => {
  it("are 10 minutes for a whole generate call and 5 minutes between two stream events", () => {
    expect(Duration.toMillis(AnthropicDefaults.totalTimeout)).toBe(600_000)
    expect(Duration.toMillis(AnthropicDefaults.idleTimeout)).toBe(300_000)
  })
})

describe("generate on a server that stalls after its headers", () => {
  it.effect("fails with a NetworkError at AnthropicDefaults.totalTimeout, not before, and closes the request", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang())
        const model = yield* claude(server, {})
        const error = yield* failsExactlyAt(probe, server, model.generate(ask), AnthropicDefaults.totalTimeout)
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
      const model = yield* claude(server, { totalTimeout: "300 millis" })
      const error = yield* Effect.flip(model.generate(ask))
      expect(error._tag).toBe("NetworkError")
      expect(error.message).toContain("totalTimeout")
      yield* server.waitForClientCloses(1)
    }))

  it.effect("with totalTimeout: false waits on (no timer is started)", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang())
        const model = yield* claude(server, { totalTimeout: false })
        yield* waitsUnbounded(probe, server, model.generate(ask))
      })
    ))
})

describe("a stream on a server that stalls after its headers", () => {
  it.effect("fails with a NetworkError at AnthropicDefaults.idleTimeout, not before; no total bound by default", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang({ sse: true }))
        const model = yield* claude(server, {})
        const error = yield* failsExactlyAt(probe, server, Stream.runDrain(model.stream(ask)), AnthropicDefaults.idleTimeout)
        expect(error._tag).toBe("NetworkError")
        expect(error.message).toContain("idleTimeout")
        expect(error.message).toContain("5m")
      })
    ))

  it.effect("with idleTimeout: false waits on", () =>
    withSleepProbe((probe) =>
      Effect.gen(function*() {
        const server = yield* ReplayServer.make
        server.enqueue(ReplayServer.hang({ sse: true }))
        const model = yield* claude(server, { idleTimeout: false })
        yield* waitsUnbounded(probe, server, Stream.runDrain(model.stream(ask)))
      })
    ))
})
