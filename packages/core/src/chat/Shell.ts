/**
 * For shell authors: what every shell around `Turn.step` needs besides its
 * own way of running things. `Chat` is one shell (it runs a turn in a fiber);
 * `@chat-ts/workflow` is another (it records each piece of work durably).
 * Both take from here:
 *
 * - `Steps`: the work one outcome asks for (call the model, ask the
 *   strategies, run one call), done the way `Chat` does it (`chat.steps`);
 * - `start`: the `Resume` a turn starts with (approved edits checked, calls
 *   left running by a worker that died started again when they may);
 * - `failureOf`: the error an outcome that ends a turn badly becomes, and
 *   `defectFailure`, the error of a handler that died;
 * - to record decisions and model errors: `Turn.DecisionSchema` (with
 *   `Turn.validDecision`), `ChatError.ModelError`; the calls to look at:
 *   `Messages.lastCalls`.
 *
 * A loop over `Turn.step` that uses these keeps every rule of the reducer and
 * ends the way `Chat` does.
 *
 * @since 0.3.0
 */
import type * as Effect from "effect/Effect"
import * as ChatError from "../data/ChatError.js"
import type * as Grant from "../turn/GrantRules.js"
import type * as Messages from "../turn/Messages.js"
import * as Turn from "../turn/Turn.js"

/**
 * The work one outcome of `Turn.step` asks for, done the way `Chat` does it,
 * for shells that record each piece on its own (`@chat-ts/workflow`).
 *
 * @category models
 * @since 0.3.0
 */
export interface Steps<R = never> {
  /** For `CallModel`: calls the model (system prompt, tools and model options of the chat) and returns its response. */
  readonly callModel: (messages: Messages.Messages, step: number) => Effect.Effect<Messages.Message, ChatError.ModelError>
  /**
   * For `Decide`: asks the strategies about the proposed calls at `now` (failing closed like `Chat`);
   * with `messages` (those of the `Decide` outcome) the strategies see the grants covering each call,
   * for a turn acting for `context` (send it as `Decided`'s `grants`).
   */
  readonly decide: (
    calls: ReadonlyArray<Messages.ToolCallPart>,
    now: number,
    messages?: Messages.Messages,
    context?: Grant.Context
  ) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly decision: Turn.Decision }>, never, R>
  /** For `RunTools`: runs one started call; its result event, and the detail of a handler's defect. */
  readonly runTool: (
    messages: Messages.Messages,
    call: Messages.ToolCallPart
  ) => Effect.Effect<{ readonly event: Turn.Event; readonly defect: string | undefined }>
  /** The approved edits of the messages that do not match their tools (for `Resume`'s `invalidEdits`). */
  readonly checkEdits: (messages: Messages.Messages) => ReadonlyArray<Turn.InvalidEdit>
  /** The calls left running whose tool is idempotent and may start again (for `Resume`'s `rerun`). */
  readonly rerunnable: (messages: Messages.Messages) => ReadonlyArray<string>
}

/**
 * The event a turn starts (or resumes) with, at `now`: `Resume` with the approved edits of the
 * messages that do not match their tools (the turn stops with `InvalidEdits`) and the calls left
 * running that may start again (the others fail as interrupted).
 *
 * @category utils
 * @since 0.3.0
 */
export const start = (
  steps: Pick<Steps<unknown>, "checkEdits" | "rerunnable">,
  messages: Messages.Messages,
  now: number
): Turn.Event => Turn.Event.Resume({ now, invalidEdits: steps.checkEdits(messages), rerun: steps.rerunnable(messages) })

/**
 * The outcomes that end a turn with an error.
 *
 * @category models
 * @since 0.3.0
 */
export type FailedOutcome = Extract<Turn.Outcome, { readonly _tag: "StepLimit" | "InvalidEdits" | "PendingCalls" | "InputLimit" }>

/**
 * The errors those outcomes become (see `failureOf`).
 *
 * @category models
 * @since 0.3.0
 */
export type OutcomeFailure =
  | ChatError.StepLimitReached
  | ChatError.InvalidEditedArguments
  | ChatError.PendingToolCalls
  | ChatError.InputRestartLimitReached

/**
 * The error an outcome that ends a turn badly becomes, carrying `messages` (the state the outcome
 * came with): `StepLimitReached`; `InvalidEditedArguments` naming the first refused edit and
 * detailing every one; `PendingToolCalls` with the ids of the calls still waiting; `InputRestartLimitReached`.
 *
 * @category utils
 * @since 0.3.0
 */
export const failureOf = (outcome: FailedOutcome, messages: Messages.Messages): OutcomeFailure => {
  switch (outcome._tag) {
    case "StepLimit":
      return new ChatError.StepLimitReached({ maxSteps: outcome.maxSteps, messages })
    case "InvalidEdits": {
      const first = outcome.edits[0]!
      return new ChatError.InvalidEditedArguments({
        id: first.id,
        name: first.name,
        detail: outcome.edits.map((edit) => `${edit.id}: ${edit.detail}`).join("; "),
        messages
      })
    }
    case "PendingCalls":
      return new ChatError.PendingToolCalls({ ids: outcome.ids, messages })
    case "InputLimit":
      return new ChatError.InputRestartLimitReached({ maxInputRestarts: outcome.maxInputRestarts, messages })
  }
}

/**
 * A handler that died: its call, its tool and what the defect said.
 *
 * @category models
 * @since 0.3.0
 */
export interface Defect {
  readonly id: string
  readonly name: string
  readonly detail: string
}

/**
 * The error a turn ends with when a handler died (`Steps.runTool`'s `defect`): once every call of
 * the response finished, the first defect, carrying the messages with every result recorded.
 *
 * @category utils
 * @since 0.3.0
 */
export const defectFailure = (defect: Defect, messages: Messages.Messages): ChatError.ToolHandlerDefect =>
  new ChatError.ToolHandlerDefect({ id: defect.id, name: defect.name, detail: defect.detail, messages })
