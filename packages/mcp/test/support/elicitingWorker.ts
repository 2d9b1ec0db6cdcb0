/**
 * A process that dies while a person is asked (for `Elicitation.crash.test.ts`): it connects to the
 * reference "everything" server over stdio, runs a turn whose call triggers the server's elicitation
 * (run without approval), saves every checkpoint to `STATE_FILE` (JSON, written whole then renamed,
 * as a store would hold it), and once the request is in the inbox prints
 * `{"asked":"<id>","serverPid":<pid>}` and waits, never answering, until it is killed.
 */
import * as fs from "node:fs"
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Action, Messages } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { Effect, Result } from "effect"
import { McpChat, McpElicitation, McpToolkit } from "../../src/index.js"
import { everythingBin } from "./reference.js"

const stateFile = process.env["STATE_FILE"]!

const save = (messages: Messages.Messages) =>
  Effect.sync(() => {
    fs.writeFileSync(`${stateFile}.tmp`, Result.getOrThrow(Messages.toJson(messages)))
    fs.renameSync(`${stateFile}.tmp`, stateFile)
  })

await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const inbox = yield* McpElicitation.inbox()
  const server = yield* McpToolkit.make({
    transport: McpToolkit.stdio(process.execPath, { args: [everythingBin, "stdio"], stderr: "ignore" }),
    elicitation: inbox.handler,
    strategy: () => Action.Execute(),
    timeout: "10 minutes"
  })
  const model = MockLanguageModel.make([MockLanguageModel.toolCalls([{ id: "e", name: "trigger-elicitation-request" }])])
  const chat = yield* McpChat.make({ servers: [server] }).pipe(Effect.provide(model.layer))
  yield* Effect.forkChild(chat.complete(Messages.fromUser("Sign me up."), { checkpoint: save }))
  const request = yield* inbox.next
  const serverPid = (server.client.transport as StdioClientTransport).pid
  process.stdout.write(`${JSON.stringify({ asked: request.id, serverPid })}\n`)
  return yield* Effect.never
})))
