/**
 * Tools, toolkits and small helpers shared by the `Chat` service tests.
 */
import { expect } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import fc from "fast-check"
import { Action, type ChatOutcome, type LanguageModel, Messages, Tool, Toolkit } from "../../src/index.js"
import type { MockLanguageModel } from "../../src/testing/index.js"

/** How dangerous a tool is; read by the strategy only. */
export type Risk = "read" | "write"

export const ListFiles = Tool.make("list_files", {
  description: "List the files of a folder.",
  parameters: { folder: Schema.String },
  success: Schema.Array(Schema.String),
  metadata: { risk: "read" as Risk }
})

export const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { risk: "write" as Risk }
})

/** The typed failure of `read_file`. */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", { path: Schema.String }) {}

export const ReadFile = Tool.make("read_file", {
  description: "Read a file.",
  parameters: { path: Schema.String },
  success: Schema.String,
  failure: FileNotFound,
  metadata: { risk: "read" as Risk }
})

/** Reads run, writes wait for a person. */
export const files = Toolkit.withStrategy(
  Toolkit.make(ListFiles, DeleteFiles, ReadFile),
  (_call, metadata) => (metadata.risk === "write" ? Action.RequireApproval() : Action.Execute())
)

/** What the handlers were called with, in order. */
export interface Recorder {
  readonly calls: Array<{ readonly name: string; readonly params: unknown }>
}

export const recorder = (): Recorder => ({ calls: [] })

/** The names of the tools a recorder saw run. */
export const ran = (recorder: Recorder): ReadonlyArray<string> => recorder.calls.map((call) => call.name)

/** Handlers of `files` that record their calls. `read_file` fails with `FileNotFound` for "missing". */
export const fileHandlers = (rec: Recorder) =>
  files.toLayer({
    list_files: (params) =>
      Effect.sync(() => {
        rec.calls.push({ name: "list_files", params })
        return ["a.log", "b.log"]
      }),
    delete_files: (params) =>
      Effect.sync(() => {
        rec.calls.push({ name: "delete_files", params })
        return { deleted: params.paths.length }
      }),
    read_file: (params) =>
      Effect.suspend(() => {
        rec.calls.push({ name: "read_file", params })
        return params.path === "missing"
          ? Effect.fail(new FileNotFound({ path: params.path }))
          : Effect.succeed(`contents of ${params.path}`)
      })
  })

/** The outcome of a result, asserted to be a pause. */
export const paused = <A>(result: ChatOutcome.Result<A>): ChatOutcome.Paused => {
  if (result.outcome._tag !== "Paused") throw new Error(`expected a pause, got ${result.outcome._tag}`)
  return result.outcome
}

/** The outcome of a result, asserted to be complete. */
export const complete = <A>(result: ChatOutcome.Result<A>): ChatOutcome.Complete<A> => {
  if (result.outcome._tag !== "Complete") {
    throw new Error(`expected a completion, got ${result.outcome._tag} (${JSON.stringify(result.outcome)})`)
  }
  return result.outcome
}

/** The status tag of a call in the messages. */
export const statusOf = (messages: Messages.Messages, id: string): string | undefined =>
  Messages.findTool(messages, id)?.status._tag

/** The tool call with `id` as the model saw it in a request (effective arguments and result). */
export const seen = (request: LanguageModel.Request | undefined, id: string): Messages.ProjectedToolCall => {
  if (request === undefined) throw new Error("no such request")
  const call = Messages.findTool(request.messages, id)
  if (call === undefined) throw new Error(`the request holds no call ${id}`)
  return Messages.projectToolCall(call)
}

/** The latest request a scripted model received. */
export const lastRequest = (model: MockLanguageModel.MockLanguageModel): LanguageModel.Request => {
  const request = model.requests[model.requests.length - 1]
  if (request === undefined) throw new Error("the model received no request")
  return request
}

/** Asserts that no call of the messages is left `Running` (or in any other unfinished in-flight state). */
export const expectNothingRunning = (messages: Messages.Messages): void => {
  expect(Messages.toolCalls(messages).filter((call) => call.status._tag === "Running")).toEqual([])
}

/**
 * Lets the other fibers run until `ready` holds, then asserts it: a bounded wait on observable
 * behaviour (a forked turn reaching a state), in place of guessing how far it got.
 */
export const until = (ready: () => boolean, what: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < 1_000 && !ready(); i++) yield* Effect.yieldNow
    expect(ready(), what).toBe(true)
  })

/**
 * Checks a fast-check property whose body is an Effect: each run gets the calling test's services
 * (its `TestClock` included) and a scope of its own; a failed run fails the test with fast-check's report.
 */
export const checkProperty = <A, E, R>(
  arbitrary: fc.Arbitrary<A>,
  body: (value: A) => Effect.Effect<unknown, E, R>,
  parameters: fc.Parameters<[A]>
): Effect.Effect<void, never, Exclude<R, Scope.Scope>> =>
  Effect.flatMap(Effect.context<Exclude<R, Scope.Scope>>(), (context) =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(arbitrary, (value) => Effect.runPromiseWith(context)(Effect.asVoid(Effect.scoped(body(value))))),
        parameters
      )
    ))
