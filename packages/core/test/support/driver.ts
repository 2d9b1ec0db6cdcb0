/**
 * A driver that plays a generated script against the reducer, standing in
 * for everything around it: the shell, the model (answers from the script),
 * the strategies (decisions from the script), the tools (results from the
 * script), the person (approves, edits or rejects in the script's order) and
 * the clock (moves at each pause). It records every step so that properties
 * can be checked over the whole run.
 */
import * as Result from "effect/Result"
import * as Messages from "../../src/turn/Messages.js"
import type { Message, Part, ToolCallPart, ToolCallStatus } from "../../src/turn/Messages.js"
import * as PauseReason from "../../src/data/PauseReason.js"
import * as Turn from "../../src/turn/Turn.js"
import * as Usage from "../../src/data/Usage.js"
import type { CallScript, PersonScript, Script } from "./arbitraries.js"
import { deepFreeze } from "./fixtures.js"

/** The clock at the start of every played turn. */
export const START = 1_700_000_000_000

/** One call of the reducer. */
export interface Entry {
  readonly before: Messages.Messages
  readonly event: Turn.Event
  readonly after: Messages.Messages
  readonly outcome: Turn.Outcome
  /** The driver's clock when the event was sent. */
  readonly now: number
  /** A stray event, sent when it does not fit the state. */
  readonly stray: boolean
}

export interface Trace {
  readonly config: Turn.Config
  readonly entries: ReadonlyArray<Entry>
  readonly messages: Messages.Messages
  readonly final: Turn.Outcome
  /** The scripted call of every id the model proposed. */
  readonly calls: ReadonlyMap<string, CallScript>
  /** The decision sent for each call, with the time it was decided. */
  readonly decisions: ReadonlyMap<string, { readonly decision: Turn.Decision; readonly now: number }>
  /** How many times each call was handed out to run. */
  readonly runs: ReadonlyMap<string, number>
  /** The number of entries recorded when the person approved the call. */
  readonly approvedAt: ReadonlyMap<string, number>
  /** The step numbers of the model calls. */
  readonly modelCalls: ReadonlyArray<number>
  /** The usage of the responses sent in this turn, added up, after each entry. */
  readonly usageSent: ReadonlyArray<Usage.Usage>
}

export const configOf = (script: Script): Turn.Config => ({
  maxSteps: script.maxSteps,
  waitForScheduled: script.waitForScheduled
})

const get = <A, E>(result: Result.Result<A, E>, what: string): A => {
  if (Result.isFailure(result)) throw new Error(`${what} failed: ${String(result.failure)}`)
  return result.success
}

const startMessages = (script: Script): Messages.Messages => [
  ...(script.history
    ? [
      Messages.user("Earlier question"),
      {
        role: "assistant" as const,
        parts: [{ ...Messages.toolCall({ id: "old", name: "search", arguments: "{}" }), status: { _tag: "Completed" as const, result: 1 } }],
        usage: { inputTokens: 999, outputTokens: 999 }
      },
      { ...Messages.assistant("Earlier answer"), usage: { inputTokens: 999, outputTokens: 999 } }
    ]
    : []),
  Messages.user("Please do the things.")
]

const toDecision = (call: CallScript, now: number): Turn.Decision => {
  const d = call.decision
  switch (d.kind) {
    case "Execute":
      return Turn.Decision.Execute()
    case "RequireApproval":
      return Turn.Decision.RequireApproval(d.expiresIn === undefined ? {} : { expiresAt: now + d.expiresIn })
    case "Defer":
      return Turn.Decision.Defer({ at: now + d.delay })
    case "Reject":
      return Turn.Decision.Reject({ reason: d.reason })
    case "Invalid":
      return Turn.Decision.Invalid({ message: d.message })
  }
}

/** Edited arguments the person gives; the shell accepts them. */
export const validEdit = (id: string): string => JSON.stringify({ edited: id })

/** Edited arguments the shell finds invalid. */
export const invalidEdit = (id: string): string => JSON.stringify({ invalid: id })

const claimed = (i: number): ToolCallStatus =>
  i % 3 === 0
    ? { _tag: "Completed", result: "claimed" }
    : i % 3 === 1
    ? { _tag: "Approved", editedArguments: "{\"claimed\":true}" }
    : { _tag: "Running" }

/** Options of `play`. */
export interface PlayOptions {
  readonly maxEvents?: number
  /**
   * Event numbers at which the process "crashes" while tools run: their results
   * are lost, the stored (JSON) state of the last step is loaded back, and the
   * turn resumes from it, as a new worker would.
   */
  readonly crashes?: ReadonlyArray<number>
}

/** Plays a script to the end of the turn. Throws when the turn gets stuck or does not end. */
export const play = (script: Script, options: PlayOptions = {}): Trace => {
  const maxEvents = options.maxEvents ?? 2000
  const crashes = new Set(options.crashes ?? [])
  const config = configOf(script)
  const entries: Array<Entry> = []
  const calls = new Map<string, CallScript>()
  const decisions = new Map<string, { decision: Turn.Decision; now: number }>()
  const runs = new Map<string, number>()
  const approvedAt = new Map<string, number>()
  const modelCalls: Array<number> = []
  const usageSent: Array<Usage.Usage> = []
  const seen = new Set<string>()
  const invalid = new Set<string>()
  let sent = Usage.empty
  let messages = startMessages(script)
  let now = START
  let pauses = 0

  const send = (event: Turn.Event, stray = false): Turn.Result => {
    const before = deepFreeze(messages)
    const result = Turn.step(before, deepFreeze(event), config)
    entries.push({ before, event, after: result[0], outcome: result[1], now, stray })
    usageSent.push(sent)
    if (!stray) messages = result[0]
    return result
  }

  const order = (ids: ReadonlyArray<string>): ReadonlyArray<string> =>
    [...ids].sort((a, b) => calls.get(a)!.order - calls.get(b)!.order || (a < b ? -1 : a > b ? 1 : 0))

  const resultEvent = (id: string): Turn.Event => {
    const result = calls.get(id)!.result
    return result.ok
      ? Turn.Event.ToolSucceeded({ id, result: result.value })
      : Turn.Event.ToolFailed({ id, error: result.error })
  }

  /** Events that do not fit a paused state; each must change nothing. */
  const strays = (pending: ReadonlyArray<string>): ReadonlyArray<Turn.Event> => {
    const resolved = Messages.toolCalls(messages).filter(Messages.isResolved).map((c) => c.id)
    return [
      ...[...pending, ...resolved.slice(0, 1), "unknown"].flatMap((id) => [
        Turn.Event.ToolSucceeded({ id, result: "stray" }),
        Turn.Event.ToolFailed({ id, error: "stray" })
      ]),
      Turn.Event.Decided({ now, decisions: pending.map((id) => ({ id, decision: Turn.Decision.Execute() })) }),
      Turn.Event.ModelResponded({
        message: { role: "assistant", parts: [{ ...Messages.toolCall({ id: "stray", name: "pay", arguments: "{}" }), status: { _tag: "Completed", result: 1 } }] }
      })
    ]
  }

  let event: Turn.Event = Turn.Event.Resume({ now })
  const queue: Array<Turn.Event> = []
  let fixes = 0
  for (let i = 0; i < maxEvents; i++) {
    if (crashes.has(i) && queue.length > 0) {
      // The worker dies with calls in flight; another loads the last checkpoint and resumes.
      queue.length = 0
      messages = get(Messages.fromJson(Result.getOrThrow(Messages.toJson(messages))), "loading the checkpoint")
      event = Turn.Event.Resume({ now })
    }
    const [, outcome] = send(event)
    if (queue.length > 0 && outcome._tag !== "AwaitTools") {
      throw new Error(`the turn moved on (${outcome._tag}) while calls were still running`)
    }
    switch (outcome._tag) {
      case "CallModel": {
        modelCalls.push(outcome.step)
        const response = script.responses[outcome.step - 1]
        const parts: Array<Part> = [Messages.text(response?.text ?? "Done.")]
        for (const [index, call] of (response?.calls ?? []).entries()) {
          const id = `s${outcome.step}c${index}`
          calls.set(id, call)
          const proposed: ToolCallPart = Messages.toolCall({ id, name: call.name, arguments: call.arguments })
          parts.push(response!.claimStatuses ? { ...proposed, status: claimed(index) } : proposed)
        }
        const usage = response?.usage ?? { inputTokens: 1, outputTokens: 1 }
        sent = Usage.add(sent, usage)
        const message: Message = { role: "assistant", parts, usage }
        event = Turn.Event.ModelResponded({ message })
        break
      }
      case "Decide": {
        const decided = outcome.calls.map((call) => {
          const decision = toDecision(calls.get(call.id)!, now)
          decisions.set(call.id, { decision, now })
          return { id: call.id, decision }
        })
        event = Turn.Event.Decided({ now, decisions: decided })
        break
      }
      case "RunTools": {
        for (const call of outcome.calls) runs.set(call.id, (runs.get(call.id) ?? 0) + 1)
        queue.push(...order(outcome.calls.map((call) => call.id)).map(resultEvent))
        event = queue.shift()!
        break
      }
      case "AwaitTools": {
        const next = queue.shift()
        if (next === undefined) throw new Error(`stuck: awaiting ${outcome.ids.join(", ")} that nobody runs`)
        event = next
        break
      }
      case "Wait": {
        if (outcome.until <= now) throw new Error(`asked to wait until ${outcome.until}, which is not after ${now}`)
        now = outcome.until
        event = Turn.Event.Resume({ now })
        break
      }
      case "Pause": {
        pauses++
        const pending = PauseReason.toolIds(outcome.reason)
        if (script.strayEvents) for (const stray of strays(pending)) send(stray, true)
        const force = pauses > 20
        for (const id of order(pending)) {
          const call = Messages.findTool(messages, id)!
          const scheduled = call.status._tag === "Scheduled"
          const firstLook = !seen.has(id)
          seen.add(id)
          let choice: PersonScript | "wait" = calls.get(id)!.person
          if (choice === "later") choice = scheduled || firstLook ? "wait" : "approve"
          if (force) choice = scheduled ? "wait" : "approve"
          switch (choice) {
            case "wait":
              break
            case "approve":
            case "approveEdited":
            case "approveInvalidEdit": {
              const edit = choice === "approve" ? undefined : choice === "approveEdited" ? validEdit(id) : invalidEdit(id)
              messages = get(edit === undefined ? Messages.approve(messages, id) : Messages.approveJson(messages, id, edit), `approving ${id}`)
              approvedAt.set(id, entries.length)
              if (choice === "approveInvalidEdit") invalid.add(id)
              break
            }
            case "reject":
              messages = get(Messages.reject(messages, id, `no ${id}`), `rejecting ${id}`)
              break
          }
        }
        now += script.clock[(pauses - 1) % script.clock.length]! + (force ? 1_000_000 : 0)
        if (script.storeAtPause[(pauses - 1) % script.storeAtPause.length]) {
          messages = get(Messages.fromJson(Result.getOrThrow(Messages.toJson(messages))), "loading the stored conversation")
        }
        event = Turn.Event.Resume({ now, invalidEdits: [...invalid].map((id) => ({ id, detail: "not valid" })) })
        break
      }
      case "InvalidEdits": {
        // The person takes a while to correct them: the clock moves, deadlines may pass.
        now += script.clock[fixes++ % script.clock.length]!
        // The person corrects the edits the shell refused.
        for (const edit of outcome.edits) {
          // The refused call awaits approval again: approve it with a valid edit.
          messages = get(Messages.approveJson(messages, edit.id, validEdit(edit.id)), `re-approving ${edit.id}`)
          invalid.delete(edit.id)
        }
        event = Turn.Event.Resume({ now })
        break
      }
      case "Complete":
      case "StepLimit":
        return { config, entries, messages, final: outcome, calls, decisions, runs, approvedAt, modelCalls, usageSent }
      case "PendingCalls":
        throw new Error(`unexpected PendingCalls ${outcome.ids.join(", ")}`)
    }
  }
  throw new Error(`the turn did not end after ${maxEvents} events`)
}
