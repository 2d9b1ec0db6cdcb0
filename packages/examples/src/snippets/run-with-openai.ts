// Getting started: the first completion on OpenAI (or any OpenAI-compatible server).
// Run it with OPENAI_API_KEY set: npx tsx src/snippets/run-with-openai.ts
// #region model
import { OpenAiChatCompletions, OpenAiClient, OpenAiDefaults } from "@chat-ts/openai"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { program } from "../first-completion.js"

// Reads OPENAI_API_KEY, and OPENAI_BASE_URL when set (e.g. http://localhost:11434/v1 for Ollama).
const OpenAi = OpenAiChatCompletions.layer({ model: OpenAiDefaults.chatModel }).pipe(
  Layer.provide(OpenAiClient.layerConfig())
)

program.pipe(Effect.provide(OpenAi), NodeRuntime.runMain)
// #endregion model
