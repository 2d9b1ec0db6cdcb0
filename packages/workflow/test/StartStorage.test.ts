/**
 * `start` when the workflow engine's storage fails: `effect/cluster`'s engine (on an in-memory
 * cluster) over a message storage that refuses every request, as a runner cut off from its
 * database does, then recovers. The start fails typed (a retryable `StoreError`, no connection
 * string in it); started again, the turn is the same execution, run once.
 */
import { ChatError, ConversationStore, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import { PersistenceError } from "effect/cluster/ClusterError"
import * as MessageStorage from "effect/cluster/MessageStorage"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import * as RunnerStorage from "effect/cluster/RunnerStorage"
import * as Sharding from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import { ChatWorkflow } from "../src/index.js"
import { eventually, handlers, recorder, turns } from "./fixtures.js"

/** Whether the storage is cut off, how it refuses a request then, and how many it refused. */
interface Cut {
  on: boolean
  refused: number
  readonly refuse: () => Effect.Effect<never, PersistenceError>
}

/** In-memory message storage that refuses every request (`cut.refuse()`) while `cut.on`. */
const flakyStorage = (cut: Cut) =>
  Layer.effect(
    MessageStorage.MessageStorage,
    Effect.map(MessageStorage.MemoryDriver, ({ storage }) => ({
      ...storage,
      saveRequest: (envelope) =>
        Effect.suspend(() => {
          if (!cut.on) return storage.saveRequest(envelope)
          cut.refused++
          return cut.refuse()
        })
    } satisfies MessageStorage.MessageStorage["Service"]))
  ).pipe(Layer.provideMerge(MessageStorage.MemoryDriver.layer))

/** `effect/cluster`'s workflow engine on one in-memory runner over `flakyStorage`. */
const engine = (cut: Cut) =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(Sharding.layer),
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(flakyStorage(cut)),
    Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer())
  )

/** The storage's failure as `effect/cluster` raises it, over a driver's error that names its connection string (kept out of the typed error). */
const refusedConnection = () =>
  Effect.fail(
    new PersistenceError({
      cause: new Error("connect ECONNREFUSED 127.0.0.1:5432", {
        cause: new Error("while connecting to postgres://app:s3cret@127.0.0.1:5432/app")
      })
    })
  )

const ask = Messages.fromUser("List the logs.")

describe("ChatWorkflow.start when the engine's storage fails", () => {
  it.effect("fails with a retryable StoreError; started again once it is back, the same execution runs once", () => {
    const cut: Cut = { on: true, refused: 0, refuse: refusedConnection }
    const rec = recorder()
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "c1", name: "list_files", arguments: { folder: "logs" } }]),
      MockLanguageModel.text("Two logs.")
    ])
    return Effect.gen(function*() {
      const expected = yield* turns.executionId("conv-cut", ask)
      const refused = yield* Effect.flip(turns.start("conv-cut", ask))
      expect(refused).toBeInstanceOf(ChatError.StoreError)
      expect(refused.retryable).toBe(true)
      expect(ChatError.isRetryableStoreError(refused)).toBe(true)
      expect(refused.detail).toContain("connect ECONNREFUSED 127.0.0.1:5432")
      expect(refused.detail).not.toContain("s3cret")
      expect(refused.detail).not.toContain("postgres://")
      expect(cut.refused).toBeGreaterThan(0)
      expect(model.requests).toHaveLength(0)

      cut.on = false
      const id = yield* turns.start("conv-cut", ask)
      expect(id).toBe(expected)
      const view = yield* eventually(turns.read(id), (view) => view.status._tag === "Complete")
      expect(Messages.textOf(view.messages.at(-1)!)).toBe("Two logs.")
      // Started once more after it ended: still that execution, nothing run again.
      expect(yield* turns.start("conv-cut", ask)).toBe(id)
      yield* eventually(Effect.succeed(rec.calls.length), (n) => n === 1)
      expect(rec.calls.map((call) => call.name)).toEqual(["list_files"])
      expect(model.requests).toHaveLength(2)
    }).pipe(
      Effect.provide(
        ChatWorkflow.layer(turns).pipe(
          Layer.provideMerge(Layer.mergeAll(engine(cut), ConversationStore.layerMemory, model.layer, handlers(rec)))
        )
      )
    )
  })

  it.effect("any other defect of the engine's storage stays a defect", () => {
    const bug = new Error("a bug in the storage")
    const cut: Cut = { on: true, refused: 0, refuse: () => Effect.die(bug) }
    const rec = recorder()
    const model = MockLanguageModel.make([MockLanguageModel.text("unused")])
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(turns.start("conv-bug", ask))
      expect(cut.refused).toBeGreaterThan(0)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(Cause.hasFails(exit.cause)).toBe(false)
        expect(Cause.pretty(exit.cause)).toContain("a bug in the storage")
      }
      expect(model.requests).toHaveLength(0)
    }).pipe(
      Effect.provide(
        ChatWorkflow.layer(turns).pipe(
          Layer.provideMerge(Layer.mergeAll(engine(cut), ConversationStore.layerMemory, model.layer, handlers(rec)))
        )
      )
    )
  })
})
