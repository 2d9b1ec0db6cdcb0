/**
 * Gemini runs the provider conformance suite of `@chat-ts/core/testing`
 * (harness in ./conformance/gemini.ts), with the real `@google/genai` SDK
 * against the loopback replay server.
 */
import { Conformance } from "@chat-ts/core/testing"
import { describe, it } from "@effect/vitest"
import { gemini } from "./conformance/gemini.js"

Conformance.register(gemini, { describe, it })
