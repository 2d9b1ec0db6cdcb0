/**
 * Both OpenAI wires run the provider conformance suite of `@chat-ts/core/testing`
 * (harnesses in ./conformance/openai.ts), with the real `openai` SDK against
 * the loopback replay server; so does a compatible preset (DeepSeek) with its
 * reasoning round-trip.
 */
import { Conformance } from "@chat-ts/core/testing"
import { describe, it } from "@effect/vitest"
import { chatCompletions, deepSeek, responses } from "./conformance/openai.js"

Conformance.register(chatCompletions, { describe, it })
Conformance.register(responses, { describe, it })
Conformance.register(deepSeek, { describe, it })
