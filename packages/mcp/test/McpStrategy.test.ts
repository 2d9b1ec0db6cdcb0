/**
 * The default strategy fails closed from the annotations, and combines with a
 * strategy of the user's. Pure functions: no server needed.
 */
import { Action } from "@chat-ts/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { McpStrategy, type McpTool } from "../src/index.js"

const metadata = (annotations: McpTool.Annotations): McpTool.Metadata => ({ server: "s", mcpName: "t", title: undefined, annotations })
const call = (name: string, annotations: McpTool.Annotations) =>
  ({ id: "c", name, params: {}, arguments: "{}", metadata: metadata(annotations) }) as Parameters<McpStrategy.Strategy>[0]

const decide = (strategy: McpStrategy.Strategy<never>, name: string, annotations: McpTool.Annotations) =>
  Effect.gen(function*() {
    const decided = strategy(call(name, annotations), metadata(annotations))
    return (Effect.isEffect(decided) ? yield* decided : decided)._tag
  })

describe("McpStrategy.annotations", () => {
  const cases: ReadonlyArray<readonly [McpTool.Annotations, string]> = [
    [{ readOnlyHint: true, openWorldHint: false }, "Execute"],
    [{ readOnlyHint: true }, "Execute"],
    [{ readOnlyHint: true, openWorldHint: true }, "RequireApproval"],
    [{ readOnlyHint: true, destructiveHint: true }, "RequireApproval"],
    [{ destructiveHint: true }, "RequireApproval"],
    [{ readOnlyHint: false, destructiveHint: false }, "RequireApproval"],
    [{ idempotentHint: true }, "RequireApproval"],
    [{}, "RequireApproval"]
  ]
  for (const [annotations, expected] of cases) {
    it.effect(`${JSON.stringify(annotations)} → ${expected}`, () =>
      Effect.map(decide(McpStrategy.annotations, "t", annotations), (tag) => expect(tag).toBe(expected)))
  }
})

describe("McpStrategy.combine", () => {
  const allowSearch: McpStrategy.Opinion = (c) => (c.name === "web_search" ? Action.Execute() : undefined)
  const strategy = McpStrategy.combine(allowSearch, McpStrategy.annotations)

  it.effect("the first strategy decides where it has an opinion, the fallback elsewhere", () =>
    Effect.gen(function*() {
      expect(yield* decide(strategy, "web_search", { openWorldHint: true })).toBe("Execute")
      expect(yield* decide(strategy, "delete", { destructiveHint: true })).toBe("RequireApproval")
      expect(yield* decide(strategy, "read", { readOnlyHint: true })).toBe("Execute")
    }))

  it.effect("an effectful first strategy, and the pipeable form", () =>
    Effect.gen(function*() {
      const never: McpStrategy.Opinion = (c) => Effect.succeed(c.name === "drop" ? Action.Reject({ reason: "no" }) : undefined)
      const combined = McpStrategy.combine(McpStrategy.always(Action.Execute()))(never)
      expect(yield* decide(combined, "drop", {})).toBe("Reject")
      expect(yield* decide(combined, "other", { destructiveHint: true })).toBe("Execute")
    }))
})
