/**
 * The demo's conversation loop: read a message, stream the turn (text and
 * tool events as they happen), and whenever the turn pauses show each pending
 * call and ask the person for a decision; scheduled calls the person lets
 * wait are waited for (`waitForScheduled`) and the turn goes on by itself.
 */
import { Chat, ChatEvent, ChatInput, Messages, PauseReason } from "@chat-ts/core"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import * as Terminal from "effect/Terminal"
import type { Decision, InputEnded, Io, Quit } from "./Io.js"
import type { Pending, Style } from "./render.js"
import { brief, clockTime, pendingBox, relative, resultLine } from "./render.js"
import { type Catalogue, catalogue as demoTools } from "./tools.js"

/** How the session went. */
export interface Summary {
  /** Turns that completed. */
  readonly completed: number
  /** Turns that failed (model errors, step limit). */
  readonly failed: number
  /** The conversation at the end. */
  readonly messages: Messages.Messages
}

type Last = Extract<ChatEvent.ChatEvent, { readonly _tag: "Paused" | "Completed" }>

/** The calls a pause waits on, in order: approvals first, then scheduled calls. */
export const pendingOf = (
  reason: PauseReason.PauseReason,
  messages: Messages.Messages,
  catalogue: Catalogue = demoTools
): ReadonlyArray<Pending> =>
  PauseReason.toolIds(reason).flatMap((id): ReadonlyArray<Pending> => {
    const call = Messages.findTool(messages, id)
    if (call === undefined) return []
    const tool = Object.hasOwn(catalogue.tools, call.name) ? catalogue.tools[call.name] : undefined
    const kind: Pending["kind"] = call.status._tag === "Scheduled"
      ? { _tag: "Scheduled", at: call.status.at }
      : { _tag: "Approval" }
    return [{ call, kind, policy: tool === undefined ? undefined : catalogue.policy(tool), tool }]
  })

const pauseHeadline = (s: Style, pending: ReadonlyArray<Pending>): string => {
  const approvals = pending.filter((p) => p.kind._tag === "Approval").length
  const scheduled = pending.length - approvals
  const parts = [
    approvals === 0 ? "" : `${approvals} call${approvals === 1 ? " needs" : "s need"} your approval`,
    scheduled === 0 ? "" : `${scheduled} call${scheduled === 1 ? " is" : "s are"} scheduled for later`
  ].filter((part) => part !== "")
  return s.yellow(`⏸  The turn paused: ${parts.join(", ")}.`)
}

/** Applies one decision to the messages. */
const applyDecision = (messages: Messages.Messages, pending: Pending, decision: Decision) => {
  const id = pending.call.id
  switch (decision._tag) {
    case "Approve":
      return Messages.approve(messages, id)
    case "Edit":
      return Messages.approve(messages, id, decision.arguments)
    case "Reject":
      return Messages.reject(messages, id, decision.reason)
    case "Wait":
      return Result.succeed(messages)
  }
}

/** The echo of a decision; none for a rejection, which the turn's own "✗ … rejected by you" line reports. */
const decisionLine = (s: Style, pending: Pending, decision: Decision, now: number): string | undefined => {
  switch (decision._tag) {
    case "Approve":
      return s.green(pending.kind._tag === "Scheduled" ? "  ✔ runs now" : "  ✔ approved")
    case "Edit":
      return s.green(`  ✔ approved with edited arguments ${brief(decision.arguments)}`)
    case "Reject":
      return undefined
    case "Wait": {
      const at = (pending.kind as { readonly at: number }).at
      return s.magenta(at <= now ? "  ⏳ runs when the turn goes on (it is due)" : `  ⏳ will run at ${clockTime(at)}`)
    }
  }
}

/** The chat a session talks to: its turns as streams, failing with the turn's errors or `E`. */
export interface SessionChat<E = never> {
  readonly stream: Chat.Service<never, E>["stream"]
}

/** Runs the session with `chat` until the person is done; `catalogue` tells what each tool does. */
export const run = <E extends { readonly _tag: string; readonly message: string } = never>(
  io: Io,
  s: Style,
  chat: SessionChat<E>,
  catalogue: Catalogue = demoTools
): Effect.Effect<Summary, Quit | InputEnded, Terminal.Terminal> =>
  Effect.gen(function*() {
    const terminal = yield* Terminal.Terminal
    const write = (text: string) => Effect.orDie(terminal.display(text))

    /** Streams the turn, printing as events arrive; returns its last event. */
    const streamTurn = (messages: Messages.Messages, waitForScheduled: boolean) =>
      Effect.gen(function*() {
        let inText = false
        let last: Last | undefined
        // What the person types while the model answers goes into the turn as input (see `Io.whileAnswering`).
        const input = yield* Queue.unbounded<ChatInput.ChatInput>()
        const send = (text: string) =>
          Effect.suspend(() => {
            const closeText = inText ? write("\n") : Effect.void
            inText = false
            return closeText.pipe(
              Effect.andThen(Console.log(`${s.bold("You ›")} ${text} ${s.dim("(sent while the model answers)")}`)),
              Effect.andThen(Queue.offer(input, Messages.user(text))),
              Effect.asVoid
            )
          })
        const options = io.whileAnswering === undefined ? { waitForScheduled } : { waitForScheduled, input }
        const streamed = chat.stream(messages, options).pipe(
          Stream.runForEach((event) =>
            Effect.suspend(() => {
              const closeText = inText ? write("\n") : Effect.void
              switch (event._tag) {
                case "TextDelta": {
                  const prefix = inText ? "" : `${s.cyan("Assistant ›")} `
                  inText = true
                  return write(prefix + event.text)
                }
                case "ReasoningDelta":
                case "ToolCallDelta": // the call is shown whole, with its decision, once the response is complete
                case "StepFinished":
                case "Waiting": // the decision line already said when the call runs
                case "InputRequested": // the demo's tools never ask for input (MCP elicitation is not declared here)
                case "InputSettled":
                  return Effect.void
                case "ToolCall": {
                  inText = false
                  const tool = Object.hasOwn(catalogue.tools, event.call.name) ? catalogue.tools[event.call.name] : undefined
                  const run = tool === undefined ? undefined : catalogue.policy(tool)?.run
                  const note = run === "auto" ? "" : s.dim(run === "later" ? " (runs later)" : " (needs approval)")
                  return closeText.pipe(
                    Effect.andThen(Console.log(`  ${s.dim("→")} ${event.call.name} ${brief(Messages.parsedArguments(event.call))}${note}`))
                  )
                }
                case "AnswerInterrupted":
                  inText = false
                  return closeText.pipe(Effect.andThen(Console.log(s.dim("  ⤺ answer interrupted; the model answers again with what you wrote"))))
                case "ToolResult":
                  inText = false
                  return closeText.pipe(Effect.andThen(Console.log(resultLine(s, event.call))))
                case "Paused":
                case "Completed":
                  inText = false
                  last = event
                  return closeText
              }
            })
          ),
          // A stream that failed mid-sentence still ends its line.
          Effect.ensuring(Effect.suspend(() => (inText ? write("\n") : Effect.void)))
        )
        // The reader runs only while the turn streams; Ctrl-C there ends the turn (as an abort) and the session.
        const reader = io.whileAnswering
        yield* reader === undefined
          ? streamed
          : Effect.raceFirst(streamed, Effect.andThen(reader(send), Effect.never))
        return last!
      })

    /** Runs one turn to its end, asking the person at each pause. */
    const turn = (start: Messages.Messages) =>
      Effect.gen(function*() {
        let last = yield* streamTurn(start, false)
        while (last._tag === "Paused") {
          let messages = last.messages
          const pending = pendingOf(last.reason, messages, catalogue)
          yield* Console.log(pauseHeadline(s, pending))
          let waitingUntil: number | undefined
          for (const item of pending) {
            yield* Console.log(pendingBox(s, item, yield* Clock.currentTimeMillis))
            const decision = yield* io.decide(item)
            messages = yield* Effect.orDie(Effect.fromResult(applyDecision(messages, item, decision)))
            const echo = decisionLine(s, item, decision, yield* Clock.currentTimeMillis)
            if (echo !== undefined) yield* Console.log(echo)
            if (decision._tag === "Wait" && item.kind._tag === "Scheduled") {
              waitingUntil = Math.min(waitingUntil ?? Infinity, item.kind.at)
            }
          }
          if (waitingUntil !== undefined) {
            const now = yield* Clock.currentTimeMillis
            yield* Console.log(s.magenta(
              waitingUntil <= now
                ? `⏳ The scheduled call is due (since ${clockTime(waitingUntil)}); the turn goes on.`
                : `⏳ Waiting until ${clockTime(waitingUntil)} (${relative(waitingUntil - now)}) for the scheduled call; the turn goes on by itself.`
            ))
          }
          last = yield* streamTurn(messages, waitingUntil !== undefined)
        }
        const usage = last.usage
        const steps = Messages.turnResponses(last.messages).length
        yield* Console.log(s.dim(
          `  (turn complete · ${steps} model call${steps === 1 ? "" : "s"} · ${usage.inputTokens} in / ${usage.outputTokens} out tokens)`
        ))
        return last.messages
      })

    let messages: Messages.Messages = Messages.empty
    let completed = 0
    let failed = 0
    while (true) {
      const next = yield* io.nextMessage
      if (Option.isNone(next)) break
      // A turn that failed may leave calls pending: the new message supersedes them.
      const input = yield* Effect.orDie(Effect.fromResult(
        Messages.append(messages, Messages.user(next.value), { supersede: "The person moved on to a new request." })
      ))
      const result = yield* turn(input).pipe(
        Effect.map((messages) => ({ ok: true as const, messages })),
        Effect.catchIf(
          (error): error is Chat.TurnError | E => !isIoError(error),
          (error) =>
            Console.log(s.red(`✗ The turn failed: ${describeError(error)}`)).pipe(
              Effect.as({ ok: false as const, messages: ("messages" in error && error.messages) || input })
            )
        )
      )
      messages = result.messages
      if (result.ok) completed++
      else failed++
    }
    return { completed, failed, messages }
  })

const isIoError = (error: { readonly _tag: string }): error is Quit | InputEnded =>
  error._tag === "Quit" || error._tag === "InputEnded"

const describeError = (error: { readonly _tag: string; readonly message: string }): string => {
  switch (error._tag) {
    case "AuthenticationError":
      return `the model refused the credentials (${error.message}). Check OPENAI_API_KEY (or ANTHROPIC_API_KEY).`
    case "NetworkError":
      return `the model could not be reached (${error.message}). Check OPENAI_BASE_URL and your connection.`
    default:
      return `${error._tag}: ${error.message}`
  }
}
