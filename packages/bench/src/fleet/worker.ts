/**
 * A fleet worker process (forked by `workers.ts`, run with tsx): one
 * `SqlClient` with its pool, one store, and for each decision it is sent,
 * either chat-ts's `Worker.resume` (lease, load, approve, run the tool and
 * the model's answer, a checkpoint after each change, release) or the floor:
 * the statements of one traced chat-ts decision issued by hand on the same
 * client, with this conversation's ids and a fresh lease token. It reports
 * each decision when its result is saved. It leaves when told to, and when
 * its parent goes away (the IPC channel closes).
 */
import { SqliteClient } from "@chat-ts/sql"
import { PgClient } from "@effect/sql-pg"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import * as FleetChat from "./chat.js"
import type { Connection, FromWorker, ToWorker } from "./protocol.js"
import type { Recorded } from "./trace.js"

const send = (message: FromWorker): void => void process.send!(message)

// No orphans: a worker whose parent is gone leaves at once.
process.on("disconnect", () => process.exit(1))

const clientLayer = (connection: Connection): Layer.Layer<SqlClient.SqlClient, unknown> =>
  connection.database === "PostgreSQL"
    ? PgClient.layer({ url: Redacted.make(connection.url), maxConnections: connection.pool, minConnections: connection.pool })
    : SqliteClient.layer({ filename: connection.filename, busyTimeout: Duration.seconds(30) })

type Decide = (n: number) => Promise<void>

/** chat-ts: `Worker.resume` on the SQL store. */
const chatTs = async (runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>, owner: string, ran: Map<string, number>): Promise<Decide> => {
  const [{ Worker, ConversationStore }, { SqlConversationStore }, Seed] = await Promise.all([
    import("@chat-ts/core"),
    import("@chat-ts/sql"),
    import("./seed.js")
  ])
  const chat = await FleetChat.make((path) => void ran.set(path, (ran.get(path) ?? 0) + 1))
  const store = await runtime.runPromise(SqlConversationStore.make({ table: Seed.table }))
  return async (n) => {
    const result = await runtime.runPromise(
      Worker.resume(chat, FleetChat.conversationId(n), FleetChat.approveAll, { owner }).pipe(
        Effect.provideService(ConversationStore.ConversationStore, store)
      )
    )
    if (result.outcome._tag !== "Complete") throw new Error(`conversation ${n}: ${result.outcome._tag}`)
  }
}

/** The floor: the traced statements, by hand, transaction by transaction. */
const floor = async (
  runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>,
  trace: { readonly statements: ReadonlyArray<Recorded>; readonly token: string }
): Promise<Decide> => {
  const sql = await runtime.runPromise(Effect.service(SqlClient.SqlClient))
  // Consecutive statements of one transaction form a group.
  const groups: Array<{ readonly transaction: number | null; readonly statements: Array<Recorded> }> = []
  for (const s of trace.statements) {
    const last = groups[groups.length - 1]
    if (last !== undefined && s.transaction !== null && last.transaction === s.transaction) last.statements.push(s)
    else groups.push({ transaction: s.transaction, statements: [s] })
  }
  const run = (s: Recorded, marker: string, token: string) =>
    Effect.flatMap(
      sql.unsafe(s.text, s.params.map((p) => typeof p === "string" ? p.replaceAll(FleetChat.marker, marker).replaceAll(trace.token, token) : p)),
      // What a hand-written program checks too: a compare-and-set that matched no row failed.
      (rows) => /RETURNING/i.test(s.text) && rows.length === 0 ? Effect.die(new Error(`no row: ${s.text}`)) : Effect.void
    )
  return (n) => {
    const marker = FleetChat.markerOf(n)
    const token = globalThis.crypto.randomUUID()
    return runtime.runPromise(Effect.forEach(groups, (group) => {
      const statements = Effect.forEach(group.statements, (s) => run(s, marker, token), { discard: true })
      return group.transaction === null ? statements : sql.withTransaction(statements)
    }, { discard: true }))
  }
}

const main = (): void => {
  let decide: Decide | undefined
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown> | undefined
  const ran = new Map<string, number>()
  process.on("message", (message: ToWorker) => {
    switch (message.type) {
      case "init": {
        const rt = ManagedRuntime.make(clientLayer(message.connection))
        runtime = rt
        const made = message.mode === "chat-ts" ? chatTs(rt, message.owner, ran) : floor(rt, message.trace!)
        made.then(
          (d) => {
            decide = d
            send({ type: "ready" })
          },
          (error) => {
            console.error(error)
            process.exit(1)
          }
        )
        return
      }
      case "decide":
        decide!(message.n).then(
          () => send({ type: "done", seq: message.seq }),
          (error) => send({ type: "done", seq: message.seq, error: String(error?.stack ?? error) })
        )
        return
      case "cpu": {
        const usage = process.cpuUsage()
        send({ type: "cpu", us: usage.user + usage.system })
        return
      }
      case "stats":
        send({ type: "stats", ran: [...ran] })
        return
      case "stop":
        void (runtime?.dispose() ?? Promise.resolve()).finally(() => process.exit(0))
        return
    }
  })
}

main()
