/**
 * `Data.taggedEnum` without its Proxy: the same constructors (each makes the
 * plain object `{ ...props, _tag }`), `$is` and `$match`, as plain functions
 * made once. `Data.taggedEnum` looks the tag up through a Proxy and makes a
 * new constructor on every call; on the turn's path (several events and
 * outcomes per step) that was about a sixth of a step's CPU (packages/bench,
 * scenario 7, `node --cpu-prof`).
 *
 * @internal
 */
import * as Data from "effect/Data"

/** The constructors of the tagged enum `A`, whose tags are listed (every one, as the record's keys). */
export const make = <A extends { readonly _tag: string }>(
  tags: { readonly [Tag in A["_tag"]]: true }
): Data.TaggedEnum.Constructor<A> => {
  const proxied = Data.taggedEnum<A>()
  const out: Record<string, unknown> = { $is: proxied.$is, $match: proxied.$match }
  for (const tag of Object.keys(tags)) out[tag] = (props?: object) => ({ ...props, _tag: tag })
  return out as Data.TaggedEnum.Constructor<A>
}
