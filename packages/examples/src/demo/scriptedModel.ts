/**
 * The demo's built-in scripted model, used when no `OPENAI_API_KEY` is set.
 *
 * It is not a language model: it is a function of the request that
 * recognises a few suggested requests in the last user message and answers
 * them with plausible tool calls, then reads the tool results (completed,
 * failed or rejected) to write its final answer. Being a pure function of the
 * conversation, it works the same whether a turn ran in one go, paused, or
 * was resumed with edited arguments.
 */
import { LanguageModel, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/** The requests the scripted model understands, as shown to the person. */
export const suggestions: ReadonlyArray<string> = [
  "delete the old logs",
  "what is in notes.txt?",
  "clean up tomorrow",
  "delete the temp file now and clean up the logs tomorrow",
  "list the files"
]

type Intent =
  | { readonly _tag: "DeleteOldLogs" }
  | { readonly _tag: "Read"; readonly file: string }
  | { readonly _tag: "CleanupLater" }
  | { readonly _tag: "DeleteTempAndCleanupLater" }
  | { readonly _tag: "List" }
  | { readonly _tag: "Help" }

const fileName = /([\w-]+(?:\.[\w-]+)*\.(?:txt|log|tmp|md))/i

/** What the last user message asks for. */
export const intentOf = (text: string): Intent => {
  const t = text.toLowerCase()
  const later = /tomorrow|tonight|later|schedul/.test(t)
  if (/\b(temp|tmp|scratch)\b/.test(t) && later) return { _tag: "DeleteTempAndCleanupLater" }
  if (/clean ?up|tidy/.test(t) || (later && /delet|remov/.test(t))) return { _tag: "CleanupLater" }
  if (/delet|remov|get rid/.test(t) && /log/.test(t)) return { _tag: "DeleteOldLogs" }
  const file = fileName.exec(text)
  if (file !== null) return { _tag: "Read", file: file[1]! }
  if (/\b(list|files|folder|what.*there)\b/.test(t)) return { _tag: "List" }
  return { _tag: "Help" }
}

/** Logs older than this many days count as old. */
export const oldAfterDays = 30

const help = MockLanguageModel.text(
  "I am the built-in scripted demo model, not a real language model: I only understand a few requests. Try:\n" +
    suggestions.map((s) => `  • ${s}`).join("\n") +
    "\n(Set OPENAI_API_KEY to talk to a real model.)"
)

interface Entry {
  readonly name: string
  readonly ageDays: number
}

const list = (entries: ReadonlyArray<Entry>): string => entries.map((e) => `${e.name} (${e.ageDays}d)`).join(", ")

const quote = (text: string): string =>
  text.trimEnd().split("\n").map((line) => `  > ${line}`).join("\n")

/** One line about how a call ended, for the model's final answer. */
const outcomeOf = (call: Messages.ToolCallPart): string => {
  const status = call.status
  if (status._tag === "Rejected" || status._tag === "Cancelled") {
    const reason = status.reason === undefined || status.reason === "" ? "" : ` (reason: ${status.reason})`
    return call.name === "schedule_cleanup"
      ? `I cancelled the scheduled cleanup, as asked${reason}.`
      : `OK, I did not delete anything${reason}.`
  }
  if (status._tag === "Expired") return `Nobody approved ${call.name} in time, so it did not run.`
  if (status._tag === "Failed") return `The ${call.name} call failed: ${typeof status.error === "string" ? status.error : JSON.stringify(status.error)}`
  if (status._tag !== "Completed") return `${call.name} did not finish.`
  const result = status.result as { readonly deleted?: ReadonlyArray<string>; readonly missing?: ReadonlyArray<string> }
  const deleted = result.deleted ?? []
  const missing = result.missing ?? []
  const what = deleted.length === 0 ? "nothing needed deleting" : `deleted ${deleted.join(", ")}`
  const prefix = call.name === "schedule_cleanup" ? "The scheduled cleanup ran: " : "Done: "
  return `${prefix}${what}${missing.length === 0 ? "" : ` (not found: ${missing.join(", ")})`}.`
}

/** The scripted answer to a conversation. */
export const respond = (messages: Messages.Messages): MockLanguageModel.ScriptedResponse => {
  const start = Messages.turnStart(messages)
  const request = start > 0 ? Messages.textOf(messages[start - 1]!) : ""
  const intent = intentOf(request)
  const last = Messages.turnResponses(messages).at(-1)
  const calls = last === undefined ? [] : Messages.toolCallsOf(last)

  if (last === undefined || calls.length === 0) {
    switch (intent._tag) {
      case "DeleteOldLogs":
      case "List":
        return MockLanguageModel.toolCalls([{ name: "list_files" }], { text: "Let me look at the folder first." })
      case "Read":
        return MockLanguageModel.toolCalls([{ name: "read_file", arguments: { path: intent.file } }])
      case "CleanupLater":
        return MockLanguageModel.toolCalls(
          [{ name: "schedule_cleanup", arguments: { pattern: "*.log", olderThanDays: oldAfterDays } }],
          { text: `I'll schedule a cleanup of the logs older than ${oldAfterDays} days.` }
        )
      case "DeleteTempAndCleanupLater":
        return MockLanguageModel.toolCalls(
          [
            { name: "delete_files", arguments: { paths: ["scratch.tmp"] } },
            { name: "schedule_cleanup", arguments: { pattern: "*.log", olderThanDays: oldAfterDays } }
          ],
          { text: "I'll delete the temp file now and schedule the log cleanup for later." }
        )
      case "Help":
        return help
    }
  }

  // A follow-up: the calls of the last response are resolved; answer from their results.
  const listed = calls.find((call) => call.name === "list_files")
  if (listed !== undefined && listed.status._tag === "Completed") {
    const entries = listed.status.result as ReadonlyArray<Entry>
    if (intent._tag === "DeleteOldLogs") {
      const old = entries.filter((e) => e.name.endsWith(".log") && e.ageDays >= oldAfterDays)
      if (old.length === 0) return MockLanguageModel.text(`There are no logs older than ${oldAfterDays} days.`)
      return MockLanguageModel.toolCalls(
        [{ name: "delete_files", arguments: { paths: old.map((e) => e.name) } }],
        { text: `These logs are older than ${oldAfterDays} days: ${list(old)}. I'll delete them.` }
      )
    }
    return MockLanguageModel.text(entries.length === 0 ? "The folder is empty." : `The folder holds: ${list(entries)}.`)
  }
  const read = calls.find((call) => call.name === "read_file")
  if (read !== undefined) {
    const status = read.status
    const name = (Messages.parsedArguments(read) as { readonly path?: string }).path ?? "the file"
    return status._tag === "Completed"
      ? MockLanguageModel.text(`${name} says:\n${quote(String(status.result))}`)
      : MockLanguageModel.text(outcomeOf(read))
  }
  return MockLanguageModel.text(calls.map(outcomeOf).join("\n"))
}

/** The scripted demo model as a `LanguageModel` layer; text streams with a small typing delay. */
export const layer = (options: { readonly typingDelay?: Duration.Input } = {}): Layer.Layer<LanguageModel.LanguageModel> => {
  const model = MockLanguageModel.make((request) => respond(request.messages))
  const delay = Duration.fromInputUnsafe(options.typingDelay ?? "12 millis")
  if (Duration.toMillis(delay) === 0) return model.layer
  return LanguageModel.layer({
    generate: model.generate,
    stream: (request) =>
      model.stream(request).pipe(
        Stream.tap((part) => (part._tag === "TextDelta" ? Effect.sleep(delay) : Effect.void))
      )
  })
}
