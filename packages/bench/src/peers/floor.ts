/**
 * The Effect floor: a plain Effect program doing a step's work with nothing
 * else (one model call, one tool call, the response and the result pushed on
 * the history), so chat-ts's cost per step can be read against what its own
 * runtime allows.
 */
import * as Effect from "effect/Effect"

/** A function running one "turn" of `steps` floor steps and an answer, as an Effect. */
export const floorTurn = (steps: number): Effect.Effect<number> => {
  const responses = Array.from({ length: steps }, (_, i) => ({ kind: "call" as const, id: `call_${i + 1}` }))
  const answer = { kind: "text" as const, text: "Done." }
  let index = 0
  const model = Effect.sync(() => (index < steps ? responses[index++]! : answer))
  const tool = (_id: string) => Effect.succeed({ ok: true })
  return Effect.gen(function*() {
    index = 0
    const history: Array<unknown> = [{ role: "user", text: "Go." }]
    while (true) {
      const response = yield* model
      history.push(response)
      if (response.kind === "text") return history.length
      history.push(yield* tool(response.id))
    }
  })
}
