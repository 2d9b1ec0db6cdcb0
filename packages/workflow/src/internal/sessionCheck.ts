/**
 * A runner's check of its PostgreSQL sessions at start: without
 * `idle_in_transaction_session_timeout` (or with it not below the shard
 * locks' expiration), a runner cut off between two statements of a
 * transaction leaves its session `idle in transaction`, holding its
 * `cluster_messages` row locks until it is back. One query; one warning.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ShardingConfig } from "effect/cluster/ShardingConfig"
import { SqlClient } from "effect/sql/SqlClient"

/** The setting the check reads. */
export const setting = "idle_in_transaction_session_timeout"

const units: Record<string, number> = { us: 0.001, ms: 1, s: 1_000, min: 60_000, h: 3_600_000, d: 86_400_000 }

/** A PostgreSQL time setting as `SHOW` prints it ("0", "2s", "500ms", "1min"; no unit: milliseconds), in milliseconds. */
export const millisOf = (shown: string): number | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(shown)
  if (match === null) return undefined
  const unit = units[match[2] === "" ? "ms" : match[2]!.toLowerCase()]
  return unit === undefined ? undefined : Number(match[1]) * unit
}

/** The value advised: 2 s, or half the shard locks' expiration when that is shorter. */
export const advisedMillis = (expirationMillis: number): number => Math.max(1, Math.min(2_000, Math.floor(expirationMillis / 2)))

/** The warning for a value read (`undefined`: none needed), given the shard locks' expiration. */
export const warningFor = (shown: string, expirationMillis: number): string | undefined => {
  const millis = millisOf(shown)
  if (millis !== undefined && millis > 0 && millis < expirationMillis) return undefined
  const value = millis === 0 ? `${shown} (off)` : shown
  return `SocketRunner: ${setting} is ${value} on the runners' PostgreSQL database, not below the shard locks' ` +
    `expiration (${expirationMillis} ms): a runner cut off in the middle of a transaction keeps its cluster_messages ` +
    `rows locked until it is back. Set it to ${advisedMillis(expirationMillis)} ms ` +
    `(ALTER DATABASE <name> SET ${setting} = '${advisedMillis(expirationMillis)}ms').`
}

/** On PostgreSQL, reads the setting once and logs one warning when it is off or too long; elsewhere nothing. */
export const layer: Layer.Layer<never, never, SqlClient | ShardingConfig> = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const config = yield* ShardingConfig
    const expiration = Duration.toMillis(Duration.fromInputUnsafe(config.shardLockExpiration))
    yield* sql.onDialectOrElse({
      orElse: () => Effect.void,
      pg: () =>
        sql<Record<string, string>>`SHOW idle_in_transaction_session_timeout`.pipe(
          Effect.flatMap((rows) => {
            const shown = rows[0] === undefined ? undefined : Object.values(rows[0])[0]
            const warning = shown === undefined ? undefined : warningFor(String(shown), expiration)
            return warning === undefined ? Effect.void : Effect.logWarning(warning)
          }),
          // The check only advises: a database that cannot answer fails the runner elsewhere, not here.
          Effect.ignore
        )
    })
  })
)
