/**
 * Runners that reach each other over TCP sockets, so that many runners run
 * durable turns at once: the shards (and with them the turns) are spread over
 * every healthy runner, a message for a turn goes to the runner that holds it,
 * and when a runner dies its shards move to the others. Runners and messages
 * live in SQL (`SqlRunnerStorage`, `SqlMessageStorage`), the same database the
 * turns publish to.
 *
 * `layer` is a runner: it listens on a host and port (port 0 picks a free one)
 * and tells the other runners the address it got. `layerClient` is a process
 * that starts and decides turns without running any. Both provide the
 * `WorkflowEngine` that `ChatWorkflow.layer` and the client side need. Node
 * only (`@effect/platform-node`).
 *
 * Both create the cluster's tables when missing (`effect/cluster`'s
 * migrations). On PostgreSQL they do it under an advisory lock, so any number
 * of runners and clients may start at once on an empty database: one creates
 * the tables while the others wait, then find them there.
 *
 * On PostgreSQL a runner reads `idle_in_transaction_session_timeout` once at
 * start and logs one warning when it is off or not below the shard locks'
 * expiration (a runner cut off in the middle of a transaction would keep its
 * `cluster_messages` rows locked until it is back).
 *
 * @since 0.1.0
 */
import { withMigrationLock } from "@chat-ts/sql/MigrationLock"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import * as ClusterWorkflowEngine from "effect/cluster/ClusterWorkflowEngine"
import type { MessageStorage } from "effect/cluster/MessageStorage"
import * as RunnerAddress from "effect/cluster/RunnerAddress"
import * as RunnerHealth from "effect/cluster/RunnerHealth"
import * as Runners from "effect/cluster/Runners"
import type { Sharding } from "effect/cluster/Sharding"
import * as ShardingConfig from "effect/cluster/ShardingConfig"
import * as ClusterSocketRunner from "effect/cluster/SocketRunner"
import * as SqlMessageStorage from "effect/cluster/SqlMessageStorage"
import * as SqlRunnerStorage from "effect/cluster/SqlRunnerStorage"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as SocketServer from "effect/socket/SocketServer"
import type { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { WorkflowEngine } from "effect/workflow/WorkflowEngine"
import * as SessionCheck from "./internal/sessionCheck.js"

/** Settings of a socket runner. */
export interface Options {
  /** The host to listen on (default `127.0.0.1`; `0.0.0.0` to take connections from other machines). */
  readonly host?: string | undefined
  /** The port to listen on (default 0: a free port, announced to the other runners). */
  readonly port?: number | undefined
  /** The host the other runners connect to (default `host`; required when listening on `0.0.0.0` or `::`). */
  readonly advertiseHost?: string | undefined
  /** The rest of the cluster's settings (shards, lock and poll intervals). */
  readonly shardingConfig?: Partial<Omit<ShardingConfig.ShardingConfig["Service"], "runnerAddress" | "runnerListenAddress">> | undefined
}

/** What a runner or a client provides: the engine, and the cluster under it. */
export type Provides = WorkflowEngine | Sharding | MessageStorage

/** The advisory lock the cluster's migrations run under (PostgreSQL). */
export const migrationLock = "chat-ts/workflow:cluster-migrations"

/**
 * The cluster's tables (`cluster_runners`, `cluster_locks`, `cluster_messages`, `cluster_replies`…),
 * created by `effect/cluster`'s own migrations, one process at a time: built once per runner or client.
 */
export const layerMigrations: Layer.Layer<never, SqlError, SqlClient> = Layer.effectDiscard(
  withMigrationLock(
    migrationLock,
    // One after the other: under the lock, both run on the lock's transaction and its one connection.
    Effect.scoped(Layer.build(SqlMessageStorage.layerMigrations({}).pipe(Layer.provide(SqlRunnerStorage.layerMigrations({}))))),
    // The history tables `effect/cluster` records its migrations in (the default prefix, `cluster`).
    { historyTables: ["cluster_runner_migrations", "cluster_migrations"] }
  )
)

/** Runners and messages in SQL (once the tables exist), connections to runners over TCP, messages as JSON lines. */
const shared = <A, E, R>(self: Layer.Layer<A, E, R>) =>
  self.pipe(
    Layer.provide(NodeClusterSocket.layerClientProtocol),
    Layer.provideMerge(SqlMessageStorage.layerStorage({}).pipe(Layer.provide(NodeCrypto.layerDigest))),
    Layer.provide(SqlRunnerStorage.layerStorage({})),
    Layer.provide(Layer.orDie(layerMigrations)),
    Layer.provide(RpcSerialization.layerNdjson)
  )

/** The cluster's settings, with the address the socket server got as the runner's address. */
const configFromServer = (options: Options) =>
  Layer.unwrap(Effect.flatMap(SocketServer.SocketServer, (server) => {
    const address = server.address
    if (address._tag === "UnixPathAddress") return Effect.die(new Error("SocketRunner: the runner must listen on a TCP address"))
    return Effect.succeed(ShardingConfig.layer({
      ...options.shardingConfig,
      runnerAddress: Option.some(RunnerAddress.make(options.advertiseHost ?? NetAddress.formatHost(address), address.port)),
      runnerListenAddress: Option.none()
    }))
  }))

/** Addresses a server listens on that no one can connect to. */
const unspecified = new Set(["0.0.0.0", "::", "[::]", ""])

/**
 * A runner: listens on `host:port`, registers in SQL with the address it got, takes the shards
 * assigned to it and runs their turns; pings the other runners and takes over the shards of the
 * ones that stop answering or stop renewing their locks. On PostgreSQL it warns (once, at start)
 * when `idle_in_transaction_session_timeout` is off or not below the shard locks' expiration.
 */
export const layer = (options: Options = {}): Layer.Layer<Provides, SocketServer.SocketServerError, SqlClient> => {
  const host = options.host ?? "127.0.0.1"
  // Nobody can connect to "any address": a runner listening on all of them must say where it is.
  if (unspecified.has(host) && options.advertiseHost === undefined) {
    return Layer.effectContext(
      Effect.die(new Error(`SocketRunner: listening on ${host}, set advertiseHost to the address other runners reach this one at`))
    )
  }
  const server = NodeSocketServer.layer({ host, port: options.port ?? 0 })
  const health = RunnerHealth.layerPing.pipe(
    Layer.provide(Runners.layerRpc),
    Layer.provide(NodeClusterSocket.layerClientProtocol)
  )
  return ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(ClusterSocketRunner.layer),
    Layer.provide(health),
    shared,
    Layer.merge(SessionCheck.layer),
    Layer.provide(Layer.provideMerge(configFromServer(options), server))
  )
}

/** A client: no address and no shards; it sends starts and decisions to the runners that hold the turns. */
export const layerClient = (
  options: Pick<Options, "shardingConfig"> = {}
): Layer.Layer<Provides, never, SqlClient> =>
  ClusterWorkflowEngine.layer.pipe(
    Layer.provideMerge(ClusterSocketRunner.layerClientOnly),
    shared,
    Layer.provide(ShardingConfig.layer({ ...options.shardingConfig, runnerAddress: Option.none() }))
  )
