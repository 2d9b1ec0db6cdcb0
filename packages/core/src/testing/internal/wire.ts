/**
 * Looking into request bodies without knowing the provider's wire format:
 * search a parsed JSON body for a value (also inside strings holding JSON
 * text), for a string, for a JSON Schema; derive a tool's parameters from an
 * example of its arguments; wait in real time for the TestClock, and see who
 * sleeps on it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
import { isDeepStrictEqual } from "node:util"

/** Every node of a parsed JSON value (the value itself, then its members, depth first). */
export const nodes = (value: unknown): ReadonlyArray<unknown> => {
  const out: Array<unknown> = []
  const walk = (node: unknown, depth: number) => {
    out.push(node)
    if (depth > 64 || node === null || typeof node !== "object") return
    for (const child of Array.isArray(node) ? node : Object.values(node)) walk(child, depth + 1)
  }
  walk(value, 0)
  return out
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Whether some node of `body` equals `value`, as a value or as JSON text in a string. */
export const containsValue = (body: unknown, value: unknown): boolean =>
  nodes(body).some((node) =>
    isDeepStrictEqual(node, value) || (typeof node === "string" && isDeepStrictEqual(parsed(node), value))
  )

/** Whether some string of `body` contains `text`. */
export const containsText = (body: unknown, text: string): boolean =>
  nodes(body).some((node) => typeof node === "string" && node.includes(text))

/** Whether some object of `body` has exactly these keys under `properties` (a JSON Schema of that shape, however cleaned). */
export const containsSchemaWith = (body: unknown, properties: ReadonlyArray<string>): boolean => {
  const wanted = [...properties].sort()
  return nodes(body).some((node) => {
    if (node === null || typeof node !== "object" || Array.isArray(node)) return false
    const props = (node as { readonly properties?: unknown }).properties
    if (props === null || typeof props !== "object" || Array.isArray(props)) return false
    return isDeepStrictEqual(Object.keys(props).sort(), wanted)
  })
}

/** A Schema accepting values shaped like `example` (strings, numbers, booleans, null, arrays and objects of them). */
export const schemaOf = (example: unknown): Schema.Codec<unknown> => {
  if (typeof example === "string") return Schema.String
  if (typeof example === "number") return Schema.Number
  if (typeof example === "boolean") return Schema.Boolean
  if (example === null) return Schema.Null
  if (Array.isArray(example)) return Schema.Array(example.length > 0 ? schemaOf(example[0]) : Schema.Unknown)
  if (typeof example === "object") return Schema.Struct(fieldsOf(example as Readonly<Record<string, unknown>>))
  return Schema.Unknown
}

/** The Struct fields accepting objects shaped like `example`. */
export const fieldsOf = (example: Readonly<Record<string, unknown>>): { readonly [key: string]: Schema.Codec<unknown> } =>
  Object.fromEntries(Object.entries(example).map(([key, value]) => [key, schemaOf(value)]))

/** The arguments with one change a person might make: the first string gets " (edited)", else the first number +1. */
export const edited = (args: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> | undefined => {
  const entries = Object.entries(args)
  const text = entries.find(([, value]) => typeof value === "string")
  if (text !== undefined) return { ...args, [text[0]]: `${String(text[1])} (edited)` }
  const number = entries.find(([, value]) => typeof value === "number")
  if (number !== undefined) return { ...args, [number[0]]: (number[1] as number) + 1 }
  return undefined
}

/** An SSE body whose first `data:` line holds half of its JSON, the rest of the body unchanged. */
export const corruptFirstEvent = (body: string): string => {
  const lines = body.replace(/\r\n/g, "\n").split("\n")
  const index = lines.findIndex((line) => line.startsWith("data:") && line.slice(5).trim().startsWith("{"))
  if (index === -1) return `data: {"broken": \n\n${body}`
  const line = lines[index]!
  lines[index] = line.slice(0, Math.ceil(line.length / 2))
  return lines.join("\n")
}

/** Sleeps a few real milliseconds (the HTTP exchange runs in real time; the TestClock only drives Effect's timers). */
export const realSleep = (millis: number): Effect.Effect<void> =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/** Waits in real time (at most `timeoutMillis`) until `check` holds; dies naming `what` past it. */
export const eventually = (what: string, check: Effect.Effect<boolean>, timeoutMillis = 10_000): Effect.Effect<void> =>
  Effect.suspend(() => {
    const deadline = Date.now() + timeoutMillis
    const loop: Effect.Effect<void> = Effect.flatMap(check, (ok) => {
      if (ok) return Effect.void
      if (Date.now() > deadline) return Effect.die(new Error(`Conformance: waited ${timeoutMillis} ms (real time) for ${what}`))
      return Effect.andThen(realSleep(3), loop)
    })
    return loop
  })

/** How many sleeps are pending on each clock made by `watchingSleeps`. */
const pendingSleeps = new WeakMap<Clock.Clock, { count: number }>()

/**
 * Runs `effect` on the test's `TestClock` wrapped so that the sleeps pending
 * on it are counted (Effect 4 keeps the TestClock's sleeps to itself): what
 * `untilSomeoneSleeps` reads.
 */
export const watchingSleeps = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  TestClock.testClockWith((clock) => {
    const pending = { count: 0 }
    const watched: TestClock.TestClock = {
      ...clock,
      sleep: (duration) =>
        Effect.acquireUseRelease(
          Effect.sync(() => pending.count++),
          () => clock.sleep(duration),
          () => Effect.sync(() => pending.count--)
        )
    }
    pendingSleeps.set(watched, pending)
    return Effect.provideService(effect, Clock.Clock, watched)
  })

/** Waits until some fiber sleeps on the TestClock (run inside `watchingSleeps`). */
export const untilSomeoneSleeps = (what: string): Effect.Effect<void> =>
  Clock.clockWith((clock) => {
    const pending = pendingSleeps.get(clock)
    if (pending === undefined) return Effect.die(new Error(`Conformance: ${what}: the clock is not watched (run inside watchingSleeps)`))
    return eventually(`${what} to wait on the clock`, Effect.sync(() => pending.count > 0))
  })
