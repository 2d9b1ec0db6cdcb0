/**
 * The `@example` blocks in core's docs compile and run: each is the `// #region example` of
 * `test/examples/<Module>.<export>.ts` (type-checked with the tests, run below), copied into the
 * export's doc, and must equal it. The entry points a newcomer meets first must have one.
 */
import { Chat, ConversationStore, Messages, Turn } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Result } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as DocTags from "../../../scripts/doc-tags.mjs"
import * as ChatLayer from "./examples/Chat.layer.js"
import * as ChatMake from "./examples/Chat.make.js"
import * as GrantMake from "./examples/Grant.make.js"
import * as MessagesApprove from "./examples/Messages.approve.js"
import * as MessagesFromJson from "./examples/Messages.fromJson.js"
import * as MessagesToJson from "./examples/Messages.toJson.js"
import * as ToolMake from "./examples/Tool.make.js"
import * as ToolkitMake from "./examples/Toolkit.make.js"
import * as TurnStep from "./examples/Turn.step.js"
import * as WorkerResume from "./examples/Worker.resume.js"

const examplesDir = fileURLToPath(new URL("./examples", import.meta.url))

/** The entry points that must carry an `@example`, as `Module.export`. */
const entryPoints: ReadonlyArray<string> = [
  "Chat.make",
  "Chat.layer",
  "Turn.step",
  "Messages.approve",
  "Toolkit.make",
  "Tool.make",
  "Messages.toJson",
  "Messages.fromJson",
  "Worker.resume",
  "Grant.make"
]

/** The code of every ```ts block after an `@example` in a doc block, without the ` * ` margin. */
const examplesOf = (doc: string): ReadonlyArray<string> => {
  const lines = doc.split("\n").map((line) => line.replace(/^\s*\*( |$)/, ""))
  const out: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^@example\b/.test(lines[i]!)) continue
    const open = lines.findIndex((line, at) => at > i && /^```ts\s*$/.test(line))
    const close = lines.findIndex((line, at) => at > open && /^```\s*$/.test(line))
    if (open !== -1 && close !== -1) out.push(lines.slice(open + 1, close).join("\n"))
  }
  return out
}

/** Every `@example` of core's public modules, by `Module.export`. */
const documented: ReadonlyMap<string, string> = new Map(
  DocTags.modulesOf(DocTags.coreSrc).flatMap((module) =>
    DocTags.docs(readFileSync(join(DocTags.coreSrc, module), "utf8")).flatMap(({ name, doc }) =>
      doc === undefined ? [] : examplesOf(doc).map((code) => [`${basename(module, ".ts")}.${name}`, code] as const)
    )
  )
)

/** The example region of an examples file. */
const region = (file: string): string => {
  const text = readFileSync(join(examplesDir, file), "utf8")
  const match = /\/\/ #region example\n([\s\S]*?)\n\/\/ #endregion/.exec(text)
  return match === null ? "" : match[1]!
}

describe("the examples in core's docs", () => {
  it("the entry points a newcomer meets first have an @example", () => {
    expect(entryPoints.filter((name) => !documented.has(name))).toEqual([])
  })

  it("each @example is the region of its file under test/examples, and each file is in a doc", () => {
    const files = readdirSync(examplesDir).filter((file) => file.endsWith(".ts"))
    expect([...documented.keys()].sort()).toEqual(files.map((file) => basename(file, ".ts")).sort())
    for (const [name, code] of documented) expect({ name, code }).toEqual({ name, code: region(`${name}.ts`) })
  })
})

const weatherHandlers = ToolkitMake.WeatherToolsLive

describe("the examples run", () => {
  it("Tool.make and Toolkit.make: a tool and its handlers", () => {
    expect(ToolMake.GetWeather.name).toBe("get_weather")
    expect(Object.keys(ToolkitMake.WeatherTools.tools)).toEqual(["get_weather"])
  })

  it.effect("Chat.make: a turn that calls the tool and answers", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([
        MockLanguageModel.toolCalls([{ id: "c1", name: "get_weather", arguments: { city: "Oslo" } }]),
        MockLanguageModel.text("It is 4 degrees in Oslo.")
      ])
      const answer = yield* ChatMake.program.pipe(Effect.provide(Layer.merge(model.layer, weatherHandlers)))
      expect(answer).toBe("It is 4 degrees in Oslo.")
    }))

  it.effect("Chat.layer: the chat as a service", () =>
    Effect.gen(function*() {
      const model = MockLanguageModel.make([MockLanguageModel.text("Noon.")])
      const handlers = ChatLayer.ClockTools.toLayer({ now: () => Effect.succeed(0) })
      const result = yield* ChatLayer.program.pipe(Effect.provide(Layer.merge(model.layer, handlers)))
      expect(result.outcome).toEqual(expect.objectContaining({ _tag: "Complete", value: "Noon." }))
    }))

  it("Turn.step: call the model, then complete", () => {
    expect(TurnStep.first).toEqual(Turn.Outcome.CallModel({ step: 1 }))
    expect(TurnStep.start).toEqual(Messages.fromUser("Hi"))
    expect(TurnStep.second._tag).toBe("Complete")
    expect(TurnStep.end.map((message) => message.role)).toEqual(["user", "assistant"])
  })

  const paused: Messages.Messages = [
    Messages.user("Mail the report."),
    {
      role: "assistant",
      parts: [{ _tag: "ToolCall", id: "call_1", name: "send_email", arguments: "{\"to\":\"bob@example.com\"}", status: { _tag: "AwaitingApproval" } }]
    }
  ]

  it.effect("Messages.approve: with an edit, and data-last with a decider", () =>
    Effect.gen(function*() {
      const edited = MessagesApprove.approveEdited(paused)
      expect(Result.isSuccess(edited)).toBe(true)
      const call = Messages.findTool(Result.getOrThrow(edited), "call_1")!
      expect(Messages.effectiveArguments(call)).toBe("{\"to\":\"ann@example.com\"}")
      const decided = yield* MessagesApprove.approveAsAnn(paused, 1_000)
      expect(Messages.decisionOf(Messages.findTool(decided, "call_1")!)).toEqual({
        decision: expect.objectContaining({ by: "ann", roles: ["ops"], at: 1_000, kind: "approve" })
      })
    }))

  it.effect("Messages.toJson and fromJson: a round trip, and a refusal", () =>
    Effect.gen(function*() {
      let written = ""
      yield* MessagesToJson.save(paused, (json) => Effect.sync(() => void (written = json)))
      expect(Messages.fromJson(written)).toEqual(Result.succeed(paused))
      expect(MessagesFromJson.roundTrip).toEqual(Result.succeed(Messages.fromUser("Hi")))
      expect(Result.isFailure(MessagesFromJson.refused)).toBe(true)
    }))

  it.effect("Worker.resume: approve a stored call and resume the turn", () =>
    Effect.gen(function*() {
      const store = yield* ConversationStore.ConversationStore
      const stored: Messages.Messages = [
        Messages.user("How cold is it in Oslo?"),
        {
          role: "assistant",
          parts: [{ _tag: "ToolCall", id: "c1", name: "get_weather", arguments: "{\"city\":\"Oslo\"}", status: { _tag: "AwaitingApproval" } }]
        }
      ]
      yield* store.save("conv-1", stored, { expectedVersion: 0 })
      const chat = yield* Chat.make({ tools: ToolkitMake.WeatherTools })
      const result = yield* WorkerResume.approveAndResume(chat, "conv-1", "c1")
      expect(result.outcome).toEqual(expect.objectContaining({ _tag: "Complete", value: "4 degrees." }))
      const saved = Option.getOrThrow(yield* store.load("conv-1"))
      expect(Messages.findTool(saved.messages, "c1")!.status._tag).toBe("Completed")
    }).pipe(
      Effect.provide(Layer.mergeAll(
        ConversationStore.layerMemory,
        MockLanguageModel.make([MockLanguageModel.text("4 degrees.")]).layer,
        weatherHandlers
      ))
    ))

  it("Grant.make: a grant, recorded in the messages", () => {
    expect(Result.isSuccess(GrantMake.grant)).toBe(true)
    const messages = Result.getOrThrow(GrantMake.withGrant([Messages.user("Mail Ann.")]))
    expect(messages[0]!.grants?.map((grant) => grant.id)).toEqual(["g1"])
  })
})
