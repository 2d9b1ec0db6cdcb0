/**
 * Scenario 4: reducer throughput. `Turn.step` alone (no Effect, no I/O) on
 * long turns: S steps, each the events the Chat shell sends for one tool call
 * (ModelResponded, Decided, ToolSucceeded, Resume), after a history of H
 * messages, then the final answer. Reported as events per second.
 */
import { Messages, Turn } from "@chat-ts/core"
import { type Budget, type Timing, timeTask } from "../harness.js"
import * as history from "../history.js"

export interface Config {
  readonly cases: ReadonlyArray<{ readonly steps: number; readonly history: number }>
  readonly budget: Budget
}

export interface Row {
  readonly steps: number
  readonly historyMessages: number
  readonly events: number
  readonly perTurn: Timing
  /** Events per second at the median. */
  readonly eventsPerSecond: number
  /** Median microseconds per event. */
  readonly usPerEvent: number
}

export interface Result {
  readonly rows: ReadonlyArray<Row>
}

const usage = { inputTokens: 10, outputTokens: 5 }

/** The events of a turn of `steps` tool steps and an answer, as the shell sends them. */
export const turnEvents = (steps: number): ReadonlyArray<Turn.Event> => {
  const events: Array<Turn.Event> = [Turn.Event.Resume({ now: 0 })]
  for (let i = 1; i <= steps; i++) {
    const id = `call_${i}`
    events.push(
      Turn.Event.ModelResponded({
        message: {
          role: "assistant",
          parts: [Messages.toolCall({ id, name: "noop", arguments: "{}" })],
          usage,
          finishReason: "tool-calls"
        }
      }),
      Turn.Event.Decided({ now: i, decisions: [{ id, decision: Turn.Decision.Execute() }] }),
      Turn.Event.ToolSucceeded({ id, result: { ok: true } }),
      Turn.Event.Resume({ now: i })
    )
  }
  events.push(Turn.Event.ModelResponded({
    message: { role: "assistant", parts: [Messages.text("Done.")], usage, finishReason: "stop" }
  }))
  return events
}

export const run = async (config: Config): Promise<Result> => {
  const rows: Array<Row> = []
  for (const { steps, history: size } of config.cases) {
    const start = [...history.toChatTs(history.entries(size)), Messages.user("Go.")]
    const events = turnEvents(steps)
    const turnConfig: Turn.Config = { maxSteps: steps + 1, waitForScheduled: false }
    const check = Turn.run(start, events, turnConfig)
    if (check[1]._tag !== "Complete") throw new Error(`the turn ended with ${check[1]._tag}`)
    const work = steps * Math.max(1, size + steps)
    const budget: Budget = {
      ...config.budget,
      iterations: Math.max(2, Math.floor(config.budget.iterations / Math.max(1, work / 20_000)))
    }
    const timing = await timeTask({ name: "turn", fn: () => Turn.run(start, events, turnConfig) }, budget)
    rows.push({
      steps,
      historyMessages: size,
      events: events.length,
      perTurn: timing,
      eventsPerSecond: Math.round(events.length / (timing.medianUs / 1e6)),
      usPerEvent: Math.round((timing.medianUs / events.length) * 1000) / 1000
    })
  }
  return { rows }
}
