/**
 * `AnthropicLanguageModel` runs the provider conformance suite of
 * `@chat-ts/core/testing` (harness in ./conformance/anthropic.ts), with the
 * real `@anthropic-ai/sdk` against the loopback replay server.
 */
import { Conformance } from "@chat-ts/core/testing"
import { describe, it } from "@effect/vitest"
import { anthropic } from "./conformance/anthropic.js"

Conformance.register(anthropic, { describe, it })
