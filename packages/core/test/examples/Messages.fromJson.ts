/** The `@example` of `Messages.fromJson` (the region, copied into its doc; DocExamples.test.ts checks and runs it). */
// #region example
import { Messages } from "@chat-ts/core"
import { Result } from "effect"

// Reads back exactly what `toJson` wrote, in this process or another.
const roundTrip = Result.flatMap(Messages.toJson(Messages.fromUser("Hi")), Messages.fromJson)

// Anything else (not JSON, a foreign or tampered document) is a StateDecodeError.
const refused = Messages.fromJson("{\"format\":\"chat-ts/messages\",\"version\":1}")
// #endregion

export { refused, roundTrip }
