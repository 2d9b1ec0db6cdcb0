/**
 * Property tests of your agent against the loop's laws, with fast-check (an
 * optional peer dependency: only this entry point, `@chat-ts/core/testing/Properties`,
 * needs it). Arbitraries built from your toolkit: each tool's parameter
 * Schema gives valid arguments (through `effect/Arbitrary`) and near-valid
 * ones (a key missing, of the wrong type, given twice, `__proto__`, an unknown
 * key, not JSON), and calls to a tool nobody serves; model scripts of one or
 * more responses with parallel calls and cut-short finishes; people's decisions
 * (approve, edit with valid and invalid arguments, reject with a reason,
 * cancel, approve late: past the call's deadline, by several deciders for
 * quorum and four-eyes); for an agent with an `output` Schema, final answers
 * of valid JSON for it and near-valid ones (a key missing, of the wrong type,
 * given twice, `__proto__`, not JSON); steering messages
 * while paused; clock moves before,
 * at and after the next schedule or deadline; crashes at any checkpoint
 * (just after its save; on the worker path, through `Worker.resume` and its
 * leases, just before it too); for an agent that takes grants (`Agent.grants`,
 * `grant`, `revoke`), grants of a tool (by name or pattern, some for matching
 * arguments only) with an expiry, and their revocation; for an agent with a
 * reviewer, its answer about each call.
 * `check` runs the laws (`Law.all`) on every generated scenario and gives the
 * shrunk counterexample as a readable report; `checkAll` throws it.
 *
 * @since 0.3.0
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import type * as Tool from "../tools/Tool.js"
import * as Agent from "./Agent.js"
import * as GovernanceArbitraries from "./internal/governanceArbitraries.js"
import * as Law from "./Law.js"
import * as Scenario from "./Scenario.js"
import * as Structured from "./internal/structured.js"
import * as Trace from "./Trace.js"

/**
 * Settings of the generated scenarios and of the run.
 *
 * @category models
 * @since 0.3.0
 */
export interface Options {
  /** How many scenarios (default 50). */
  readonly numRuns?: number | undefined
  /** The seed (default: fast-check's random one, printed on failure). */
  readonly seed?: number | undefined
  /** A counterexample's path, with its `seed`, to replay it. */
  readonly path?: string | undefined
  /** The laws to check (default `Law.all`). */
  readonly laws?: ReadonlyArray<Law.Law> | undefined
  /** Valid arguments of some tools, by tool name, in place of those their Schema gives. */
  readonly arguments?: Readonly<Record<string, fc.Arbitrary<unknown>>> | undefined
  /** The user's request (default `"Go."`). */
  readonly request?: string | undefined
  /** The most responses with tool calls (default 3). */
  readonly maxResponses?: number | undefined
  /**
   * Which scenarios are played on the `worker` path too (every run through `Worker.resume` under
   * the store's leases, checked by every law, `Law.leaseKept` among them): `"crashes"` (default),
   * those where a process dies; `"always"`; `"never"`.
   */
  readonly worker?: "crashes" | "always" | "never" | undefined
}

/**
 * A pool of valid parameter values of a tool, from its Schema (`effect/Arbitrary`, seeded by the tool's name), encoded;
 * `{}` alone for a Schema it cannot sample (give yours in `Options.arguments`).
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const validArguments = (tool: Tool.Any): fc.Arbitrary<unknown> => {
  const schema = tool.parameters as Schema.Codec<unknown, unknown>
  const encode = Schema.encodeUnknownSync(schema)
  const sampled = Effect.runSync(Effect.orElseSucceed(
    Effect.suspend(() => Arbitrary.sampleEffect(Arbitrary.schema(schema), { count: 48, seed: tool.name, size: 4 })),
    () => []
  ).pipe(Effect.catchDefect(() => Effect.succeed([]))))
  const pool = sampled.flatMap((value) => {
    try {
      return [encode(value)]
    } catch {
      return []
    }
  })
  return pool.length === 0 ? fc.constant({}) : fc.constantFrom(...pool)
}

/** `arbitrary`'s value `percent` % of the time, else `undefined` (shrinking towards `undefined`). */
const sometimes = <A>(arbitrary: fc.Arbitrary<A>, percent: number): fc.Arbitrary<A | undefined> =>
  fc.oneof({ withCrossShrink: true }, { weight: 100 - percent, arbitrary: fc.constant(undefined) }, { weight: percent, arbitrary })

const wrongType = (value: unknown): unknown =>
  typeof value === "string" ? 42 : typeof value === "number" ? String(value) : Array.isArray(value) ? { not: "a list" } : value === null ? [] : "wrong"

/** Arguments close to valid ones, as JSON text: one mutation of a valid value. */
const mutate = (value: unknown, kind: number): string => {
  const object = value !== null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : {}
  const keys = Object.keys(object)
  const first = keys[0]
  const text = JSON.stringify(object)
  const rest = text.length > 2 ? `,${text.slice(1)}` : "}"
  switch (kind) {
    case 0:
      return text.slice(0, Math.max(1, text.length - 1))
    case 1:
      return JSON.stringify(Object.fromEntries(Object.entries(object).slice(1)))
    case 2:
      return first === undefined ? "[]" : JSON.stringify({ ...object, [first]: wrongType(object[first]) })
    case 3:
      return first === undefined ? `{"a":1,"a":2}` : `{${JSON.stringify(first)}:${JSON.stringify(wrongType(object[first]))}${rest}`
    case 4:
      return `{"__proto__":{"polluted":true}${rest}`
    default:
      return JSON.stringify({ ...object, unexpected: true })
  }
}

/**
 * Arguments of a tool as the model sends them: mostly valid, sometimes near-valid.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const argumentsOf = (tool: Tool.Any, options: Options = {}): fc.Arbitrary<string> => {
  const valid = options.arguments?.[tool.name] ?? validArguments(tool)
  return fc.oneof(
    { weight: 5, arbitrary: valid.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.nat({ max: 5 })).map(([value, kind]) => mutate(value, kind)) }
  )
}

/**
 * A call of the agent's tools (now and then of a tool nobody serves), without its id.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const call = (agent: Agent.Agent, options: Options = {}): fc.Arbitrary<Omit<Scenario.Call, "id">> =>
  fc.oneof(
    ...agent.tools.list.map((tool) => ({
      weight: 4,
      arbitrary: argumentsOf(tool, options).map((args) => ({ name: tool.name, arguments: args }))
    })),
    { weight: 1, arbitrary: fc.constant({ name: "no_such_tool", arguments: "{}" }) }
  )

/**
 * A response with one to three (parallel) calls, maybe text, maybe cut short.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const response = (agent: Agent.Agent, options: Options = {}): fc.Arbitrary<Omit<Scenario.Response, "calls"> & { readonly calls: ReadonlyArray<Omit<Scenario.Call, "id">> }> =>
  fc.record({
    text: sometimes(fc.constantFrom("Let me do that.", "On it."), 30),
    calls: fc.array(call(agent, options), { minLength: 1, maxLength: 3 }),
    finishReason: sometimes(fc.constant("length" as const), 10)
  })

/**
 * A person's decision: approve, edit (valid or near-valid arguments, per tool), reject with a reason, cancel.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const decide = (agent: Agent.Agent, options: Options = {}): fc.Arbitrary<Scenario.Decide> => {
  const deciders = Agent.decidersOf(agent).length
  // One edit per tool: the decision uses the text of the picked call's tool.
  const edits = fc.record(Object.fromEntries(agent.tools.list.map((tool) => [tool.name, argumentsOf(tool, options)]))) as fc.Arbitrary<Record<string, string>>
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ _tag: fc.constant("Decide" as const), kind: fc.constant("approve" as const), call: fc.nat({ max: 2 }), by: fc.nat({ max: deciders - 1 }) }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Decide" as const), kind: fc.constant("edit" as const), call: fc.nat({ max: 2 }), by: fc.nat({ max: deciders - 1 }), arguments: edits }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Decide" as const), kind: fc.constant("reject" as const), call: fc.nat({ max: 2 }), by: fc.nat({ max: deciders - 1 }), reason: fc.constantFrom("no", "not now") }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Decide" as const), kind: fc.constant("cancel" as const), call: fc.nat({ max: 2 }), by: fc.nat({ max: deciders - 1 }) }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Decide" as const), kind: fc.constant("approve-late" as const), call: fc.nat({ max: 2 }), by: fc.nat({ max: deciders - 1 }) }) }
  )
}

/**
 * A pool of valid answers for an `output` Schema (`effect/Arbitrary`), encoded and as the model sends
 * them (a root that is not an object wrapped in `{ "value": … }`); `{}` alone for a Schema it cannot sample.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const validAnswers = (output: Schema.Top): fc.Arbitrary<unknown> => {
  const schema = output as Schema.Codec<unknown, unknown>
  const encode = Schema.encodeUnknownSync(schema)
  const sampled = Effect.runSync(Effect.orElseSucceed(
    Effect.suspend(() => Arbitrary.sampleEffect(Arbitrary.schema(schema), { count: 48, seed: "output", size: 4 })),
    () => []
  ).pipe(Effect.catchDefect(() => Effect.succeed([]))))
  const pool = sampled.flatMap((value) => {
    try {
      return [Structured.toWire(output, encode(value))]
    } catch {
      return []
    }
  })
  return pool.length === 0 ? fc.constant({}) : fc.constantFrom(...pool)
}

/**
 * The model's final answer for an `output` Schema, as JSON text: mostly valid, often near-valid
 * (not JSON, a key missing, of the wrong type, given twice, a `__proto__` key).
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const finalAnswer = (output: Schema.Top): fc.Arbitrary<string> => {
  const valid = validAnswers(output)
  return fc.oneof(
    { weight: 3, arbitrary: valid.map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: fc.tuple(valid, fc.nat({ max: 4 })).map(([value, kind]) => mutate(value, kind)) }
  )
}

/**
 * Two people approve the same call one after the other (a quorum's votes, a four-eyes check).
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const votes = (agent: Agent.Agent): fc.Arbitrary<ReadonlyArray<Scenario.Decide>> => {
  const deciders = Agent.decidersOf(agent).length
  return fc.record({ call: fc.nat({ max: 2 }), first: fc.nat({ max: deciders - 1 }), second: fc.nat({ max: deciders - 1 }) }).map(({ call, first, second }) => [
    { _tag: "Decide", kind: "approve", call, by: first },
    { _tag: "Decide", kind: "approve", call, by: second }
  ])
}

/**
 * A clock move: before, at or after the next time the turn waits on, or by a fixed amount.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const clock: fc.Arbitrary<Scenario.Clock> = fc.record({
  _tag: fc.constant("Clock" as const),
  to: fc.constantFrom("before" as const, "at" as const, "after" as const),
  millis: fc.constantFrom(1, 1_000, 60_000, 86_400_000)
})

/**
 * A steering message from the requester, cancelling the undecided calls or queued behind them.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const steer: fc.Arbitrary<Scenario.Steer> = fc.record({
  _tag: fc.constant("Steer" as const),
  rule: fc.constantFrom("cancel" as const, "queue" as const),
  text: fc.constantFrom("Actually, stop.", "Also look at A-2.")
})

/**
 * A crash at one of the first checkpoints of the next resume.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const crash: fc.Arbitrary<Scenario.Crash> = fc.record({ _tag: fc.constant("Crash" as const), checkpoint: fc.integer({ min: 1, max: 6 }) })

/**
 * A grant of one of the agent's tools while the turn is paused: by name, pattern or `*`, for any
 * arguments or those matching a valid value's first key, expiring after a second, a minute or an hour.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const grant = (agent: Agent.Agent): fc.Arbitrary<Scenario.Grant> => GovernanceArbitraries.grant(agent, validArguments)

/**
 * A revocation of one of the grants given so far.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const revoke = (agent: Agent.Agent): fc.Arbitrary<Scenario.Revoke> => GovernanceArbitraries.revoke(agent)

/**
 * The reviewer's answer about a call other than a confident `safe` (an unsure `safe`, `needs-person`, `refuse`, no verdict).
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const review: fc.Arbitrary<Scenario.Review> = GovernanceArbitraries.review

/**
 * One round while the turn is paused: some decisions, maybe a steering message, a clock move, a crash, then a resume.
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const round = (agent: Agent.Agent, options: Options = {}): fc.Arbitrary<ReadonlyArray<Scenario.Step>> =>
  fc.record({
    decisions: fc.array(fc.oneof({ weight: 3, arbitrary: decide(agent, options).map((one) => [one]) }, { weight: 1, arbitrary: votes(agent) }), { maxLength: 3 })
      .map((groups) => groups.flat()),
    steer: sometimes(steer, 30),
    clock: sometimes(clock, 40),
    crash: sometimes(crash, 25),
    ...(GovernanceArbitraries.takesGrants(agent) ? { governance: GovernanceArbitraries.governance(agent, validArguments) } : {})
  }).map(({ clock, crash, decisions, governance, steer }: {
    readonly clock: Scenario.Clock | undefined
    readonly crash: Scenario.Crash | undefined
    readonly decisions: ReadonlyArray<Scenario.Step>
    readonly governance?: ReadonlyArray<Scenario.Step> | undefined
    readonly steer: Scenario.Steer | undefined
  }): ReadonlyArray<Scenario.Step> => [
    ...decisions,
    ...(governance ?? []),
    ...(steer === undefined ? [] : [steer]),
    ...(clock === undefined ? [] : [clock]),
    ...(crash === undefined ? [] : [crash]),
    { _tag: "Resume" }
  ])

/**
 * A whole scenario for the agent: the model's responses (each call with its own id), `maxSteps`, a crash
 * in the first run maybe, and up to three rounds while paused; for an agent with an `output` Schema, the
 * model's final answer too (`finalAnswer`).
 *
 * @category arbitraries
 * @since 0.3.0
 */
export const scenario = (agent: Agent.Agent, options: Options = {}): fc.Arbitrary<Scenario.Scenario> =>
  agent.output === undefined
    ? plainScenario(agent, options)
    : fc.tuple(plainScenario(agent, options), finalAnswer(agent.output)).map(([scenario, final]) => ({ ...scenario, final }))

/** A scenario without a structured final answer. */
const plainScenario = (agent: Agent.Agent, options: Options): fc.Arbitrary<Scenario.Scenario> =>
  fc.record({
    responses: fc.array(response(agent, options), { minLength: 1, maxLength: options.maxResponses ?? 3 }),
    maxSteps: fc.integer({ min: 1, max: 6 }),
    firstCrash: sometimes(fc.integer({ min: 1, max: 6 }), 20),
    rounds: fc.array(round(agent, options), { maxLength: 3 }),
    ...(agent.reviewer === undefined ? {} : { reviews: GovernanceArbitraries.reviews((options.maxResponses ?? 3) * 3) }),
    // Which crashes (bit n: the n-th) die just before their save on the worker path; drawn last, so
    // the rest of a seed's scenario is what it was without it.
    before: fc.nat({ max: 7 })
  }).map(({ before, firstCrash, maxSteps, responses, reviews, rounds }: {
    readonly before: number
    readonly firstCrash: number | undefined
    readonly maxSteps: number
    readonly responses: ReadonlyArray<Omit<Scenario.Response, "calls"> & { readonly calls: ReadonlyArray<Omit<Scenario.Call, "id">> }>
    readonly reviews?: ReadonlyArray<Scenario.Review | undefined> | undefined
    readonly rounds: ReadonlyArray<ReadonlyArray<Scenario.Step>>
  }): Scenario.Scenario => ({
    request: options.request ?? "Go.",
    responses: responses.map((response, r) => ({
      ...response,
      calls: response.calls.map((call, n) => GovernanceArbitraries.withReview({ id: `c${r + 1}_${n + 1}`, ...call }, reviews?.[r * 3 + n]))
    })),
    maxSteps,
    ...(firstCrash === undefined ? {} : { firstCrash }),
    steps: crashingBefore(rounds.flat(), before)
  }))

/** The crashes of `steps` whose bit in `mask` is set, marked to die just before their save. */
const crashingBefore = (steps: ReadonlyArray<Scenario.Step>, mask: number): ReadonlyArray<Scenario.Step> => {
  let n = 0
  return steps.map((step) => {
    if (step._tag !== "Crash") return step
    const bit = n++
    return ((mask >> bit) & 1) === 1 ? { ...step, before: true } : step
  })
}

/**
 * What `check` found: whether a law broke, after how many scenarios, and the shrunk counterexample with its report.
 *
 * @category models
 * @since 0.3.0
 */
export interface Result {
  readonly failed: boolean
  /** Scenarios run: all of them when nothing broke, else the first failing one's number. */
  readonly numRuns: number
  readonly seed: number
  readonly counterexample?: Scenario.Scenario | undefined
  readonly violations: ReadonlyArray<Law.Violation>
  /** The readable failure (see `Law.report`); empty when nothing broke. */
  readonly report: string
}

/** Whether the scenario is played on the worker path too. */
const onWorker = (scenario: Scenario.Scenario, worker: Options["worker"]): boolean =>
  worker === "always" || (worker !== "never" && Scenario.crashes(scenario))

/**
 * The scenario's traces and the laws they break: those of `Trace.recordAll`, then the worker path's (as
 * its own `stored` trace, each violation marked so); the traces to report are the first that broke a law.
 */
const recordChecked = (agent: Agent.Agent, scenario: Scenario.Scenario, laws: ReadonlyArray<Law.Law>, worker: Options["worker"]) =>
  Effect.gen(function*() {
    const traces = yield* Trace.recordAll(agent, scenario)
    const violations = Law.check(agent, traces, laws)
    if (!onWorker(scenario, worker)) return { traces, violations }
    const workerTraces: Trace.Traces = { stored: yield* Trace.record(agent, scenario, "worker") }
    const more = Law.check(agent, workerTraces, laws).map((violation) => ({ ...violation, detail: `(worker path) ${violation.detail}` }))
    return { traces: violations.length === 0 && more.length > 0 ? workerTraces : traces, violations: [...violations, ...more] }
  })

/** Records the scenario on its paths and checks the laws; a defect of the agent is a violation too. */
const violationsOf = (agent: Agent.Agent, scenario: Scenario.Scenario, laws: ReadonlyArray<Law.Law>, worker?: Options["worker"]) =>
  Effect.runPromise(recordChecked(agent, scenario, laws, worker)).catch(
    (error: unknown) => ({ traces: undefined, violations: [{ law: "noDefect", detail: String(error) }] })
  )

/** Renumbers the calls' ids (`c<response>_<call>`) after a part was taken out. */
const renumber = (scenario: Scenario.Scenario): Scenario.Scenario => ({
  ...scenario,
  responses: scenario.responses.map((response, r) => ({ ...response, calls: response.calls.map((call, n) => ({ ...call, id: `c${r + 1}_${n + 1}` })) }))
})

const without = <A>(items: ReadonlyArray<A>, index: number): ReadonlyArray<A> => items.filter((_, i) => i !== index)

/** Every scenario one part smaller: a response, a call, a step, the first crash, a text or finish reason less. */
const smaller = (scenario: Scenario.Scenario): ReadonlyArray<Scenario.Scenario> => {
  const out: Array<Scenario.Scenario> = []
  if (scenario.firstCrash !== undefined) {
    const { firstCrash: _crash, ...rest } = scenario
    out.push(rest)
  }
  scenario.steps.forEach((_, i) => out.push({ ...scenario, steps: without(scenario.steps, i) }))
  if (scenario.responses.length > 1) scenario.responses.forEach((_, i) => out.push(renumber({ ...scenario, responses: without(scenario.responses, i) })))
  scenario.responses.forEach((response, i) => {
    const replace = (next: Scenario.Response) => renumber({ ...scenario, responses: scenario.responses.map((old, j) => (j === i ? next : old)) })
    if (response.calls.length > 1) response.calls.forEach((_, n) => out.push(replace({ ...response, calls: without(response.calls, n) })))
    response.calls.forEach(({ review, ...call }, n) => {
      if (review !== undefined) out.push(replace({ ...response, calls: response.calls.map((old, m) => (m === n ? call : old)) }))
    })
    if (response.text !== undefined) out.push(replace({ calls: response.calls, finishReason: response.finishReason }))
    if (response.finishReason !== undefined) out.push(replace({ calls: response.calls, text: response.text }))
  })
  return out
}

/**
 * Makes a failing scenario smaller, one part at a time, while it still breaks the first law it broke
 * (fast-check's shrinking keeps the last responses of a list; this takes any out), on the paths
 * `options.worker` plays (see `Options`).
 *
 * @category checks
 * @since 0.3.0
 */
export const minimize = async (
  agent: Agent.Agent,
  failing: Scenario.Scenario,
  laws: ReadonlyArray<Law.Law> = Law.all,
  budget = 200,
  options: Pick<Options, "worker"> = {}
): Promise<Scenario.Scenario> => {
  // The first law it broke (laws in the order given: the sharpest first) must stay broken.
  const first = (await violationsOf(agent, failing, laws, options.worker)).violations[0]?.law
  if (first === undefined) return failing
  let current = failing
  let tries = 0
  let progress = true
  while (progress && tries < budget) {
    progress = false
    for (const candidate of smaller(current)) {
      if (++tries > budget) break
      const { violations } = await violationsOf(agent, candidate, laws, options.worker)
      if (violations.some((violation) => violation.law === first)) {
        current = candidate
        progress = true
        break
      }
    }
  }
  return current
}

/**
 * Generates scenarios for the agent and checks the laws on each; the first failure is shrunk
 * (fast-check's shrinking, then `minimize`) and reported.
 *
 * @category checks
 * @since 0.3.0
 */
export const check = async (agent: Agent.Agent, options: Options = {}): Promise<Result> => {
  const laws = options.laws ?? Law.all
  const details = await fc.check(
    fc.asyncProperty(scenario(agent, options), async (generated) => (await violationsOf(agent, generated, laws, options.worker)).violations.length === 0),
    {
      numRuns: options.numRuns ?? 50,
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.path === undefined ? {} : { path: options.path })
    }
  )
  if (!details.failed || details.counterexample === null) {
    return { failed: false, numRuns: details.numRuns, seed: details.seed, violations: [], report: "" }
  }
  const counterexample = await minimize(agent, details.counterexample[0], laws, 200, options)
  const { traces, violations } = await violationsOf(agent, counterexample, laws, options.worker)
  const replay = `Replay: Properties.check(agent, { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} }) (found after ${details.numRuns} scenario(s), ${details.numShrinks} shrink(s))`
  const report = traces === undefined
    ? `The agent failed: ${violations.map((violation) => violation.detail).join("; ")}\n${replay}`
    : Law.report(counterexample, traces, violations, replay)
  return { failed: true, numRuns: details.numRuns, seed: details.seed, counterexample, violations, report }
}

/**
 * `check`, failing (a rejected promise, an `Error` whose message is the report) when a law broke.
 *
 * @category checks
 * @since 0.3.0
 */
export const checkAll = async (agent: Agent.Agent, options: Options = {}): Promise<void> => {
  const result = await check(agent, options)
  if (result.failed) throw new Error(`A law of the loop broke.\n${result.report}`)
}
