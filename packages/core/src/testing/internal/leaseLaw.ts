/**
 * The check of `Law.leaseKept`, on the `worker` path's record (see
 * `workerPath.ts`): no process takes the conversation while another's lease
 * still holds it, a process that found it busy ran nothing, and after a
 * takeover nothing that completed before the crash runs again, while a call
 * the crash left running is reported interrupted (or, idempotent, run again);
 * a dead process's late save under its old lease is refused.
 *
 * @internal
 */
import * as Messages from "../../turn/Messages.js"
import type * as Agent from "../Agent.js"
import type * as Trace from "../Trace.js"
import type * as WorkerPath from "./workerPath.js"

/** Two leases at once: a process took the conversation while an earlier one's lease, never given back, still held. */
const overlaps = (record: WorkerPath.Record): ReadonlyArray<string> =>
  record.attempts.flatMap((later, j) => {
    if (later.lease === undefined) return []
    return record.attempts.slice(0, j).flatMap((earlier) => {
      if (earlier.lease === undefined || earlier.released || earlier.process === later.process) return []
      return later.at < earlier.lease.expiresAt
        ? [`process ${later.process} took the conversation at ${later.at} while the lease of process ${earlier.process} held it until ${earlier.lease.expiresAt}`]
        : []
    })
  })

/** A dead process's save under its old lease, made while another held the conversation, was accepted. */
const lateAccepted = (record: WorkerPath.Record): ReadonlyArray<string> =>
  record.late.flatMap((late) =>
    late.refused === undefined
      ? [`the store accepted a late save of process ${late.process} under its old lease while process ${late.holder} held the conversation`]
      : []
  )

/** A process that found the conversation busy ran, asked, or saved something. */
const busyRan = (trace: Trace.Trace, record: WorkerPath.Record): ReadonlyArray<string> =>
  record.attempts.flatMap((attempt) => {
    if (attempt.outcome !== "Busy") return []
    const within = (seq: number) => seq > attempt.seq && seq < attempt.end
    const did = [
      ...trace.runs.filter((run) => within(run.seq)).map((run) => `ran ${run.id}`),
      ...trace.requests.filter((request) => within(request.seq)).map(() => "called the model"),
      ...trace.saved.filter((save) => within(save.seq)).map(() => "saved")
    ]
    return did.length === 0 && attempt.saves === 0 ? [] : [`process ${attempt.process} found the conversation busy but ${did.join(", ") || "tried to save"}`]
  })

/** After a crash: a call completed in a save before it, or a non-idempotent call it left running, ran again, or the latter was not reported. */
const rerun = (agent: Agent.Agent, trace: Trace.Trace, record: WorkerPath.Record): ReadonlyArray<string> =>
  record.attempts.flatMap((crashed) => {
    if (crashed.outcome !== "Crashed") return []
    const done = new Set(trace.saved.filter((save) => save.seq < crashed.end).flatMap((save) =>
      save.messages.flatMap((message) => Messages.toolCallsOf(message).filter((call) => call.status._tag === "Completed").map((call) => call.id))
    ))
    const again = trace.runs.filter((run) => run.seq > crashed.end && done.has(run.id))
      .map((run) => `${run.id} completed before process ${crashed.process} died and ran again after the takeover`)
    const lost = record.lost.filter((call) => call.process === crashed.process).flatMap((call) => {
      const tool = agent.tools.list.find((one) => one.name === call.name)
      if (tool?.idempotent === true) return []
      const ran = trace.runs.some((run) => run.id === call.id && run.seq > crashed.end)
      return [
        ...(ran ? [`${call.id} was left running by the crash of process ${call.process} and ran again (its tool is not idempotent)`] : []),
        ...(call.then === "Failed" ? [] : [`${call.id} was left running by the crash of process ${call.process} but is ${call.then} after the takeover, not reported interrupted`])
      ]
    })
    return [...again, ...lost]
  })

/**
 * The ways the worker path's traces break the lease's promises.
 *
 * @internal
 */
export const check = (agent: Agent.Agent, traces: Trace.Traces): ReadonlyArray<string> =>
  Object.values(traces).flatMap((trace: Trace.Trace | undefined) => {
    const record = trace?.worker
    if (trace === undefined || record === undefined) return []
    return [...overlaps(record), ...lateAccepted(record), ...busyRan(trace, record), ...rerun(agent, trace, record)]
  })
