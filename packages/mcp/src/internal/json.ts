/**
 * What comes from an MCP server made plain JSON data before it enters a
 * conversation: no `"__proto__"` key, nothing nested past a limit, nothing
 * JSON cannot hold, so a hostile server's answer never makes the state
 * unwritable.
 *
 * @internal
 */

/** How deep a server's value may nest before the rest is replaced by a marker (core stores up to 256). */
export const maxDepth = 64

/** A copy of `value` as plain JSON data: `__proto__` keys and non-JSON values dropped, deep parts cut. */
export const toPlain = (value: unknown, depth = 0): unknown => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value
    case "number":
      return Number.isFinite(value) ? value : null
    case "object": {
      if (value === null) return null
      if (depth >= maxDepth) return "[nested too deep]"
      if (Array.isArray(value)) return value.map((item) => toPlain(item, depth + 1))
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(value)) {
        if (key === "__proto__") continue
        const item = (value as Record<string, unknown>)[key]
        if (item === undefined || typeof item === "function" || typeof item === "symbol" || typeof item === "bigint") continue
        out[key] = toPlain(item, depth + 1)
      }
      return out
    }
    default:
      return null
  }
}

/** A short, single-line description of an unknown error. */
export const describe = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  return text.length > 500 ? `${text.slice(0, 500)}…` : text
}
