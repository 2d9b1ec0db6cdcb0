// Cold start of one library in a fresh Node process (scenario 8). Plain JavaScript run by plain
// `node`, so that every library loads its published (compiled) code and nothing compiles TypeScript:
// chat-ts from packages/core/dist (built by `tsc -b`). Prints one JSON line:
// { importMs, firstRequestMs, first100Ms } measured from the start of this script.
// Each library runs the same turn as scenario 1 at N=1: a no-op tool once, then an answer; every
// turn is checked.
const started = performance.now()
const library = process.argv[2]
const turns = Number(process.argv[3] ?? 100)
let firstRequest

// chat-ts's turn, given its modules (from the barrel or from the per-module entry points).
const chatTs = async ([{ Chat, LanguageModel, Messages, Tool, Toolkit }, Effect, Layer, Schema]) => {
  const imported = performance.now()
  const Noop = Tool.make("noop", { description: "Does nothing.", parameters: {}, success: Schema.Struct({ ok: Schema.Boolean }) })
  const kit = Toolkit.make(Noop)
  const call = { parts: [Messages.toolCall({ id: "call_1", name: "noop", arguments: "{}" })], usage: { inputTokens: 10, outputTokens: 5 }, finishReason: "tool-calls" }
  const answer = { parts: [{ _tag: "Text", text: "Done." }], usage: { inputTokens: 10, outputTokens: 5 }, finishReason: "stop" }
  let index = 0
  const model = LanguageModel.make({ generate: () => Effect.sync(() => { firstRequest ??= performance.now(); return index++ === 0 ? call : answer }) })
  const chat = await Effect.runPromise(Chat.make({ tools: [kit] }).pipe(
    Effect.provide(Layer.merge(LanguageModel.layer(model), kit.toLayer({ noop: () => Effect.succeed({ ok: true }) })))
  ))
  const input = Messages.fromUser("Go.")
  return { imported, turn: async () => {
    index = 0
    const result = await Effect.runPromise(chat.complete(input))
    if (result.outcome._tag !== "Complete" || result.messages.length !== 3) throw new Error("chat-ts: the turn did not complete")
  } }
}

const setups = {
  "chat-ts": async () => chatTs(await Promise.all([
    import("@chat-ts/core"), import("effect/Effect"), import("effect/Layer"), import("effect/Schema")
  ])),
  // The same program importing only the modules it uses, through core's per-module entry points.
  "chat-ts (entry points)": async () => {
    const [Chat, LanguageModel, Messages, Tool, Toolkit, Effect, Layer, Schema] = await Promise.all([
      import("@chat-ts/core/Chat"), import("@chat-ts/core/LanguageModel"), import("@chat-ts/core/Messages"),
      import("@chat-ts/core/Tool"), import("@chat-ts/core/Toolkit"), import("effect/Effect"), import("effect/Layer"), import("effect/Schema")
    ])
    return chatTs([{ Chat, LanguageModel, Messages, Tool, Toolkit }, Effect, Layer, Schema])
  },
  ai: async () => {
    const [{ generateText, isStepCount, tool }, { MockLanguageModelV4 }, { z }] = await Promise.all([import("ai"), import("ai/test"), import("zod")])
    const imported = performance.now()
    globalThis.AI_SDK_LOG_WARNINGS = false
    const usage = { inputTokens: { total: 10, noCache: 10 }, outputTokens: { total: 5, text: 5 } }
    const call = { content: [{ type: "tool-call", toolCallId: "call_1", toolName: "noop", input: "{}" }], finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [] }
    const answer = { content: [{ type: "text", text: "Done." }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] }
    let index = 0
    const model = new MockLanguageModelV4({ doGenerate: async () => { firstRequest ??= performance.now(); return index++ === 0 ? call : answer } })
    const tools = { noop: tool({ description: "Does nothing.", inputSchema: z.object({}), execute: async () => ({ ok: true }) }) }
    return { imported, turn: async () => {
      index = 0
      model.doGenerateCalls.length = 0
      const result = await generateText({ model, tools, prompt: "Go.", stopWhen: isStepCount(2) })
      if (result.text !== "Done.") throw new Error("ai: the turn did not complete")
    } }
  },
  "@openai/agents": async () => {
    const [{ Agent, run, setTracingDisabled, tool, Usage }, { z }] = await Promise.all([import("@openai/agents"), import("zod")])
    const imported = performance.now()
    setTracingDisabled(true)
    const usage = () => new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 })
    let index = 0
    const agent = new Agent({
      name: "bench",
      instructions: "Benchmark agent.",
      model: {
        getResponse: async () => {
          firstRequest ??= performance.now()
          return index++ === 0
            ? { usage: usage(), output: [{ type: "function_call", callId: "call_1", name: "noop", arguments: "{}", status: "completed" }] }
            : { usage: usage(), output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Done." }] }] }
        },
        getStreamedResponse: () => { throw new Error("not used") }
      },
      tools: [tool({ name: "noop", description: "Does nothing.", parameters: z.object({}), execute: async () => JSON.stringify({ ok: true }) })]
    })
    return { imported, turn: async () => {
      index = 0
      const result = await run(agent, "Go.", { maxTurns: 2 })
      if (result.finalOutput !== "Done.") throw new Error("@openai/agents: the turn did not complete")
    } }
  },
  "effect/ai": async () => {
    const [{ LanguageModel, Prompt, Tool, Toolkit }, Effect, Schema] = await Promise.all([import("effect/ai"), import("effect/Effect"), import("effect/Schema")])
    const imported = performance.now()
    const usage = { inputTokens: { uncached: 10, total: 10 }, outputTokens: { total: 5, text: 5 } }
    const Noop = Tool.make("noop", { description: "Does nothing.", success: Schema.Struct({ ok: Schema.Boolean }) })
    const Kit = Toolkit.make(Noop)
    let index = 0
    const model = await Effect.runPromise(LanguageModel.make({
      generateText: () => Effect.sync(() => {
        firstRequest ??= performance.now()
        return index++ === 0
          ? [{ type: "tool-call", id: "call_1", name: "noop", params: {} }, { type: "finish", reason: "tool-calls", usage }]
          : [{ type: "text", text: "Done." }, { type: "finish", reason: "stop", usage }]
      }),
      streamText: () => { throw new Error("not used") }
    }))
    const handlers = await Effect.runPromise(Kit.toHandlers({ noop: () => Effect.succeed({ ok: true }) }))
    const turn = Effect.gen(function*() {
      let prompt = Prompt.make("Go.")
      for (let step = 0; step <= 1; step++) {
        const response = yield* LanguageModel.generateText({ prompt, toolkit: Kit })
        prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
        if (response.toolCalls.length === 0) return response.text
      }
      return yield* Effect.die(new Error("the step limit was reached"))
    }).pipe(Effect.provideService(LanguageModel.LanguageModel, model), Effect.provide(handlers))
    return { imported, turn: async () => {
      index = 0
      if (await Effect.runPromise(turn) !== "Done.") throw new Error("effect/ai: the turn did not complete")
    } }
  }
}

// The floor: Effect's own modules that chat-ts loads, then the floor step of scenario 7 (one model
// call, one tool call) as a plain Effect program.
setups["effect (floor)"] = async () => {
  const [Effect] = await Promise.all([
    import("effect/Effect"), import("effect/Schema"), import("effect/Stream"), import("effect/Layer"), import("effect/Queue")
  ])
  const imported = performance.now()
  let index = 0
  const model = Effect.sync(() => { firstRequest ??= performance.now(); return index++ === 0 ? { kind: "call" } : { kind: "text" } })
  const turn = Effect.gen(function*() {
    index = 0
    const history = ["Go."]
    while (true) {
      const response = yield* model
      history.push(response)
      if (response.kind === "text") return history.length
      history.push(yield* Effect.succeed({ ok: true }))
    }
  })
  return { imported, turn: async () => {
    if (await Effect.runPromise(turn) !== 4) throw new Error("floor: the turn did not complete")
  } }
}

const setup = setups[library]
if (setup === undefined) {
  console.error(`unknown library ${library}`)
  process.exit(2)
}
const { imported, turn } = await setup()
await turn()
const first = performance.now()
for (let i = 1; i < turns; i++) await turn()
const done = performance.now()
console.log(JSON.stringify({
  importMs: imported - started,
  firstRequestMs: firstRequest - started,
  firstTurnMs: first - started,
  first100Ms: done - started,
  processStartMs: started
}))
process.exit(0)
