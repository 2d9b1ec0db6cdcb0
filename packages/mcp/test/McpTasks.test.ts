/**
 * Tools that can only run as tasks (`execution.taskSupport: "required"`, like the reference
 * "everything" server's `simulate-research-query`): offered, approved, then called through the MCP
 * tasks API (create, poll, result); a timeout or an interrupted turn sends `tasks/cancel`. The server is
 * a real process (support/everything.mjs), over stdio and Streamable HTTP; every wait is bounded.
 */
import { Messages, PauseReason } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Result, Schedule } from "effect"
import { McpChat, McpToolkit } from "../src/index.js"
import { everythingTransports } from "./support/servers.js"

const ask = Messages.fromUser("Research Python.")

interface Counts {
  readonly started: number
  readonly completed: number
  readonly cancelled: number
}

const counts = (server: McpToolkit.Service) =>
  Effect.map(server.call("stats", {}), (result) => JSON.parse((result.content[0] as { text: string }).text) as Counts)

/** Waits (at most 15 seconds) until the server's counts satisfy `done`. */
const until = (server: McpToolkit.Service, done: (counts: Counts) => boolean) =>
  counts(server).pipe(
    Effect.filterOrFail(done, () => new Error("not yet")),
    Effect.retry(Schedule.spaced(Duration.millis(20))),
    Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.fail(new Error("the server never reached the expected state")) })
  )

for (const [name, transport] of everythingTransports) {
  describe(`MCP tasks (${name})`, () => {
    it.live("a task-only tool is offered, approved, run as a task, and its result reaches the model", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const model = MockLanguageModel.make([
          MockLanguageModel.toolCalls([{ id: "r", name: "simulate-research-query", arguments: { topic: "python", stageMs: 20 } }]),
          MockLanguageModel.text("Done.")
        ])
        const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
        expect(chat.tools.map((tool) => tool.name)).toContain("simulate-research-query")
        const paused = yield* chat.complete(ask)
        expect(paused.outcome._tag === "Paused" && PauseReason.approvalIds(paused.outcome.reason)).toEqual(["r"])
        const approved = yield* chat.approve(paused.messages, "r")
        const result = yield* chat.resume(approved)
        expect(result.outcome._tag).toBe("Complete")
        const status = Messages.findTool(result.messages, "r")?.status
        expect(status).toMatchObject({ _tag: "Completed", result: { content: [{ type: "text", text: "# Research Report: python" }] } })
        expect(yield* counts(server)).toMatchObject({ started: 1, completed: 1, cancelled: 0 })
      }).pipe(Effect.scoped))

    it.live("a task past the call's timeout: McpCallTimeout (outcome unknown) and tasks/cancel reaches the server", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport, timeout: Duration.millis(300) })
        const result = yield* Effect.result(server.call("simulate-research-query", { topic: "slow", stageMs: 2_000 }))
        expect(Result.isFailure(result) && result.failure).toMatchObject({ _tag: "McpCallTimeout", outcome: "unknown" })
        yield* until(server, (c) => c.cancelled === 1)
        expect((yield* counts(server)).completed).toBe(0)
      }).pipe(Effect.scoped))

    it.live("interrupting a call that runs as a task cancels the task on the server", () =>
      Effect.gen(function*() {
        const server = yield* McpToolkit.make({ transport: yield* transport })
        const turn = yield* Effect.forkChild(server.call("simulate-research-query", { topic: "slow", stageMs: 2_000 }))
        yield* until(server, (c) => c.started === 1)
        yield* Fiber.interrupt(turn)
        yield* until(server, (c) => c.cancelled === 1)
      }).pipe(Effect.scoped))
  })
}
