/**
 * Grants and the reviewer in the property kit: the scripted reviewer model
 * (it answers each call's `Scenario.Review`, and records who it was asked
 * about), the grant and revoke steps played through the agent's paths (default
 * `Messages.grant` / `Messages.revokeGrant`), what the trace keeps of them, and
 * the checks `Law.approvedBeforeRun` makes of a call a grant settled or a
 * reviewer sent to a person.
 *
 * @internal
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import * as Reviewer from "../../governance/Reviewer.js"
import type * as Tool from "../../tools/Tool.js"
import * as Toolkit from "../../tools/Toolkit.js"
import type * as Action from "../../turn/Action.js"
import * as GrantRules from "../../turn/GrantRules.js"
import * as Messages from "../../turn/Messages.js"
import type * as Agent from "../Agent.js"
import * as MockLanguageModel from "../MockLanguageModel.js"
import type * as Scenario from "../Scenario.js"

/** A grant a scenario gave (the options it asked for, `expiresAt` resolved), accepted or refused with the error's tag. */
export interface GrantRecord {
  readonly seq: number
  readonly id: string
  readonly tool: string
  readonly where?: GrantRules.Predicate | undefined
  readonly by: string
  readonly at: number
  readonly expiresAt: number
  readonly accepted: boolean
  readonly refusal?: string | undefined
}

/** A revocation a scenario made, accepted or refused with the error's tag. */
export interface RevokeRecord {
  readonly seq: number
  readonly grant: string
  readonly by: string
  readonly at: number
  readonly accepted: boolean
  readonly refusal?: string | undefined
}

/** The reviewer was asked about call `id` and answered `review`. */
export interface ReviewRecord {
  readonly seq: number
  readonly id: string
  readonly name: string
  readonly review: Scenario.Review
}

/** A call a grant settled (its decision record names the grant), as first seen. */
export interface SettledRecord {
  readonly seq: number
  readonly id: string
  readonly grant: string
}

/** The call whose strategy is running (the reviewer model reads it to answer that call's review). */
const CurrentCall = Context.Reference<string | undefined>("@chat-ts/core/testing/CurrentCall", { defaultValue: () => undefined })

const confident: Scenario.Review = { verdict: "safe", confidence: 1 }

/** The scenario's call with `id`. */
const callOf = (scenario: Scenario.Scenario, id: string | undefined): Scenario.Call | undefined =>
  id === undefined ? undefined : scenario.responses.flatMap((response) => response.calls).find((call) => call.id === id)

/** The reviewer's answer as the model's text. */
const answer = (review: Scenario.Review): string =>
  review.verdict === "no-answer"
    ? "I would rather not say."
    : JSON.stringify({ verdict: review.verdict, reason: "scripted by the scenario", confidence: review.confidence })

/**
 * The toolkit the chat runs: the agent's, with its reviewer wired over it as the agent does it (the
 * model scripted from the scenario, each question recorded), or the agent's as it is.
 */
export const toolsOf = (
  agent: Agent.Agent,
  scenario: Scenario.Scenario,
  record: (review: Omit<ReviewRecord, "seq">) => void
): Toolkit.Any => {
  if (agent.reviewer === undefined) return agent.tools
  const model = MockLanguageModel.make(() =>
    Effect.map(Effect.service(CurrentCall), (id) => {
      const call = callOf(scenario, id)
      const review = call?.review ?? confident
      if (id !== undefined) record({ id, name: call?.name ?? "", review })
      return MockLanguageModel.text(answer(review))
    })
  )
  const options: Reviewer.Options = { ...agent.reviewer.options, model }
  const wired = (agent.reviewer.wire ?? ((tools, options) => Reviewer.review(tools as Toolkit.Toolkit<Record<string, Tool.Any>>, options)))(agent.tools, options)
  const inner = wired.strategy as Toolkit.Strategy<Record<string, Tool.Any>, never> | undefined
  if (inner === undefined) return wired
  // The same strategy, told which call it decides (the reviewer's model runs inside it).
  return Toolkit.withStrategy(wired as Toolkit.Toolkit<Record<string, Tool.Any>>, (call, metadata) =>
    Effect.provideService(
      Effect.suspend(() => {
        const decided = inner(call, metadata)
        return Effect.isEffect(decided) ? decided : Effect.succeed(decided as Action.Action)
      }),
      CurrentCall,
      call.id
    ))
}

/** When the next grant of the conversation still in force expires (after `now`), if any. */
export const nextExpiry = (messages: Messages.Messages, now: number): number | undefined => {
  const ahead = GrantRules.all(messages).flatMap(({ grant }) => (GrantRules.isLive(grant, now) ? [grant.expiresAt] : []))
  return ahead.length === 0 ? undefined : Math.min(...ahead)
}

/** The sooner of two times, either maybe absent. */
export const soonest = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b)

/** What the recording keeps for the grant and revoke steps. */
export interface Governed {
  readonly agent: Agent.Agent
  readonly messages: Messages.Messages
  readonly last: string
  readonly grants: Array<GrantRecord>
  readonly revokes: Array<RevokeRecord>
  readonly log: Array<string>
  next(): number
  see(messages: Messages.Messages): void
}

const errorTag = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : String(error)

const defaultGrant: Agent.GrantPath = (messages, options) => Effect.fromResult(Messages.grant(messages, options))

const defaultRevoke: Agent.RevokePath = (messages, id, revocation) => Effect.fromResult(Messages.revokeGrant(messages, id, revocation))

const pick = <A>(items: ReadonlyArray<A>, index: number): A => items[index % items.length]!

/** The grant options of a step, as code (`Messages.grant(messages, …)`). */
const grantCode = (options: GrantRules.Options): string => `Messages.grant(messages, ${JSON.stringify(options)})`

/** A grant step: a decider gives the grant through the agent's path (default `Messages.grant`). */
export const give = (state: Governed, step: Scenario.Grant, deciders: ReadonlyArray<Messages.Identity>): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (state.last !== "Paused") return void state.log.push("grant: the turn is not paused")
    const at = yield* Clock.currentTimeMillis
    const id = `g${state.grants.length + 1}`
    const by = pick(deciders, step.by).id
    const options: GrantRules.Options = {
      id,
      tool: step.tool,
      ...(step.where === undefined ? {} : { where: step.where }),
      by,
      at,
      expiresAt: at + step.expiresAfter
    }
    const exit = yield* Effect.exit((state.agent.grant ?? defaultGrant)(state.messages, options))
    const refusal = Exit.isSuccess(exit) ? undefined : errorTag(exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error ?? exit.cause)
    state.grants.push({ seq: state.next(), id, tool: step.tool, where: step.where, by, at, expiresAt: at + step.expiresAfter, accepted: refusal === undefined, refusal })
    state.log.push(`${grantCode(options)} -> ${refusal === undefined ? "accepted" : `refused (${refusal})`}`)
    if (Exit.isSuccess(exit)) state.see(exit.value)
  })

/** A revoke step: a decider revokes one of the grants given so far through the agent's path (default `Messages.revokeGrant`). */
export const revoke = (state: Governed, step: Scenario.Revoke, deciders: ReadonlyArray<Messages.Identity>): Effect.Effect<void> =>
  Effect.gen(function*() {
    const given = state.grants.filter((grant) => grant.accepted)
    if (given.length === 0) return void state.log.push("revoke: no grant was given")
    const grant = pick(given, step.grant).id
    const at = yield* Clock.currentTimeMillis
    const by = pick(deciders, step.by).id
    const exit = yield* Effect.exit((state.agent.revoke ?? defaultRevoke)(state.messages, grant, { by, at }))
    const refusal = Exit.isSuccess(exit) ? undefined : errorTag(exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error ?? exit.cause)
    state.revokes.push({ seq: state.next(), grant, by, at, accepted: refusal === undefined, refusal })
    state.log.push(`Messages.revokeGrant(messages, ${JSON.stringify(grant)}, ${JSON.stringify({ by, at })}) -> ${refusal === undefined ? "accepted" : `refused (${refusal})`}`)
    if (Exit.isSuccess(exit)) state.see(exit.value)
  })

/** The calls a grant settled, from the states seen (the first state naming the grant). */
export const settled = (states: ReadonlyArray<{ readonly seq: number; readonly messages: Messages.Messages }>): ReadonlyArray<SettledRecord> => {
  const out = new Map<string, SettledRecord>()
  for (const { messages, seq } of states) {
    for (const message of messages) {
      for (const call of Messages.toolCallsOf(message)) {
        const grant = GrantRules.settledBy(call)
        if (grant !== undefined && !out.has(call.id)) out.set(call.id, { seq, id: call.id, grant })
      }
    }
  }
  return [...out.values()]
}

/** What a trace holds of grants and reviews (absent on a trace made by hand: none). */
export interface Held {
  readonly grants?: ReadonlyArray<GrantRecord> | undefined
  readonly revokes?: ReadonlyArray<RevokeRecord> | undefined
  readonly reviews?: ReadonlyArray<ReviewRecord> | undefined
  readonly states: ReadonlyArray<{ readonly seq: number; readonly messages: Messages.Messages }>
}

/** Whether the reviewer, asked about call `id` before `seq`, sent it to a person (anything but a confident `safe`). */
export const reviewerAsked = (agent: Agent.Agent, trace: Held, id: string, seq: number): Scenario.Review | undefined => {
  const min = agent.reviewer?.options?.minConfidence ?? Reviewer.defaultMinConfidence
  return (trace.reviews ?? []).find((review) =>
    review.id === id && review.seq < seq && !(review.review.verdict === "safe" && review.review.confidence >= min)
  )?.review
}

/** Whether the grant's predicate holds on the call's arguments, by the reducer's rule (`Grant.check` on a conversation of the grant, then the call). */
const holds = (grant: GrantRecord, call: { readonly id: string; readonly name: string; readonly arguments: string }): boolean => {
  const options: GrantRules.Options = { id: grant.id, tool: "*", where: grant.where, by: grant.by, at: grant.at, expiresAt: grant.expiresAt }
  const given = Messages.grant([Messages.user("")], options)
  if (Result.isFailure(given)) return false
  const part = Messages.toolCall({ id: call.id, name: call.name, arguments: call.arguments })
  return Result.isSuccess(GrantRules.check([...given.success, Messages.assistant([part])], grant.id, part, grant.at))
}

/** The first state where call `id` was seen. */
const firstSeen = (trace: Held, id: string): number =>
  trace.states.find((state) => Messages.findTool(state.messages, id) !== undefined)?.seq ?? Infinity

/**
 * Why grant `grantId` could not approve the call that ran (`run`), judged by what the scenario did, not
 * by what the messages say: it was never given, was revoked before the run, had expired (or not begun)
 * when it ran, was given after the call was proposed, or does not cover its tool or arguments.
 */
export const grantProblem = (
  trace: Held,
  grantId: string,
  call: { readonly id: string; readonly name: string; readonly arguments: string },
  run: { readonly seq: number; readonly at: number }
): string | undefined => {
  const grant = (trace.grants ?? []).find((given) => given.id === grantId && given.accepted && given.seq < run.seq)
  if (grant === undefined) return "which the scenario never gave before it ran"
  const revoked = (trace.revokes ?? []).find((revoke) => revoke.grant === grantId && revoke.accepted && revoke.seq < run.seq)
  if (revoked !== undefined) return `which ${revoked.by} revoked at ${revoked.at}, before it ran`
  if (!(grant.at <= run.at && run.at < grant.expiresAt)) return `which is in force from ${grant.at} until ${grant.expiresAt}, but it ran at ${run.at}`
  if (firstSeen(trace, call.id) <= grant.seq) return "which was given after the call was proposed"
  if (!GrantRules.matchesTool(grant.tool, call.name)) return `which covers tool '${grant.tool}', not '${call.name}'`
  if (grant.where !== undefined && !holds(grant, call)) {
    return `which covers arguments ${JSON.stringify(grant.where)}, not these`
  }
  return undefined
}

/**
 * The reviewer's answers as code for a test, in the order it was asked (the model of `Reviewer.Options`):
 * no lines when it was never asked.
 */
export const reviewerCode = (trace: Held): ReadonlyArray<string> => {
  const reviews = trace.reviews ?? []
  if (reviews.length === 0) return []
  return [
    "",
    "The reviewer's model (Reviewer.Options.model), in the order it was asked:",
    "MockLanguageModel.make([",
    ...reviews.map((review) => `  MockLanguageModel.text(${JSON.stringify(answer(review.review))}), // ${review.id} ${review.name}`),
    "])"
  ]
}
