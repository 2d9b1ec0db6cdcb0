// Human in the loop: a reviewer model, and a candidate strategy tried in shadow mode.
// #region imports
import { Action, Chat, LanguageModel, Messages, PauseReason, Reviewer, Shadow, Toolkit } from "@chat-ts/core"
import { OpenAiChatCompletions, OpenAiClient } from "@chat-ts/openai"
import { Effect, Layer, Metric } from "effect"
// #endregion imports
import { toolkit } from "../human-in-the-loop.js"

// #region reviewer-model
// The reviewer is a LanguageModel service of its own: here a small OpenAI model, built from its layer.
export const openAiReviewer = Effect.gen(function*() {
  return yield* LanguageModel.LanguageModel
}).pipe(
  Effect.provide(OpenAiChatCompletions.layer({ model: "gpt-5-mini" }).pipe(Layer.provide(OpenAiClient.layerConfig())))
)
// #endregion reviewer-model

/** The deletion toolkit, reviewed: a deletion runs without a person only on the reviewer's confident "safe". */
export const reviewed = (reviewer: LanguageModel.Service) =>
  // #region reviewer
  toolkit.pipe(
    // Without the reviewer, every deletion would now run.
    Toolkit.withStrategy(() => Action.Execute()),
    Reviewer.review({
      model: reviewer,
      instructions: "Deleting log files older than a month is routine. Anything else needs a person.",
      timeout: "5 seconds" // default 10 seconds; slower, and a person decides
    })
  )
// #endregion reviewer

/** What the approver is shown of each call waiting for them: the call and the reviewer's verdict. */
export const forTheApprover = (chat: Chat.Service, messages: Messages.Messages) =>
  // #region verdict
  Effect.map(chat.complete(messages), (result) =>
    result.outcome._tag !== "Paused" ? [] : PauseReason.approvalIds(result.outcome.reason).map((id) => ({
      call: Messages.findTool(result.messages, id)!,
      // { verdict: "needs-person", reason: "…", confidence: 0.9 }, or "unavailable" when the reviewer failed
      review: Reviewer.reviewOf(result.messages, id)
    })))
// #endregion verdict

// #region shadow
// Enforced: every deletion waits for a person (the toolkit's strategy). Tried beside it: log files run.
export const trial = toolkit.pipe(
  Shadow.shadow(
    (call) => call.params.paths.every((path) => path.endsWith(".log")) ? Action.Execute() : Action.RequireApproval(),
    { name: "logs-run" }
  )
)

// How often the candidate would have run a deletion that the enforced strategy sent to a person.
export const wouldHaveRun = Metric.value(Metric.withAttributes(Shadow.decisions, {
  shadow: "logs-run",
  tool: "delete_files",
  enforced: "RequireApproval",
  candidate: "Execute",
  outcome: "disagree"
}))
// #endregion shadow
