/**
 * Token usage reported by a model for one response, and how usage adds up
 * across the steps of a turn.
 *
 * @since 0.1.0
 */
import * as S from "../internal/schema.js"

/**
 * Token counts of one model response or of a whole turn.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Usage = S.Usage

/**
 * Token counts of one model response or of a whole turn.
 *
 * @category models
 * @since 0.1.0
 */
export type Usage = typeof Usage.Type

/**
 * No tokens used.
 *
 * @category constructors
 * @since 0.1.0
 */
export const empty: Usage = { inputTokens: 0, outputTokens: 0 }

const addOptional = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0)

/**
 * Adds two usages field by field (optional counts stay absent when both are absent).
 *
 * @category utils
 * @since 0.1.0
 */
export const add = (self: Usage, that: Usage): Usage => {
  const reasoningTokens = addOptional(self.reasoningTokens, that.reasoningTokens)
  const cachedInputTokens = addOptional(self.cachedInputTokens, that.cachedInputTokens)
  return {
    inputTokens: self.inputTokens + that.inputTokens,
    outputTokens: self.outputTokens + that.outputTokens,
    ...(reasoningTokens === undefined ? {} : { reasoningTokens }),
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens })
  }
}

/**
 * Total of input and output tokens.
 *
 * @category utils
 * @since 0.1.0
 */
export const total = (self: Usage): number => self.inputTokens + self.outputTokens
