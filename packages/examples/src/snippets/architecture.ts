// Architecture: the pure reducer, driven by hand.
// #region imports
import { Messages, Turn } from "@chat-ts/core"
import { Result } from "effect"
// #endregion imports

/** Walks one turn through the reducer; returns the outcome of each step. */
export const walkthrough = (): ReadonlyArray<string> => {
  const seen: Array<string> = []
  // #region step
  const config: Turn.Config = { maxSteps: 10, waitForScheduled: false }

  // A new turn: the reducer asks for a model call.
  let [messages, outcome] = Turn.step(Messages.fromUser("Delete the old logs."), Turn.Event.Resume({ now: 0 }), config)
  seen.push(outcome._tag) // "CallModel"

  // The model answered with a tool call: the reducer asks for decisions.
  ;[messages, outcome] = Turn.step(messages, Turn.Event.ModelResponded({
    message: Messages.assistant([Messages.toolCall({ id: "c1", name: "delete_files", arguments: `{"paths":["a.log"]}` })])
  }), config)
  seen.push(outcome._tag) // "Decide"

  // The strategy wants a person: the turn pauses.
  ;[messages, outcome] = Turn.step(messages, Turn.Event.Decided({
    now: 0,
    decisions: [{ id: "c1", decision: Turn.Decision.RequireApproval({}) }]
  }), config)
  seen.push(outcome._tag) // "Pause"

  // A person approves; resuming starts the call.
  messages = Result.getOrThrow(Messages.approve(messages, "c1"))
  ;[messages, outcome] = Turn.step(messages, Turn.Event.Resume({ now: 1_000 }), config)
  seen.push(outcome._tag) // "RunTools"

  // The tool's result: the model is called again with it.
  ;[messages, outcome] = Turn.step(messages, Turn.Event.ToolSucceeded({ id: "c1", result: { deleted: 1 } }), config)
  seen.push(outcome._tag) // "CallModel"
  // #endregion step
  return seen
}
