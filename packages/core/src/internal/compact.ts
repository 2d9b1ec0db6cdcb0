/**
 * Compact copies of the plain objects a turn keeps (a tool's encoded result).
 * A Schema encode builds its output as `{}` and then adds keys, and V8 gives
 * such an object room for four properties whatever it holds (56 bytes for one
 * key, where a literal takes 32). A constructor function whose prototype is
 * `Object.prototype` makes objects V8 sizes to what its instances hold (its
 * slack tracking), so one compactor per shape of value (per tool) copies each
 * result into an object of its own size. The copy is a plain object: the same
 * prototype, the same own keys in the same order, the same values.
 */

/** Makes a compactor: use one per kind of value (e.g. per tool), so V8 learns that kind's size. */
export const makeCompactor = (): (<A>(value: A) => A) => {
  function Plain(this: Record<string, unknown>) {}
  Plain.prototype = Object.prototype
  const Make = Plain as unknown as new() => Record<string, unknown>
  return <A>(value: A): A => {
    if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value
    const source = value as Record<string, unknown>
    const keys = Object.keys(source)
    // An own `__proto__` key would set the copy's prototype when assigned: keep such a value as it is.
    if (keys.length > 16 || keys.includes("__proto__")) return value
    const out = new Make()
    for (const key of keys) out[key] = source[key]
    return out as A
  }
}
