/**
 * Embeddings: turn texts into vectors with the `EmbeddingModel` service and
 * rank documents by cosine similarity to a question. Offline, a tiny
 * deterministic fake stands in for a real embedding model.
 *
 *   npx tsx src/embeddings.ts
 */
// #region imports
import { EmbeddingModel } from "@chat-ts/core"
import { Console, Effect } from "effect"
// #endregion imports
import { isMain, runExample } from "./shared/main.js"
import * as Models from "./shared/Models.js"

const documents = [
  "Refunds are paid back to the card you paid with within five days.",
  "Shipping takes two to four working days in Portugal.",
  "You can change your password in the account settings."
]

// #region program
export const program = Effect.gen(function*() {
  const model = yield* EmbeddingModel.EmbeddingModel
  const question = "When is my refund paid back?"
  const { vectors } = yield* model.embed([question, ...documents])
  const [query, ...docs] = vectors
  const ranked = documents
    .map((text, i) => ({ text, score: EmbeddingModel.cosineSimilarity(query!, docs[i]!) }))
    .sort((a, b) => b.score - a.score)
  yield* Console.log(`Q: ${question}`)
  for (const { score, text } of ranked) yield* Console.log(`${score.toFixed(3)}  ${text}`)
  return ranked
})
// #endregion program

// #region fake
/**
 * A deterministic fake embedding model: each word (lower-cased, a trailing
 * "s" dropped) adds 1 at a position picked by hashing it. Texts sharing words
 * get similar vectors; good enough to test ranking code offline.
 */
export const fakeEmbeddings = (dimensions = 64): EmbeddingModel.Service => ({
  embed: (inputs) =>
    Effect.sync(() => ({
      vectors: inputs.map((input) => {
        const vector = new Array<number>(dimensions).fill(0)
        for (const word of input.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
          const stem = word.length > 3 ? word.replace(/s$/, "") : word
          let hash = 2166136261
          for (const char of stem) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619)
          vector[(hash >>> 0) % dimensions]! += 1
        }
        return vector
      }),
      usage: { inputTokens: inputs.join(" ").split(/\s+/).length },
      model: "fake-embeddings"
    }))
})
// #endregion fake

if (isMain(import.meta.url)) {
  runExample((choice) => program.pipe(Effect.provide(Models.embeddingModel(choice, fakeEmbeddings()))), {
    offlineName: "fake offline embedding model",
    what: "embeddings"
  })
}
