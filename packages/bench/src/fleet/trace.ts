/**
 * The statements chat-ts issues for one decision, captured once per database
 * through `effect/sql`'s `CurrentTransformer` while `Worker.resume` runs on
 * conversation 0: each statement's compiled text, its parameters and the
 * transaction it ran in. The floor replays them by hand; the notes count them.
 */
import { Worker } from "@chat-ts/core"
import * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as SqlClient from "effect/sql/SqlClient"
import * as Statement from "effect/sql/Statement"
import * as FleetChat from "./chat.js"

/** One statement as the driver received it. */
export interface Recorded {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
  /** The transaction it ran in (numbered in order), or null outside one. */
  readonly transaction: number | null
}

/** What one decision costs the database, by kind of statement. */
export interface Counts {
  readonly statements: number
  readonly transactions: number
  /** Statements that change rows (INSERT, UPDATE, DELETE). */
  readonly writes: number
  readonly leaseAcquire: number
  readonly leaseRenew: number
  readonly leaseRelease: number
  readonly loads: number
  /** Compare-and-set writes of the conversation row (one per checkpoint). */
  readonly rowWrites: number
  /** INSERTs of message rows. */
  readonly messageWrites: number
  /** Commits: each transaction, and each write outside one (absent in results from before it was counted). */
  readonly commits?: number
  /** Round trips: statements, plus BEGIN and COMMIT of each transaction. */
  readonly roundTrips: number
  /** Parameter bytes sent by the writing statements. */
  readonly bytesWritten: number
}

/** A trace: the statements, the lease token and the checkpoints (conversation-row writes) of the decision. */
export interface Trace {
  readonly statements: ReadonlyArray<Recorded>
  /** The lease token of the traced run (the floor writes a fresh one in its place). */
  readonly token: string
  readonly checkpoints: number
  readonly counts: Counts
}

const bytesOf = (value: unknown): number =>
  typeof value === "string" ? Buffer.byteLength(value, "utf8") : typeof value === "number" || typeof value === "bigint" ? 8 : 0

/** A statement that changes rows: an INSERT, UPDATE or DELETE, or a `WITH` whose CTEs do (PostgreSQL's one-statement lease + load and saves). */
const isWrite = (text: string): boolean => /^\s*(INSERT|UPDATE|DELETE)|^\s*WITH\b[\s\S]*?\(\s*(INSERT|UPDATE|DELETE)\b/i.test(text)

/** Counts a trace's statements by kind. */
export const countsOf = (statements: ReadonlyArray<Recorded>): Counts => {
  const matching = (re: RegExp) => statements.filter((s) => re.test(s.text)).length
  const transactions = new Set(statements.flatMap((s) => (s.transaction === null ? [] : [s.transaction]))).size
  return {
    statements: statements.length,
    transactions,
    writes: statements.filter((s) => isWrite(s.text)).length,
    leaseAcquire: matching(/SET\s+"?lease_owner"?\s*=\s*[$?]/i),
    leaseRenew: matching(/^\s*UPDATE\s+\S+\s+SET\s+"?lease_expires_at"?\s*=/i),
    // Alone, or folded into the last save (its UPDATE sets the lease columns to NULL too).
    leaseRelease: matching(/(SET|,)\s+"?lease_owner"?\s*=\s*NULL/i),
    // A load alone, or the lease's UPDATE and the load in one statement (PostgreSQL).
    loads: matching(/^\s*SELECT\s+c\.incarnation|\bSELECT\s+l\.incarnation/i),
    // The compare-and-set of the row, alone or as the first CTE of a one-statement save (PostgreSQL).
    rowWrites: matching(/^(\s*|\s*WITH\s+written\s+AS\s+\(\s*)(UPDATE\s+\S+\s+SET\s+"?version"?|INSERT\s+INTO\s+"?fleet"?\s)/i),
    messageWrites: matching(/(^|\(\s*)INSERT\s+INTO\s+"?fleet_messages"?/i),
    commits: transactions + statements.filter((s) => s.transaction === null && isWrite(s.text)).length,
    roundTrips: statements.length + 2 * transactions,
    bytesWritten: statements.filter((s) => isWrite(s.text)).reduce((n, s) => n + s.params.reduce<number>((m, p) => m + bytesOf(p), 0), 0)
  }
}

/** Runs `effect` recording every statement it issues on `sql`. */
const recording = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const statements: Array<Recorded> = []
    const transactions = new Map<unknown, number>()
    return Effect.map(
      Effect.provideService(effect, Statement.CurrentTransformer, (statement, _sql, fiber) =>
        Effect.sync(() => {
          const [text, params] = statement.compile()
          // The transaction's service is a fresh [connection, depth] pair per transaction.
          const tx = Context.getOrUndefined(fiber.context, sql.transactionService)
          let transaction: number | null = null
          if (tx !== undefined) {
            transaction = transactions.get(tx) ?? transactions.size
            transactions.set(tx, transaction)
          }
          statements.push({ text, params, transaction })
          return statement
        })),
      (value) => [value, statements] as const
    )
  })

/** Resumes conversation 0 (seeded, pending) with chat-ts and records what it sent. */
export const capture = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const chat = yield* Effect.promise(() => FleetChat.make(() => undefined))
  const [result, statements] = yield* recording(
    sql,
    Worker.resume(chat, FleetChat.conversationId(0), FleetChat.approveAll, { owner: "fleet-trace" })
  )
  if (result.outcome._tag !== "Complete") throw new Error("fleet: the traced resume did not complete")
  const acquire = statements.find((s) => /SET\s+"?lease_owner"?\s*=\s*[$?]/i.test(s.text))
  const token = acquire?.params.find((p): p is string => typeof p === "string" && /^[0-9a-f-]{36}$/i.test(p))
  if (token === undefined) throw new Error("fleet: no lease token in the trace")
  const counts = countsOf(statements)
  return { statements, token, checkpoints: counts.rowWrites, counts } satisfies Trace
})
