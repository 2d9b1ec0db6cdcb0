/**
 * A tool result's files (issue 24, defect 11): a tool's `splitFiles` takes the
 * images out of its encoded result; the call's `Completed` status keeps them
 * as `files` (the result only mentions them), they survive the stored JSON,
 * and the projection every provider uses hands them over as files. A result
 * without files is stored exactly as before (no `files` key), and a
 * `splitFiles` that throws or returns no file parts is the tool's defect,
 * never a result with the bytes in it. A typed failure's files (`splitFailureFiles`)
 * follow the same rule in the call's `Failed` status.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Result, Schema } from "effect"
import { Chat, Messages, Tool, Toolkit } from "../src/index.js"
import { MockLanguageModel } from "../src/testing/index.js"
import { lastRequest, seen } from "./support/Chat.helpers.js"

const Screenshot = Schema.Struct({ caption: Schema.String, png: Schema.String })

/** A tool whose result holds a base64 PNG, which `splitFiles` turns into a file part. */
const shot = (splitFiles: (encoded: typeof Screenshot.Encoded) => Tool.ResultFiles) =>
  Tool.make("screenshot", {
    description: "Takes a screenshot.",
    parameters: {},
    success: Screenshot,
    splitFiles
  })

const asFile = (encoded: typeof Screenshot.Encoded): Tool.ResultFiles => ({
  result: { caption: encoded.caption, png: { file: 0 } },
  files: [Messages.file({ mediaType: "image/png", base64: encoded.png })]
})

const run = (tool: Tool.Any) =>
  Effect.gen(function*() {
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "s1", name: "screenshot", arguments: {} }]),
      MockLanguageModel.text("I see a login form.")
    ])
    const kit = Toolkit.make(tool)
    const handlers = kit.toLayer({ screenshot: () => Effect.succeed({ caption: "login", png: "iVBORw0KGgo=" }) } as never)
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
    const result = yield* Effect.result(chat.complete(Messages.fromUser("What is on screen?")))
    return { model, result }
  })

describe("tool results with files", () => {
  it.effect("the files are stored beside the result, survive the stored JSON, and reach the model as files, not text", () =>
    Effect.gen(function*() {
      const { model, result } = yield* run(shot(asFile))
      const messages = Result.getOrThrow(result).messages
      const status = Messages.findTool(messages, "s1")!.status
      expect(status).toEqual({
        _tag: "Completed",
        result: { caption: "login", png: { file: 0 } },
        files: [{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: "iVBORw0KGgo=" } }]
      })
      const projected = seen(lastRequest(model), "s1").result!
      expect(Messages.resultFiles(projected)).toEqual([Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })])
      expect(projected.text).toBe("{\"caption\":\"login\",\"png\":{\"file\":0}}")
      const back = Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(messages))))
      expect(back).toEqual(messages)
      expect(Messages.resultTextOnly(projected)).toBe(`${projected.text}\n${Messages.filePlaceholder(Messages.resultFiles(projected)[0]!, 0)}`)
    }))

  it.effect("a result without files is stored as before: no files key, none in the projection", () =>
    Effect.gen(function*() {
      const { model, result } = yield* run(shot((encoded) => ({ result: encoded, files: [] })))
      const status = Messages.findTool(Result.getOrThrow(result).messages, "s1")!.status
      expect(status).toEqual({ _tag: "Completed", result: { caption: "login", png: "iVBORw0KGgo=" } })
      expect(Object.keys(status)).toEqual(["_tag", "result"])
      expect(seen(lastRequest(model), "s1").result).toEqual({ isError: false, value: { caption: "login", png: "iVBORw0KGgo=" }, text: "{\"caption\":\"login\",\"png\":\"iVBORw0KGgo=\"}" })
    }))

  it.effect("a splitFiles that throws, or returns something else than file parts, is the tool's defect: no bytes reach the model", () =>
    Effect.gen(function*() {
      const broken = [
        shot(() => {
          throw new Error("boom")
        }),
        shot((encoded) => ({ result: encoded, files: [{ mediaType: "image/png" }] as never }))
      ]
      for (const tool of broken) {
        const { model, result } = yield* run(tool)
        expect(Result.isFailure(result)).toBe(true)
        for (const request of model.requests) expect(JSON.stringify(request.messages)).not.toContain("iVBORw0KGgo")
      }
    }))

  it("a Completed status with files decodes; one with a malformed file is refused", () => {
    const doc = (files: unknown) => ({
      format: "chat-ts/messages",
      version: 1,
      messages: [
        { role: "user", parts: [{ _tag: "Text", text: "hi" }] },
        {
          role: "assistant",
          parts: [{ _tag: "ToolCall", id: "a", name: "t", arguments: "{}", status: { _tag: "Completed", result: null, files } }]
        }
      ]
    })
    expect(Result.isSuccess(Messages.decode(doc([{ _tag: "File", mediaType: "image/png", data: { _tag: "Url", url: "https://x/y.png" } }]))))
      .toBe(true)
    expect(Result.isFailure(Messages.decode(doc([{ _tag: "File", mediaType: "image/png" }])))).toBe(true)
    expect(Result.isFailure(Messages.fromJson(JSON.stringify(doc("iVBORw0KGgo="))))).toBe(true)
  })

  it("a Failed status with files decodes; one with a malformed file is refused", () => {
    const doc = (files: unknown) => ({
      format: "chat-ts/messages",
      version: 1,
      messages: [
        { role: "user", parts: [{ _tag: "Text", text: "hi" }] },
        {
          role: "assistant",
          parts: [{ _tag: "ToolCall", id: "a", name: "t", arguments: "{}", status: { _tag: "Failed", error: "no", files } }]
        }
      ]
    })
    expect(Result.isSuccess(Messages.decode(doc([{ _tag: "File", mediaType: "image/png", data: { _tag: "Url", url: "https://x/y.png" } }]))))
      .toBe(true)
    expect(Result.isFailure(Messages.decode(doc([{ _tag: "File", mediaType: "image/png" }])))).toBe(true)
  })
})

class RenderFailed extends Schema.TaggedError<RenderFailed>()("RenderFailed", { reason: Schema.String, png: Schema.String }) {}

/** A tool that fails with a typed error holding a base64 PNG, which `splitFailureFiles` turns into a file part. */
const failing = (splitFailureFiles?: (encoded: typeof RenderFailed.Encoded) => Tool.ResultFiles) =>
  Tool.make("screenshot", {
    description: "Takes a screenshot.",
    parameters: {},
    success: Screenshot,
    failure: RenderFailed,
    ...(splitFailureFiles === undefined ? {} : { splitFailureFiles })
  })

const runFailing = (tool: Tool.Any) =>
  Effect.gen(function*() {
    const model = MockLanguageModel.make([
      MockLanguageModel.toolCalls([{ id: "s1", name: "screenshot", arguments: {} }]),
      MockLanguageModel.text("The render failed.")
    ])
    const kit = Toolkit.make(tool)
    const handlers = kit.toLayer({ screenshot: () => Effect.fail(new RenderFailed({ reason: "timeout", png: "iVBORw0KGgo=" })) } as never)
    const chat = yield* Chat.make({ tools: kit }).pipe(Effect.provide(Layer.merge(model.layer, handlers)))
    const result = yield* Effect.result(chat.complete(Messages.fromUser("What is on screen?")))
    return { model, result }
  })

describe("tool failures with files", () => {
  it.effect("a typed failure's files are stored beside its error, survive the stored JSON, and reach the model as files", () =>
    Effect.gen(function*() {
      const { model, result } = yield* runFailing(failing((encoded) => ({
        result: { ...encoded, png: { file: 0 } },
        files: [Messages.file({ mediaType: "image/png", base64: encoded.png })]
      })))
      const messages = Result.getOrThrow(result).messages
      const status = Messages.findTool(messages, "s1")!.status
      expect(status).toEqual({
        _tag: "Failed",
        error: { _tag: "RenderFailed", reason: "timeout", png: { file: 0 } },
        files: [{ _tag: "File", mediaType: "image/png", data: { _tag: "Base64", base64: "iVBORw0KGgo=" } }]
      })
      const projected = seen(lastRequest(model), "s1").result!
      expect(projected.isError).toBe(true)
      expect(Messages.resultFiles(projected)).toEqual([Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })])
      expect(projected.text).not.toContain("iVBORw0KGgo")
      expect(Result.getOrThrow(Messages.fromJson(Result.getOrThrow(Messages.toJson(messages))))).toEqual(messages)
    }))

  it.effect("a failure without files (or without splitFailureFiles) is stored as before: no files key", () =>
    Effect.gen(function*() {
      for (const tool of [failing(), failing((encoded) => ({ result: encoded, files: [] }))]) {
        const { result } = yield* runFailing(tool)
        const status = Messages.findTool(Result.getOrThrow(result).messages, "s1")!.status
        expect(status).toEqual({ _tag: "Failed", error: { _tag: "RenderFailed", reason: "timeout", png: "iVBORw0KGgo=" } })
        expect(Object.keys(status)).toEqual(["_tag", "error"])
      }
    }))

  it.effect("a splitFailureFiles that throws, or returns something else than file parts, is the tool's defect: no bytes reach the model", () =>
    Effect.gen(function*() {
      const broken = [
        failing(() => {
          throw new Error("boom")
        }),
        failing((encoded) => ({ result: encoded, files: [{ mediaType: "image/png" }] as never }))
      ]
      for (const tool of broken) {
        const { model, result } = yield* runFailing(tool)
        expect(Result.isFailure(result)).toBe(true)
        for (const request of model.requests) expect(JSON.stringify(request.messages)).not.toContain("iVBORw0KGgo")
      }
    }))
})
