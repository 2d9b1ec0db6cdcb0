/**
 * Shadow mode: the candidate strategy decides beside the enforced one, every
 * comparison is counted and logged, and nothing the candidate does (fail,
 * throw, hang, return garbage) changes what runs or when.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Logger, Metric, Queue, References } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import * as Strategy from "../src/chat/internal/strategy.js"
import { Action, Chat, Messages, Shadow, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { checkProperty, DeleteFiles, fileHandlers, files, ListFiles, ReadFile, ran, recorder, statusOf } from "./support/Chat.helpers.js"

const ask = Messages.fromUser("Clean up the logs.")

/** The model lists the folder and deletes two logs in one response, then answers. */
const script = () => [
  MockLanguageModel.toolCalls([
    { id: "c1", name: "list_files", arguments: { folder: "logs" } },
    { id: "c2", name: "delete_files", arguments: { paths: ["a.log", "b.log"] } }
  ]),
  MockLanguageModel.text("Done.")
]

type Tools = typeof files.tools

/** Runs one turn with `candidate` shadowing `files`' own strategy; comparisons go to the queue too. */
const runShadowed = (candidate: Toolkit.Strategy<Tools>, options: Shadow.Options = {}) =>
  Effect.gen(function*() {
    const comparisons = yield* Queue.unbounded<Shadow.Comparison>()
    const rec = recorder()
    const model = MockLanguageModel.make(script())
    const tools = files.pipe(Shadow.shadow(candidate, { ...options, onComparison: (c) => Queue.offer(comparisons, c) }))
    const chat = yield* Chat.make({ tools }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
    const result = yield* chat.complete(ask)
    return { comparisons, rec, result }
  })

/** The next `n` comparisons, sorted by call id: the candidate runs in the background, so let it run (a bounded wait). */
const take = (queue: Queue.Queue<Shadow.Comparison>, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000 && (yield* Queue.size(queue)) < n; i++) yield* Effect.yieldNow
    expect(yield* Queue.size(queue), `${n} comparisons`).toBe(n)
    const all = yield* Queue.takeN(queue, n)
    return [...all].sort((a, b) => a.callId.localeCompare(b.callId))
  })

/** How many comparisons the counter holds with these attributes. */
const count = (attributes: Record<string, string>) =>
  Effect.map(Metric.value(Metric.withAttributes(Shadow.decisions, attributes)), (state) => state.count)

const freshMetrics = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Metric.MetricRegistry, new Map())

describe("Shadow", () => {
  it.effect("agreements and disagreements are counted and logged; what runs is the enforced strategy's", () =>
    freshMetrics(Effect.gen(function*() {
      const logs: Array<{ level: string; message: string; annotations: Record<string, unknown> }> = []
      const logger = Logger.make(({ logLevel, message, fiber }) =>
        void logs.push({
          level: logLevel,
          message: String(Array.isArray(message) ? message[0] : message),
          annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
        })
      )
      // The candidate would ask a person for everything.
      const { comparisons, rec, result } = yield* runShadowed(() => Action.RequireApproval(), { name: "ask-all" }).pipe(
        Effect.provide(Logger.layer([logger])),
        Effect.provideService(References.MinimumLogLevel, "Debug")
      )
      const [listed, deleted] = yield* take(comparisons, 2)
      expect(listed).toEqual({
        shadow: "ask-all",
        tool: "list_files",
        callId: "c1",
        enforced: "Execute",
        candidate: "RequireApproval",
        outcome: "disagree"
      })
      expect(deleted).toMatchObject({ callId: "c2", enforced: "RequireApproval", candidate: "RequireApproval", outcome: "agree" })
      // The enforced strategy decided: the read ran, the write waits.
      expect(ran(rec)).toEqual(["list_files"])
      expect(statusOf(result.messages, "c2")).toBe("AwaitingApproval")
      const common = { shadow: "ask-all", candidate: "RequireApproval" }
      expect(yield* count({ ...common, tool: "list_files", enforced: "Execute", outcome: "disagree" })).toBe(1)
      expect(yield* count({ ...common, tool: "delete_files", enforced: "RequireApproval", outcome: "agree" })).toBe(1)
      const disagreement = logs.find((log) => log.message.includes("disagrees"))
      expect(disagreement?.level).toBe("Info")
      expect(disagreement?.annotations).toMatchObject({ tool: "list_files", callId: "c1", enforced: "Execute", outcome: "disagree" })
      expect(logs.find((log) => log.message.startsWith("The shadow strategy agrees"))).toMatchObject({ level: "Debug", annotations: { callId: "c2" } })
    })))

  it.effect("a candidate that fails, throws or returns no action is reported and ignored", () =>
    freshMetrics(Effect.gen(function*() {
      const broken: ReadonlyArray<[Toolkit.Strategy<Tools>, string]> = [
        [() => Effect.die("the candidate broke"), "Failed"],
        [() => {
          throw new Error("a bug in the candidate")
        }, "Failed"],
        [() => ({ _tag: "Maybe" }) as unknown as Action.Action, "Invalid"]
      ]
      const levels: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => {
        if (String(Array.isArray(message) ? message[0] : message).includes("no decision")) levels.push(logLevel)
      })
      for (const [candidate, tag] of broken) {
        const { comparisons, rec, result } = yield* runShadowed(candidate).pipe(Effect.provide(Logger.layer([logger])))
        const [listed, deleted] = yield* take(comparisons, 2)
        expect([listed!.candidate, deleted!.candidate]).toEqual([tag, tag])
        expect(listed!.outcome).toBe(tag === "Failed" ? "failed" : "disagree")
        expect(ran(rec)).toEqual(["list_files"])
        expect(statusOf(result.messages, "c2")).toBe("AwaitingApproval")
      }
      expect(yield* count({ shadow: "candidate", tool: "list_files", enforced: "Execute", candidate: "Failed", outcome: "failed" }))
        .toBe(2)
      // The two failing candidates, two calls each, logged at Warning; the invalid one is a disagreement (Info).
      expect(levels).toEqual(["Warn", "Warn", "Warn", "Warn"])
    })))

  it.effect("a slow candidate never delays the turn; past its timeout (5 seconds by default) it is counted as timed out", () =>
    freshMetrics(Effect.gen(function*() {
      const slow = () => Effect.as(Effect.sleep("1 hour"), Action.Execute())
      // The turn ends without the clock moving: nothing waited for the candidate.
      const { comparisons, rec, result } = yield* runShadowed(slow)
      expect(result.outcome._tag).toBe("Paused")
      expect(ran(rec)).toEqual(["list_files"])
      expect(yield* Queue.size(comparisons)).toBe(0)
      yield* TestClock.adjust("5 seconds")
      const timedOut = yield* take(comparisons, 2)
      expect(timedOut.map((c) => c.outcome)).toEqual(["timed-out", "timed-out"])
      expect(timedOut.map((c) => c.candidate)).toEqual(["TimedOut", "TimedOut"])

      // With a longer timeout it is compared once it answers.
      const patient = yield* runShadowed(() => Effect.as(Effect.sleep("10 seconds"), Action.Execute()), { timeout: "1 minute" })
      yield* TestClock.adjust("10 seconds")
      const answered = yield* take(patient.comparisons, 2)
      expect(answered.map((c) => c.outcome)).toEqual(["agree", "disagree"])
    })))

  it.effect("a toolkit without a strategy keeps running every call; the candidate is still compared", () =>
    freshMetrics(Effect.gen(function*() {
      const comparisons = yield* Queue.unbounded<Shadow.Comparison>()
      const kit = Toolkit.make(ListFiles, DeleteFiles, ReadFile)
      const tools = Shadow.shadow(kit, () => Action.Reject({ reason: "tighter" }), { onComparison: (c) => Queue.offer(comparisons, c) })
      const rec = recorder()
      const model = MockLanguageModel.make(script())
      const chat = yield* Chat.make({ tools }).pipe(Effect.provide(Layer.merge(model.layer, fileHandlers(rec))))
      const result = yield* chat.complete(ask)
      expect(result.outcome._tag).toBe("Complete")
      expect(ran(rec)).toEqual(["list_files", "delete_files"])
      const all = yield* take(comparisons, 2)
      expect(all.map((c) => [c.enforced, c.candidate, c.outcome])).toEqual([
        ["Execute", "Reject", "disagree"],
        ["Execute", "Reject", "disagree"]
      ])
    })))

  it.effect("property: the enforced decision is the same with or without a shadow, whatever either strategy does", () =>
    freshMetrics(Effect.gen(function*() {
      const behaviours: ReadonlyArray<() => Action.Action | Effect.Effect<Action.Action>> = [
        () => Action.Execute(),
        () => Action.RequireApproval({ expiresAt: 5_000 }),
        () => Action.RequireApproval({ review: { verdict: "needs-person", reason: "r" } }),
        () => Action.Defer({ after: "1 minute" }),
        () => Action.Defer({ after: Number.NaN }),
        () => Action.Reject({ reason: "no" }),
        () => Effect.succeed(Action.Execute()),
        () => Effect.as(Effect.sleep("1 hour"), Action.Execute()),
        () => Effect.die("broken"),
        () => {
          throw new Error("thrown")
        },
        () => ({ _tag: "Maybe" }) as unknown as Action.Action,
        () => null as unknown as Action.Action
      ]
      const pick = fc.integer({ min: 0, max: behaviours.length - 1 })
      const call = Messages.toolCall({ id: "c1", name: "delete_files", arguments: "{\"paths\":[\"a.log\"]}" })
      const decide = (kit: Toolkit.Any) =>
        Strategy.decide<never>({ tool: DeleteFiles, kit }, call, 1_000, "delete_files").pipe(Effect.timeoutOption(Duration.minutes(2)))
      yield* checkProperty(fc.tuple(pick, pick, fc.boolean()), ([enforced, candidate, withStrategy]) =>
        Effect.gen(function*() {
          const base = Toolkit.make(DeleteFiles)
          const kit = withStrategy ? base.pipe(Toolkit.withStrategy(behaviours[enforced]!)) : base
          const shadowed = kit.pipe(Shadow.shadow(behaviours[candidate]!))
          const plain = yield* Effect.forkChild(decide(kit))
          const beside = yield* Effect.forkChild(decide(shadowed))
          yield* TestClock.adjust("1 hour")
          expect(yield* Fiber.join(beside)).toEqual(yield* Fiber.join(plain))
        }).pipe(Effect.provide(Logger.layer([]))), { numRuns: 100 })
    })))
})
