/**
 * The errors of building a chat-ts model on an AI SDK model: raised once, when
 * the layer is built, never during a call (calls fail with core's
 * `ChatError.ModelError`s).
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"

/** The specification versions this package speaks. */
export const supportedVersions = ["v4", "v3"] as const

/**
 * The value given as a model is not an AI SDK model of a specification this
 * package speaks (`v4` from AI SDK 7, `v3` from AI SDK 6): an older `v2`/`v1`
 * model, another kind of model, or not a model at all.
 */
export class UnsupportedModel extends Schema.TaggedError<UnsupportedModel>("@chat-ts/ai-sdk-provider/UnsupportedModel")(
  "UnsupportedModel",
  {
    message: Schema.String,
    /** The `specificationVersion` the value declared, when it declared one. */
    specificationVersion: Schema.optional(Schema.String),
    /** What was expected: a language model or an embedding model. */
    expected: Schema.Literals(["language model", "embedding model"])
  }
) {}
