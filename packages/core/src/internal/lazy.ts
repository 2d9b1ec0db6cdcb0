/**
 * Values built on first use instead of at import: a module that only some
 * users need at run time (a compiled check, a generated JSON Schema, a Node
 * built-in) costs nothing until it is used, and is built once.
 *
 * @internal
 */

/** A value built by `make` on the first call, the same value after. */
export const value = <A>(make: () => A): () => A => {
  let built = false
  let cached: A
  return () => {
    if (!built) {
      cached = make()
      built = true
    }
    return cached
  }
}

/** A type guard compiled by `make` on its first call; the same guard after. */
export const guard = <A>(make: () => (u: unknown) => u is A): (u: unknown) => u is A => {
  let compiled: ((u: unknown) => u is A) | undefined
  return (u: unknown): u is A => (compiled ??= make())(u)
}
