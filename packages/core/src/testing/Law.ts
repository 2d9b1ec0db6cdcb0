/**
 * The laws of the loop, checked on what a scenario did to your agent (`Trace`):
 * one function per law, each giving the ways the traces break it (none: it
 * holds), `all` of them, and `report`, a failure as a script to paste into a
 * test. A law checks what happened, not how: the runs are those your handlers
 * saw (the kit wraps them), the decisions those the scenario took, so a bug
 * anywhere between (a strategy, a middleware, a decision path, a store) shows.
 *
 * What they do not promise: they see one turn of one conversation, the calls
 * of the scenario's script (not your model's), and a crash only just after a
 * checkpoint was saved (on the worker path also just before one); grants are given only to an
 * agent that takes them (`Agent.grants`, `grant`, `revoke`).
 *
 * @since 0.3.0
 */
import * as DecisionPolicy from "../turn/DecisionPolicy.js"
import * as Grants from "../turn/GrantRules.js"
import * as Messages from "../turn/Messages.js"
import * as Agent from "./Agent.js"
import * as Governance from "./internal/governance.js"
import * as LateApproval from "./internal/lateApproval.js"
import * as Structured from "./internal/structured.js"
import * as Scenario from "./Scenario.js"
import * as Trace from "./Trace.js"
import * as LeaseLaw from "./internal/leaseLaw.js"

/**
 * A law: a name, what it promises, and its check (the ways the traces break it).
 *
 * @category models
 * @since 0.3.0
 */
export interface Law {
  readonly name: string
  readonly promise: string
  readonly check: (agent: Agent.Agent, traces: Trace.Traces) => ReadonlyArray<string>
}

/**
 * A law the traces broke, and how.
 *
 * @category models
 * @since 0.3.0
 */
export interface Violation {
  readonly law: string
  readonly detail: string
}

const ended = new Set(["Completed", "Failed", "Rejected", "Cancelled", "Expired"])
const unrun = new Set(["Rejected", "Cancelled", "Expired"])

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The call with `id` as first proposed, from the states seen. */
const proposed = (trace: Trace.Trace, id: string): Messages.ToolCallPart | undefined => {
  for (const state of trace.states) {
    const call = Messages.findTool(state.messages, id)
    if (call !== undefined) return call
  }
  return undefined
}

/** The statuses of the call with `id` in every state seen before `seq`. */
const statusesBefore = (trace: Trace.Trace, id: string, seq: number): ReadonlyArray<Messages.ToolCallPart> =>
  trace.states.flatMap((state) => {
    if (state.seq > seq) return []
    const call = Messages.findTool(state.messages, id)
    return call === undefined ? [] : [call]
  })

const allowed = (
  policy: DecisionPolicy.DecisionPolicy | undefined,
  kind: "approve" | "edit",
  who: Messages.Identity,
  requester: Messages.Identity
): boolean => {
  if (policy === undefined) return true
  if (policy.notRequester === true && who.id === requester.id) return false
  const deciders = kind === "edit" ? policy.edit ?? policy.approve : policy.approve
  if (deciders === undefined) return true
  return (deciders.ids ?? []).includes(who.id) || (deciders.roles ?? []).some((role) => (who.roles ?? []).includes(role))
}

/**
 * A call that needs a person (your `mustAsk`, or the turn sent it to one) runs only after approvals that
 * meet its policy (yours, else the one fixed on it): enough distinct allowed deciders, none refusing it,
 * and it runs with exactly the arguments they approved (an edit's, else the model's). A call your reviewer
 * did not clear (anything but a confident `safe`) is one the turn sent to a person. A grant that settled the
 * call counts as one approval by its grantor only if the scenario gave it before the call was proposed,
 * did not revoke it before the call ran, the call ran while it was in force, and it covers the call's
 * tool and arguments.
 *
 * @category laws
 * @since 0.3.0
 */
export const approvedBeforeRun: Law = {
  name: "approvedBeforeRun",
  promise: "a call sent to a person runs only after decisions that meet its policy, with exactly the arguments decided",
  check: (agent, { stored }) =>
    stored.runs.flatMap((run) => {
      const call = proposed(stored, run.id)
      if (call === undefined) return [`${run.id} ran but was never seen in the conversation`]
      const promised = agent.mustAsk?.({ id: run.id, name: run.name, arguments: parse(call.arguments) }) ?? false
      const before = statusesBefore(stored, run.id, run.seq)
      const reviewed = Governance.reviewerAsked(agent, stored, run.id, run.seq)
      const sent = before.some((seen) => seen.status._tag === "AwaitingApproval") || reviewed !== undefined
      if (promised === false && !sent) return []
      const grant = before.map(Grants.settledBy).filter((id) => id !== undefined).at(-1)
      const problem = grant === undefined ? undefined : Governance.grantProblem(stored, grant, { id: run.id, name: run.name, arguments: call.arguments }, run)
      if (problem !== undefined) return [`${run.id} (${run.name} ${call.arguments}) ran on grant ${grant}, ${problem}`]
      const fixed = before.map((seen) => DecisionPolicy.of(seen)).find((policy) => policy !== undefined)
      const policy = typeof promised === "object" ? promised : fixed
      const decided = stored.decisions.filter((decision) => decision.id === run.id && decision.accepted && decision.seq < run.seq)
      const refused = decided.find((decision) => decision.kind === "reject" || decision.kind === "cancel")
      if (refused !== undefined) return [`${run.id} ran after it was ${refused.kind === "reject" ? "rejected" : "cancelled"} by ${refused.by.id}`]
      const tool = Agent.toolOf(agent, run.name)
      let text = call.arguments
      const yeses = new Map<string, Set<string>>()
      const grantor = grant === undefined ? undefined : stored.grants?.find((given) => given.id === grant)?.by
      if (grantor !== undefined && allowed(policy, "approve", { id: grantor }, Agent.requesterOf(agent))) {
        yeses.set(Trace.normalArguments(tool, call.arguments), new Set([grantor]))
      }
      for (const decision of decided) {
        if (decision.kind === "edit") text = decision.arguments ?? text
        const key = Trace.normalArguments(tool, text)
        if (!allowed(policy, decision.kind === "edit" ? "edit" : "approve", decision.by, Agent.requesterOf(agent))) continue
        yeses.set(key, (yeses.get(key) ?? new Set()).add(decision.by.id))
      }
      const quorum = policy?.quorum ?? 1
      const votes = yeses.get(run.arguments)?.size ?? 0
      if (decided.length === 0 && grantor === undefined) {
        return [`${run.id} (${run.name} ${call.arguments}) ran without any approval${reviewed === undefined ? "" : ` (the reviewer answered ${reviewed.verdict})`}`]
      }
      if (run.arguments !== Trace.normalArguments(tool, text)) return [`${run.id} ran with ${run.arguments}, but what was approved is ${text}`]
      if (votes < quorum) return [`${run.id} ran with ${votes} allowed approval(s) of ${run.arguments}; its policy ${JSON.stringify(policy)} needs ${quorum}`]
      return []
    })
}

/**
 * No call runs twice, across pauses, crashes and resumes; an `idempotent` tool's call may run again
 * after a crash, each time as a later `attempt`, at most its `maxAttempts` in all.
 *
 * @category laws
 * @since 0.3.0
 */
export const noDoubleRun: Law = {
  name: "noDoubleRun",
  promise: "no call runs twice, except an idempotent tool's documented retries",
  check: (agent, traces) =>
    Object.values(traces).flatMap((trace: Trace.Trace | undefined) => {
      if (trace === undefined) return []
      const byId = new Map<string, Array<Trace.Run>>()
      for (const run of trace.runs) byId.set(run.id, [...(byId.get(run.id) ?? []), run])
      return [...byId].flatMap(([id, runs]) => {
        if (runs.length < 2) return []
        const tool = Agent.toolOf(agent, runs[0]!.name)
        const rising = runs.every((run, i) => i === 0 || run.attempt > runs[i - 1]!.attempt)
        if (tool?.idempotent === true && rising && runs.length <= tool.maxAttempts) return []
        return [`${id} ran ${runs.length} times on the ${trace.mode} path (attempts ${runs.map((run) => run.attempt).join(", ")})`]
      })
    })
}

/**
 * A rejected, cancelled or expired call never runs, and when the model is called again it is told which.
 * An approval given at or after the call's approval deadline (`approve-late`) counts for nothing: the
 * call never runs and the model is told it expired.
 *
 * @category laws
 * @since 0.3.0
 */
export const refusedNeverRuns: Law = {
  name: "refusedNeverRuns",
  promise: "a rejected, cancelled or expired call never runs and the model is told which",
  check: (_agent, { stored }) => {
    const out: Array<string> = []
    for (const message of stored.final) {
      for (const call of Messages.toolCallsOf(message)) {
        if (!unrun.has(call.status._tag)) continue
        if (stored.runs.some((run) => run.id === call.id)) out.push(`${call.id} is ${call.status._tag} but ran`)
        const since = stored.states.find((state) => Messages.findTool(state.messages, call.id)?.status._tag === call.status._tag)?.seq ?? Infinity
        const told = stored.requests.filter((request) => request.seq > since).map((request) => Messages.findTool(request.request.messages, call.id))
        const seen = told.filter((found) => found !== undefined).at(-1)
        if (seen !== undefined && seen.status._tag !== call.status._tag) {
          out.push(`${call.id} is ${call.status._tag}, but the model was last told it is ${seen.status._tag}`)
        }
      }
    }
    for (const decision of stored.decisions) {
      if (!decision.accepted || (decision.kind !== "reject" && decision.kind !== "cancel")) continue
      if (stored.runs.some((run) => run.id === decision.id && run.seq > decision.seq)) out.push(`${decision.id} ran after an accepted ${decision.kind}`)
    }
    out.push(...LateApproval.violations(stored))
    return out
  }
}

/**
 * A scheduled call never runs before its time, unless a person approved it to run early.
 *
 * @category laws
 * @since 0.3.0
 */
export const notBeforeTime: Law = {
  name: "notBeforeTime",
  promise: "a scheduled call never runs before its time",
  check: (_agent, { stored }) =>
    stored.runs.flatMap((run) => {
      const early = stored.decisions.some((decision) => decision.id === run.id && decision.accepted && decision.seq < run.seq && decision.kind !== "reject")
      if (early) return []
      const scheduled = statusesBefore(stored, run.id, run.seq).flatMap((call) => call.status._tag === "Scheduled" ? [call.status.at] : [])
      const at = scheduled.at(-1)
      return at !== undefined && run.at < at ? [`${run.id} was scheduled for ${at} but ran at ${run.at}`] : []
    })
}

/**
 * The turn calls the model at most `maxSteps` times after a user message, and only once every call of its last response is resolved.
 *
 * @category laws
 * @since 0.3.0
 */
export const stepsBounded: Law = {
  name: "stepsBounded",
  promise: "the turn ends within maxSteps, and every call of a response is resolved before the model is called again",
  check: (_agent, traces) =>
    Object.values(traces).flatMap((trace: Trace.Trace | undefined) => {
      if (trace === undefined) return []
      const out: Array<string> = []
      for (const { request, seq } of trace.requests) {
        // A step is a model call since the last user message (a steering message starts a new count).
        const step = Messages.turnResponses(request.messages).length + 1
        if (step > trace.scenario.maxSteps) out.push(`model request #${seq} on the ${trace.mode} path is step ${step}; maxSteps is ${trace.scenario.maxSteps}`)
        const previous = Messages.turnResponses(request.messages).at(-1)
        const open = previous === undefined ? [] : Messages.toolCallsOf(previous).filter((call) => !ended.has(call.status._tag))
        if (open.length > 0) out.push(`model request #${seq} was made with ${open.map((call) => `${call.id} ${call.status._tag}`).join(", ")} unresolved`)
      }
      return out
    })
}

/**
 * Nothing a saved checkpoint recorded is lost: a call saved as completed is completed at the end, whatever crashed.
 *
 * @category laws
 * @since 0.3.0
 */
export const resultsKept: Law = {
  name: "resultsKept",
  promise: "a result once checkpointed survives every crash and resume",
  check: (_agent, { stored }) => {
    const done = new Set(stored.saved.flatMap((save) =>
      save.messages.flatMap((message) => Messages.toolCallsOf(message).filter((call) => call.status._tag === "Completed").map((call) => call.id))
    ))
    return [...done].flatMap((id) => {
      const status = Messages.findTool(stored.final, id)?.status._tag
      return status === "Completed" ? [] : [`${id} was saved as Completed but ends ${status ?? "missing"}`]
    })
  }
}

/**
 * A turn of an agent with an `output` Schema that ends with a structured answer gives your code a
 * value that decodes with that Schema (a value of its type), or a typed failure (a tagged error such
 * as `StructuredOutputError`); never a value that does not decode, never a defect.
 *
 * @category laws
 * @since 0.3.0
 */
export const structuredAnswer: Law = {
  name: "structuredAnswer",
  promise: "a structured answer is a value that decodes with the agent's output Schema, or a typed failure",
  check: (agent, traces) =>
    Object.values(traces).flatMap((trace: Trace.Trace | undefined) => {
      if (trace === undefined || agent.output === undefined) return []
      return (trace.structured ?? []).flatMap(({ outcome, text }) => {
        const answer = text === undefined ? "" : ` (the model answered ${JSON.stringify(text)})`
        if (outcome._tag === "Failure") return outcome.typed ? [] : [`the structured answer on the ${trace.mode} path failed with a defect, not a typed error: ${outcome.error}`]
        return Structured.decodes(agent.output!, outcome.value)
          ? []
          : [`the structured answer on the ${trace.mode} path is ${Trace.canonical(outcome.value)}, which does not decode with the agent's output${answer}`]
      })
    })
}

const runsOf = (trace: Trace.Trace) => trace.runs.map(({ arguments: args, attempt, id, name, outcome }) => ({ id, name, arguments: args, attempt, outcome }))

/**
 * Without crashes, the plain, stored (each pause through JSON and the store) and streamed paths agree:
 * the same runs, the same ends, the same messages at the end.
 *
 * @category laws
 * @since 0.3.0
 */
export const pathsAgree: Law = {
  name: "pathsAgree",
  promise: "a pause survives encode, store, decode and resume as in memory, and the plain, checkpointed and streamed paths agree",
  check: (_agent, { plain, stored, streamed }) =>
    [plain, streamed].flatMap((other) => {
      if (other === undefined) return []
      const out: Array<string> = []
      if (Trace.canonical(runsOf(other)) !== Trace.canonical(runsOf(stored))) {
        out.push(`the ${other.mode} path ran ${Trace.canonical(runsOf(other))}, the stored path ${Trace.canonical(runsOf(stored))}`)
      }
      const ends = (trace: Trace.Trace) => trace.ends.map((end) => end.outcome).join(" ")
      if (ends(other) !== ends(stored)) out.push(`the ${other.mode} path ended ${ends(other)}, the stored path ${ends(stored)}`)
      else if (Trace.canonical(other.final) !== Trace.canonical(stored.final)) out.push(`the ${other.mode} and stored paths end with different messages`)
      return out
    })
}

/**
 * On the `worker` path (every run through `Worker.resume`): no two processes hold the conversation's
 * lease at once (none takes it before a dead one's lease ran out, and the store refuses a dead one's
 * late save under its old lease), a process that finds it busy runs, asks and saves nothing, and after
 * a takeover nothing completed before the crash runs again, while a call the crash left running is
 * reported interrupted (an idempotent tool's may run again).
 *
 * @category laws
 * @since 0.3.0
 */
export const leaseKept: Law = {
  name: "leaseKept",
  promise: "no two workers run a conversation's turn at once, a busy worker runs nothing, and a takeover runs nothing again",
  check: LeaseLaw.check
}

/**
 * Every law.
 *
 * @category laws
 * @since 0.3.0
 */
export const all: ReadonlyArray<Law> = [approvedBeforeRun, noDoubleRun, refusedNeverRuns, notBeforeTime, stepsBounded, resultsKept, structuredAnswer, pathsAgree, leaseKept]

/**
 * The violations of `laws` (default `all`) in the traces.
 *
 * @category utils
 * @since 0.3.0
 */
export const check = (agent: Agent.Agent, traces: Trace.Traces, laws: ReadonlyArray<Law> = all): ReadonlyArray<Violation> =>
  laws.flatMap((law) => law.check(agent, traces).map((detail) => ({ law: law.name, detail })))

/**
 * A failure, readable: the broken laws, the model's script as `MockLanguageModel` code, what happened
 * (decisions, clock moves, crashes, how each run of the turn ended; grants and revocations as
 * `Messages.grant` / `Messages.revokeGrant` code), the reviewer's answers as its model's script when it
 * was asked, the scenario to replay with
 * `Trace.record`, and `replay` (how to find it again: a seed and path) when given.
 *
 * @category utils
 * @since 0.3.0
 */
export const report = (
  scenario: Scenario.Scenario,
  traces: Trace.Traces,
  violations: ReadonlyArray<Violation>,
  replay?: string
): string =>
  [
    "Broken laws:",
    ...violations.map((violation) => `  ${violation.law}: ${violation.detail}`),
    "",
    `The model (maxSteps ${scenario.maxSteps}, request ${JSON.stringify(scenario.request)}):`,
    Scenario.scriptCode(scenario),
    ...Governance.reviewerCode(traces.stored),
    "",
    `What happened (${traces.stored.mode} path${scenario.firstCrash === undefined ? "" : `, the first run crashing at checkpoint ${scenario.firstCrash}`}):`,
    ...traces.stored.log.map((line) => `  ${line}`),
    ...traces.stored.runs.map((run) => `  ran ${run.id} ${run.name} ${run.arguments} at ${run.at} (attempt ${run.attempt}, ${run.outcome})`),
    "",
    `The scenario (Trace.record(agent, scenario, ${JSON.stringify(traces.stored.mode)}) replays it):`,
    Scenario.code(scenario),
    ...(replay === undefined ? [] : ["", replay])
  ].join("\n")
