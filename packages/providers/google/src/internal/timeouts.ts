/**
 * The timeouts one call runs under: a layer's options resolved against
 * `GoogleDefaults`. A non-streamed call always has a total bound (unless told
 * `false`); a stream has an idle bound and a total one only when asked.
 *
 * @internal
 */
import type { ProviderStream } from "@chat-ts/core"
import type * as Duration from "effect/Duration"
import * as Defaults from "../GoogleDefaults.js"

/** The timeout options of every layer of this package. */
export interface Options {
  readonly idleTimeout?: Duration.Input | false | undefined
  readonly totalTimeout?: Duration.Input | false | undefined
}

/** A non-streamed call's bound: `totalTimeout`, else `GoogleDefaults.totalTimeout`; `false`: none. */
export const call = (options: Options): ProviderStream.Timeouts => ({
  totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout ?? Defaults.totalTimeout
})

/** A stream's bounds: `idleTimeout` (else `GoogleDefaults.idleTimeout`; `false`: none), and `totalTimeout` when given. */
export const stream = (options: Options): ProviderStream.Timeouts => ({
  idleTimeout: options.idleTimeout ?? Defaults.idleTimeout,
  totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout
})
