/**
 * The constructors of `Turn.Decision`, `Turn.Event` and `Turn.Outcome`, written out rather than
 * taken from `Data.taggedEnum`, which makes a constructor through a Proxy on every call, each
 * making its object with a spread (`{ ...props, _tag }`, about 0.7 µs a call on Node 24): on the
 * turn's path (several events and outcomes a step) that was about a sixth of a step's CPU
 * (packages/bench, scenario 7, `node --cpu-prof`).
 *
 * Each makes the variant's `_tag`, then its fields in the order the type declares them, an
 * optional one only when given: the same object, with the same keys in the same order, as
 * `Data.taggedEnum`'s (test/TurnConstructors.test.ts builds every variant both ways and compares
 * them, so a field added to a variant and not here fails there). `Turn` adds `$is` and `$match`
 * from `Data.taggedEnum` and checks each constructor against its variant
 * (`Data.TaggedEnum.Constructor`): the field types are parameters here, so this module needs
 * nothing from `Turn`.
 */
import type { Mutable } from "effect/Types"

/** Sets `value` on `target` under `key` when it is given (for optional fields, without a spread). */
const setDefined = <T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void => {
  if (value !== undefined) target[key] = value
}

/** The constructors of `Turn.Decision`'s variants. */
export const decision = {
  Execute: (): { readonly _tag: "Execute" } => ({ _tag: "Execute" }),
  RequireApproval: <X, R, P>(props: {
    readonly expiresAt?: X | undefined
    readonly review?: R | undefined
    readonly policy?: P | undefined
  }) => {
    const out: Mutable<{ readonly _tag: "RequireApproval"; readonly expiresAt?: X; readonly review?: R; readonly policy?: P }> = {
      _tag: "RequireApproval"
    }
    setDefined(out, "expiresAt", props.expiresAt)
    setDefined(out, "review", props.review)
    setDefined(out, "policy", props.policy)
    return out
  },
  Defer: <P>(props: { readonly at: number; readonly policy?: P | undefined }) => {
    const out: Mutable<{ readonly _tag: "Defer"; readonly at: number; readonly policy?: P }> = { _tag: "Defer", at: props.at }
    setDefined(out, "policy", props.policy)
    return out
  },
  Reject: (props: { readonly reason: string }): { readonly _tag: "Reject"; readonly reason: string } => ({
    _tag: "Reject",
    reason: props.reason
  }),
  Invalid: (props: { readonly message: string }): { readonly _tag: "Invalid"; readonly message: string } => ({
    _tag: "Invalid",
    message: props.message
  }),
  Granted: <P>(props: { readonly grant: string; readonly policy?: P | undefined }) => {
    const out: Mutable<{ readonly _tag: "Granted"; readonly grant: string; readonly policy?: P }> = { _tag: "Granted", grant: props.grant }
    setDefined(out, "policy", props.policy)
    return out
  }
}

/** The constructors of `Turn.Event`'s variants. */
export const event = {
  Resume: <I, R>(props: { readonly now: number; readonly invalidEdits?: I | undefined; readonly rerun?: R | undefined }) => {
    const out: Mutable<{ readonly _tag: "Resume"; readonly now: number; readonly invalidEdits?: I; readonly rerun?: R }> = {
      _tag: "Resume",
      now: props.now
    }
    setDefined(out, "invalidEdits", props.invalidEdits)
    setDefined(out, "rerun", props.rerun)
    return out
  },
  ModelResponded: <M>(props: { readonly message: M }): { readonly _tag: "ModelResponded"; readonly message: M } => ({
    _tag: "ModelResponded",
    message: props.message
  }),
  Decided: <D, G>(props: { readonly now: number; readonly decisions: D; readonly grants?: G | undefined }) => {
    const out: Mutable<{ readonly _tag: "Decided"; readonly now: number; readonly decisions: D; readonly grants?: G }> = {
      _tag: "Decided",
      now: props.now,
      decisions: props.decisions
    }
    setDefined(out, "grants", props.grants)
    return out
  },
  ToolSucceeded: <F>(props: { readonly id: string; readonly result: unknown; readonly files?: F | undefined }) => {
    const out: Mutable<{ readonly _tag: "ToolSucceeded"; readonly id: string; readonly result: unknown; readonly files?: F }> = {
      _tag: "ToolSucceeded",
      id: props.id,
      result: props.result
    }
    setDefined(out, "files", props.files)
    return out
  },
  ToolFailed: <F>(props: { readonly id: string; readonly error: unknown; readonly files?: F | undefined }) => {
    const out: Mutable<{ readonly _tag: "ToolFailed"; readonly id: string; readonly error: unknown; readonly files?: F }> = {
      _tag: "ToolFailed",
      id: props.id,
      error: props.error
    }
    setDefined(out, "files", props.files)
    return out
  },
  InputRequested: <Q>(props: { readonly id: string; readonly request: Q }): {
    readonly _tag: "InputRequested"
    readonly id: string
    readonly request: Q
  } => ({ _tag: "InputRequested", id: props.id, request: props.request }),
  InputSettled: (props: { readonly id: string; readonly requestId: string }): {
    readonly _tag: "InputSettled"
    readonly id: string
    readonly requestId: string
  } => ({ _tag: "InputSettled", id: props.id, requestId: props.requestId }),
  InputArrived: <I, M>(props: { readonly input: I; readonly interrupted?: M | undefined }) => {
    const out: Mutable<{ readonly _tag: "InputArrived"; readonly input: I; readonly interrupted?: M }> = {
      _tag: "InputArrived",
      input: props.input
    }
    setDefined(out, "interrupted", props.interrupted)
    return out
  }
}

/** The constructors of `Turn.Outcome`'s variants. */
export const outcome = {
  CallModel: (props: { readonly step: number }): { readonly _tag: "CallModel"; readonly step: number } => ({
    _tag: "CallModel",
    step: props.step
  }),
  Decide: <C>(props: { readonly calls: C }): { readonly _tag: "Decide"; readonly calls: C } => ({ _tag: "Decide", calls: props.calls }),
  RunTools: <C>(props: { readonly calls: C }): { readonly _tag: "RunTools"; readonly calls: C } => ({
    _tag: "RunTools",
    calls: props.calls
  }),
  AwaitTools: <I>(props: { readonly ids: I }): { readonly _tag: "AwaitTools"; readonly ids: I } => ({ _tag: "AwaitTools", ids: props.ids }),
  Wait: <R>(props: { readonly until: number; readonly reason: R }): { readonly _tag: "Wait"; readonly until: number; readonly reason: R } => ({
    _tag: "Wait",
    until: props.until,
    reason: props.reason
  }),
  Pause: <R, U>(props: { readonly reason: R; readonly usage: U }): { readonly _tag: "Pause"; readonly reason: R; readonly usage: U } => ({
    _tag: "Pause",
    reason: props.reason,
    usage: props.usage
  }),
  Complete: <M, U>(props: { readonly response: M; readonly usage: U }): {
    readonly _tag: "Complete"
    readonly response: M
    readonly usage: U
  } => ({ _tag: "Complete", response: props.response, usage: props.usage }),
  StepLimit: (props: { readonly maxSteps: number }): { readonly _tag: "StepLimit"; readonly maxSteps: number } => ({
    _tag: "StepLimit",
    maxSteps: props.maxSteps
  }),
  InvalidEdits: <E>(props: { readonly edits: E }): { readonly _tag: "InvalidEdits"; readonly edits: E } => ({
    _tag: "InvalidEdits",
    edits: props.edits
  }),
  PendingCalls: <I>(props: { readonly ids: I }): { readonly _tag: "PendingCalls"; readonly ids: I } => ({
    _tag: "PendingCalls",
    ids: props.ids
  }),
  InputLimit: (props: { readonly maxInputRestarts: number }): { readonly _tag: "InputLimit"; readonly maxInputRestarts: number } => ({
    _tag: "InputLimit",
    maxInputRestarts: props.maxInputRestarts
  })
}
