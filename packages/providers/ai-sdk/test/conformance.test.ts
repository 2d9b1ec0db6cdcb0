/**
 * Real AI SDK provider packages run core's provider conformance suite through
 * the bridge (harnesses in ./conformance/), each against the loopback replay
 * server speaking its vendor's documented wire.
 */
import { Conformance } from "@chat-ts/core/testing"
import { describe, it } from "@effect/vitest"
import { azure } from "./conformance/azure.js"
import { azureResponses } from "./conformance/azureResponses.js"
import { bedrock } from "./conformance/bedrock.js"
import { groq } from "./conformance/groq.js"
import { mistral, mistralV3 } from "./conformance/mistral.js"

Conformance.register(mistral, { describe, it })
Conformance.register(mistralV3, { describe, it })
Conformance.register(groq, { describe, it })
Conformance.register(azure, { describe, it })
Conformance.register(bedrock, { describe, it })
Conformance.register(azureResponses, { describe, it })
