// Gemini: the first completion on Google's Gemini API, through @chat-ts/google.
// Run it with GEMINI_API_KEY (or GOOGLE_API_KEY) set: npx tsx src/snippets/gemini.ts
// #region model
import { GoogleClient, GoogleDefaults, GoogleEmbeddings, GoogleLanguageModel } from "@chat-ts/google"
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Redacted } from "effect"
import { program } from "../first-completion.js"

// Reads GEMINI_API_KEY (else GOOGLE_API_KEY), and GEMINI_BASE_URL when set.
const Gemini = GoogleLanguageModel.layer({
  model: GoogleDefaults.model,
  thinking: { budget: 1024, includeThoughts: true },
  functionCalling: { mode: "auto" }
}).pipe(Layer.provide(GoogleClient.layerConfig()))

program.pipe(Effect.provide(Gemini), NodeRuntime.runMain)
// #endregion model

// #region client
// The client in code: the key as a redacted secret, another base URL, extra headers.
export const client = (key: string) =>
  GoogleClient.layer({
    apiKey: Redacted.make(key),
    baseURL: "https://generativelanguage.googleapis.com",
    headers: { "x-goog-user-project": "my-project" },
    timeout: 60_000
  })
// #endregion client

// #region embeddings
// Vectors for retrieval, shortened to 768 numbers.
export const Embeddings = GoogleEmbeddings.layer({
  model: GoogleDefaults.embeddingModel,
  taskType: "RETRIEVAL_DOCUMENT",
  dimensions: 768
}).pipe(Layer.provide(GoogleClient.layerConfig()))
// #endregion embeddings
