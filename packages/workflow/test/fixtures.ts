/**
 * Tools, a turn definition and helpers shared by the workflow tests.
 */
import { Action, ConversationStore, Grant, Messages, Tool, Toolkit } from "@chat-ts/core"
import type { MockLanguageModel } from "@chat-ts/core/testing"
import { Clock, Effect, Layer, Result, Schema } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { ChatWorkflow } from "../src/index.js"

export const ListFiles = Tool.make("list_files", {
  description: "List the files of a folder.",
  parameters: { folder: Schema.String },
  success: Schema.Array(Schema.String)
})

export const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number })
})

export const Remind = Tool.make("remind", {
  description: "Send a reminder later.",
  parameters: { text: Schema.String },
  success: Schema.String
})

/** A page that is a PNG comes back as a file the model sees as an image (`splitFiles`). */
export const Fetch = Tool.make("fetch_page", {
  description: "Fetch a page (safe to repeat).",
  parameters: { url: Schema.String },
  success: Schema.String,
  idempotent: true,
  splitFiles: (page) =>
    page.endsWith(".png")
      ? { result: "an image: file 0", files: [Messages.file({ mediaType: "image/png", base64: "iVBORw0KGgo=" })] }
      : { result: page, files: [] }
})

export const HOUR = 3_600_000

/** Deleting from "vault/": two people of ops, not the one who asked. */
export const vaultPolicy = { approve: { roles: ["ops"] }, notRequester: true, quorum: 2 }

/**
 * Lists and fetches run; deletes wait for a person (deleting from "tmp/" only
 * for one hour, from "vault/" under `vaultPolicy`), unless a grant covers them; reminders run in 10 minutes.
 */
export const files = Toolkit.withStrategy(
  Toolkit.make(ListFiles, DeleteFiles, Remind, Fetch),
  // A live grant made before a call was proposed settles it (see ChatWorkflow.test.ts, grants).
  Grant.grantedOr((call) =>
    call.name === "delete_files"
      ? call.params.paths.some((path) => path.startsWith("vault/"))
        ? Action.RequireApproval({ policy: vaultPolicy })
        : call.params.paths.some((path) => path.startsWith("tmp/"))
        ? Effect.map(Clock.currentTimeMillis, (now) => Action.RequireApproval({ expiresAt: now + HOUR }))
        : Action.RequireApproval()
      : call.name === "remind"
      ? Action.Defer({ after: "10 minutes" })
      : Action.Execute())
)

/** What the handlers ran, with the time they ran at. */
export interface Recorder {
  readonly calls: Array<{ readonly name: string; readonly params: unknown; readonly at: number; readonly attempt: number }>
}

export const recorder = (): Recorder => ({ calls: [] })

export const handlers = (rec: Recorder) =>
  files.toLayer({
    list_files: (params, info) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        rec.calls.push({ name: "list_files", params, at, attempt: info.attempt })
        return ["a.log", "b.log"]
      }),
    delete_files: (params, info) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        rec.calls.push({ name: "delete_files", params, at, attempt: info.attempt })
        return { deleted: params.paths.length }
      }),
    remind: (params, info) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        rec.calls.push({ name: "remind", params, at, attempt: info.attempt })
        return `sent: ${params.text}`
      }),
    fetch_page: (params, info) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        rec.calls.push({ name: "fetch_page", params, at, attempt: info.attempt })
        return `page ${params.url}`
      })
  })

export const turns = ChatWorkflow.make({ name: "files-turn", tools: files })

/** The engine in memory, a store in memory, the scripted model and the recording handlers. */
export const testLayer = (model: MockLanguageModel.MockLanguageModel, rec: Recorder) =>
  ChatWorkflow.layer(turns).pipe(
    Layer.provideMerge(Layer.mergeAll(WorkflowEngine.layerMemory, ConversationStore.layerMemory, model.layer, handlers(rec)))
  )

/** Runs `effect` until `done` holds, yielding to the workflow's fibers in between (bounded). */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (a: A) => boolean, tries = 2_000) =>
  Effect.gen(function*() {
    for (let i = 0; i < tries; i++) {
      const a = yield* Effect.result(effect)
      if (Result.isSuccess(a) && done(a.success)) return a.success
      yield* Effect.yieldNow
    }
    return yield* Effect.die(new Error(`not reached after ${tries} tries`))
  })
