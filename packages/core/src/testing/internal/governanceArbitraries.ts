/**
 * The property kit's arbitraries for grants and the reviewer (fast-check, like
 * `Properties`, the only module that imports this one): grant steps of the
 * agent's tools (by name, by pattern, or `*`; for any arguments or only those
 * matching a valid value's first key) with an expiry, revocations, and the
 * reviewer's answer about each call.
 *
 * @internal
 */
import fc from "fast-check"
import type * as Tool from "../../tools/Tool.js"
import type * as GrantRules from "../../turn/GrantRules.js"
import * as Agent from "../Agent.js"
import type * as Scenario from "../Scenario.js"

/** Whether the agent takes grants: it says its strategy honours them, or it has a grant or revoke path of its own. */
export const takesGrants = (agent: Agent.Agent): boolean => agent.grants === true || agent.grant !== undefined || agent.revoke !== undefined

/** A predicate on the first key of a valid value (`undefined` when it has no key). */
const firstKeyEquals = (value: unknown): GrantRules.Predicate | undefined => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined
  const [entry] = Object.entries(value as Record<string, unknown>)
  return entry === undefined ? undefined : { path: [entry[0]], equals: entry[1] as never }
}

/** A grant's tool: the name, a pattern its name matches, or every tool. */
const patterns = (name: string): ReadonlyArray<string> => [name, `${name.slice(0, Math.max(1, name.length - 3))}*`, "*"]

/**
 * A grant of one of the agent's tools, for any arguments or (a quarter) those whose first key equals a valid
 * value's, expiring after a second, a minute or an hour.
 */
export const grant = (agent: Agent.Agent, validArguments: (tool: Tool.Any) => fc.Arbitrary<unknown>): fc.Arbitrary<Scenario.Grant> => {
  const deciders = Agent.decidersOf(agent).length
  return fc.oneof(...agent.tools.list.map((tool) =>
    fc.record({
      _tag: fc.constant("Grant" as const),
      tool: fc.constantFrom(...patterns(tool.name)),
      where: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: validArguments(tool).map(firstKeyEquals) }),
      by: fc.nat({ max: deciders - 1 }),
      expiresAfter: fc.constantFrom(1_000, 60_000, 3_600_000)
    }).map(({ where, ...step }): Scenario.Grant => (where === undefined ? step : { ...step, where }))
  ))
}

/** A revocation of one of the grants given so far. */
export const revoke = (agent: Agent.Agent): fc.Arbitrary<Scenario.Revoke> =>
  fc.record({ _tag: fc.constant("Revoke" as const), grant: fc.nat({ max: 2 }), by: fc.nat({ max: Agent.decidersOf(agent).length - 1 }) })

/** The grant steps of a round while the turn is paused: maybe a grant, then maybe a revocation (each in half the rounds). */
export const governance = (agent: Agent.Agent, validArguments: (tool: Tool.Any) => fc.Arbitrary<unknown>): fc.Arbitrary<ReadonlyArray<Scenario.Step>> =>
  fc.record({
    grant: fc.oneof({ withCrossShrink: true }, fc.constant(undefined), grant(agent, validArguments)),
    revoke: fc.oneof({ withCrossShrink: true }, fc.constant(undefined), revoke(agent))
  }).map(({ grant, revoke }) => [...(grant === undefined ? [] : [grant]), ...(revoke === undefined ? [] : [revoke])])

/** The reviewer's answer: a confident or unsure `safe`, `needs-person`, `refuse`, or no verdict. */
export const review: fc.Arbitrary<Scenario.Review> = fc.oneof(
  fc.constant<Scenario.Review>({ verdict: "needs-person", confidence: 0.9 }),
  fc.constant<Scenario.Review>({ verdict: "safe", confidence: 0.5 }),
  fc.constant<Scenario.Review>({ verdict: "refuse", confidence: 0.9 }),
  fc.constant<Scenario.Review>({ verdict: "no-answer", confidence: 0 })
)

/** The reviewer's answers about `count` calls (absent, 60 %: a confident `safe`). */
export const reviews = (count: number): fc.Arbitrary<ReadonlyArray<Scenario.Review | undefined>> =>
  fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: review }), { minLength: count, maxLength: count })

/** The call with the reviewer's answer about it, when there is one. */
export const withReview = (call: Scenario.Call, review: Scenario.Review | undefined): Scenario.Call => (review === undefined ? call : { ...call, review })
