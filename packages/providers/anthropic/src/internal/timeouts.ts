/**
 * The timeouts one call runs under: a layer's options resolved against
 * `AnthropicDefaults`. A non-streamed call always has a total bound (unless told
 * `false`); a stream has an idle bound and a total one only when asked.
 *
 * @internal
 */
import type { ProviderStream } from "@chat-ts/core"
import type * as Duration from "effect/Duration"
import * as Defaults from "../AnthropicDefaults.js"

/** The timeout options of the model layer. */
export interface Options {
  readonly idleTimeout?: Duration.Input | false | undefined
  readonly totalTimeout?: Duration.Input | false | undefined
}

/** A non-streamed call's bound: `totalTimeout`, else `AnthropicDefaults.totalTimeout`; `false`: none. */
export const call = (options: Options): ProviderStream.Timeouts => ({
  totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout ?? Defaults.totalTimeout
})

/** A stream's bounds: `idleTimeout` (else `AnthropicDefaults.idleTimeout`; `false`: none), and `totalTimeout` when given. */
export const stream = (options: Options): ProviderStream.Timeouts => ({
  idleTimeout: options.idleTimeout ?? Defaults.idleTimeout,
  totalTimeout: options.totalTimeout === false ? undefined : options.totalTimeout
})
