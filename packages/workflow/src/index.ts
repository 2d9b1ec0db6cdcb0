/**
 * chat-ts on Effect's durable execution: a turn as an `effect/workflow`
 * workflow whose model calls and tool calls are recorded once and whose pauses
 * wait for people and times on any runner of an `effect/cluster`.
 *
 * @since 0.1.0
 */

/** Durable turns: the workflow, its layer and its client side. */
export * as ChatWorkflow from "./ChatWorkflow.js"

/** A person's decision about one call of a durable turn. */
export * as Decision from "./Decision.js"

/** The errors of this package. */
export * as WorkflowError from "./WorkflowError.js"
