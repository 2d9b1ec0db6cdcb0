/** The `@example` of `Turn.step` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Messages, Turn } from "@chat-ts/core"

// A fresh turn: call the model (step 1); the messages are unchanged.
const [start, first] = Turn.step(Messages.fromUser("Hi"), Turn.Event.Resume({ now: Date.now() }))

// The model answered with text only: the turn is Complete, with the response appended.
const [end, second] = Turn.step(start, Turn.Event.ModelResponded({ message: Messages.assistant("Hello!") }))
// #endregion

export { end, first, second, start }
