/**
 * With `ANTHROPIC_API_KEY` set (and no `OPENAI_API_KEY`), the examples and
 * the demo talk to Claude through `@chat-ts/anthropic`; `src/anthropic.ts`
 * (the snippets of docs/anthropic.md) runs its approve-with-edit flow. Here
 * "Anthropic" is a local fake server, so the wiring is checked without a network.
 */
import { AnthropicClient, AnthropicDefaults } from "@chat-ts/anthropic"
import { ChatOutcome } from "@chat-ts/core"
import { OpenAiDefaults } from "@chat-ts/openai"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as Anthropic from "../src/anthropic.js"
import * as FirstCompletion from "../src/first-completion.js"
import * as Models from "../src/shared/Models.js"
import { makeTranscript, outputLayer } from "./support/capture.js"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import * as FakeOpenAi from "./support/FakeOpenAi.js"
import { runTsx } from "./support/run.js"
import * as Routing from "../src/routing.js"

const withEnv = (vars: Record<string, string>) =>
  Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: vars }))

const env = (baseURL: string) => ({ ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: baseURL, ANTHROPIC_MODEL: "claude-fake" })

describe("with ANTHROPIC_API_KEY set", () => {
  it.live("the examples choose Claude (OpenAI still wins when both keys are set)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.make({ text: "Hello from the fake Claude." })
      const transcript = makeTranscript()
      yield* Effect.gen(function*() {
        const choice = yield* Models.choose()
        expect(choice).toEqual({ _tag: "Anthropic", model: "claude-fake", baseURL: fake.baseURL })
        expect(Models.label(choice)).toBe(`claude-fake via ${fake.baseURL}`)
        expect(Models.label(choice, "fake", "embeddings")).toContain("Anthropic has no embeddings")
        yield* FirstCompletion.program.pipe(Effect.provide(Models.languageModel(choice, FirstCompletion.offline)))
      }).pipe(Effect.provide(outputLayer(transcript)), withEnv(env(fake.baseURL)))
      expect(transcript.text()).toBe("Hello from the fake Claude.\n(7 tokens in, 3 out)\n")
      expect(fake.requests).toEqual([expect.objectContaining({
        path: "/v1/messages",
        authorization: "Bearer sk-ant-test",
        body: expect.objectContaining({ model: "claude-fake" })
      })])
      const both = yield* Models.choose().pipe(withEnv({ ...env(fake.baseURL), OPENAI_API_KEY: "sk-test" }))
      expect(both._tag).toBe("OpenAi")
    }))

  it.effect("without ANTHROPIC_BASE_URL the examples go to Anthropic's API", () =>
    Effect.gen(function*() {
      const choice = yield* Models.choose().pipe(withEnv({ ANTHROPIC_API_KEY: "sk-ant-test" }))
      expect(choice).toEqual({ _tag: "Anthropic", model: AnthropicDefaults.model, baseURL: AnthropicClient.defaultBaseURL })
    }))

  it.live("src/anthropic.ts: the call pauses, is approved with an edit, and Claude sees the edited call and its result", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.make(
        { toolUse: { id: "toolu_1", name: "send_email", input: { to: "bob@example.com", body: "green" } } },
        { text: "Sent." }
      )
      const transcript = makeTranscript()
      const result = yield* Anthropic.program.pipe(
        Effect.provide(Layer.mergeAll(Anthropic.Claude, Anthropic.handlers, outputLayer(transcript))),
        withEnv(env(fake.baseURL))
      )
      expect(ChatOutcome.isComplete(result.outcome)).toBe(true)
      expect(transcript.text()).toBe("Sent.\n")
      expect(fake.requests).toHaveLength(2)
      expect(fake.requests[0]!.body).toMatchObject({
        model: AnthropicDefaults.model,
        max_tokens: 4096,
        thinking: { type: "enabled", budget_tokens: 2048 },
        system: [{ type: "text", text: "You write short emails.", cache_control: { type: "ephemeral" } }]
      })
      expect((fake.requests[1]!.body["messages"] as ReadonlyArray<unknown>).slice(1)).toEqual([
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "send_email", input: { to: "bob@example.com", body: "Good news: the build is green!" } }]
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "{\"sent\":true}" }] }
      ])
    }))

  it.effect("src/anthropic.ts runs offline on its scripted model", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const result = yield* Anthropic.program.pipe(
        Effect.provide(Layer.mergeAll(MockLanguageModel.make(Anthropic.offline).layer, Anthropic.handlers, outputLayer(transcript)))
      )
      expect(ChatOutcome.isComplete(result.outcome)).toBe(true)
      expect(transcript.text()).toBe("Sent.\n")
    }))

  it.live("the demo streams from Claude, with its tools declared and its system prompt", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.make({ text: "Hello from the fake Claude." })
      const run = yield* Effect.promise(() => runDemo(env(fake.baseURL), ["--approve-all", "-m", "hello"]))
      expect(run.code).toBe(0)
      expect(run.stdout).toContain(`model:   claude-fake via ${fake.baseURL}`)
      expect(run.stdout).not.toContain("scripted")
      expect(run.stdout).toContain("Assistant › Hello from the fake Claude.")
      const body = fake.requests[0]!.body
      expect(body).toMatchObject({ model: "claude-fake", stream: true })
      expect((body["tools"] as ReadonlyArray<{ readonly name: string }>).map((tool) => tool.name)).toEqual([
        "list_files",
        "read_file",
        "delete_files",
        "schedule_cleanup"
      ])
      expect(body["system"]).toEqual([expect.objectContaining({ type: "text" })])
    }), 60_000)
})

/** Runs the demo with these variables set and no OPENAI_API_KEY (bounded: killed after 50 seconds). */
const runDemo = (vars: Record<string, string>, args: ReadonlyArray<string>) => {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...vars, NO_COLOR: "1" }
  delete environment["OPENAI_API_KEY"]
  return runTsx(["src/demo/main.ts", ...args], { env: environment })
}


describe("the router, Claude first with OpenAI as the fallback (both keys set)", () => {
  const both = (anthropic: string, openai: string) =>
    withEnv({ ...env(anthropic), OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: openai })

  it.live("Claude answers while it is up; OpenAI is not asked", () =>
    Effect.gen(function*() {
      const claude = yield* FakeAnthropic.make({ text: "Claude here." })
      const openai = yield* FakeOpenAi.make("OpenAI here.")
      const transcript = makeTranscript()
      const result = yield* Effect.gen(function*() {
        const choice = yield* Models.choose()
        return yield* Routing.program.pipe(Effect.provide(Routing.routerOf(choice)))
      }).pipe(Effect.provide(outputLayer(transcript)), both(claude.baseURL, openai.baseURL))
      expect(result.outcome._tag).toBe("Complete")
      expect(transcript.text()).toContain("Claude here.\n(answered by primary)")
      expect([claude.requests.length, openai.requests.length]).toEqual([1, 0])
    }))

  it.live("Claude overloaded (529): the same request goes to OpenAI at once, recorded in the messages", () =>
    Effect.gen(function*() {
      const claude = yield* FakeAnthropic.make({ overloaded: true })
      const openai = yield* FakeOpenAi.make("OpenAI here.")
      const transcript = makeTranscript()
      const result = yield* Effect.gen(function*() {
        const choice = yield* Models.choose()
        return yield* Routing.program.pipe(Effect.provide(Routing.routerOf(choice)))
      }).pipe(Effect.provide(outputLayer(transcript)), both(claude.baseURL, openai.baseURL))
      expect(result.outcome._tag).toBe("Complete")
      expect(transcript.text()).toContain("OpenAI here.\n(answered by fallback)")
      // No provider retry before the fallback: one request to Claude, one to OpenAI.
      expect([claude.requests.length, openai.requests.length]).toEqual([1, 1])
      expect(openai.requests[0]!.body["model"]).toBe(OpenAiDefaults.chatModel)
    }))
})
