/**
 * The errors of `@chat-ts/workflow` that core's `ChatError` does not have.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** No durable turn with this execution id has published its state (it never started, or has not paused yet). */
export class TurnNotFound extends Schema.TaggedError<TurnNotFound>("@chat-ts/workflow/TurnNotFound")("TurnNotFound", {
  executionId: Schema.String
}) {
  override get message() {
    return `No durable turn '${this.executionId}' has published its state.`
  }
}

/** A message sent to steer a durable turn that waits for no decision (it runs, or ended): start a new turn instead. */
export class NotWaiting extends Schema.TaggedError<NotWaiting>("@chat-ts/workflow/NotWaiting")("NotWaiting", {
  executionId: Schema.String
}) {
  override get message() {
    return `The durable turn '${this.executionId}' waits for no decision, so a message cannot steer it: start a new turn with it.`
  }
}
