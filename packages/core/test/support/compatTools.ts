/**
 * The tools of the generator of the v0.1 fixtures (`test/fixtures/v0.1/README.md`),
 * with the same names, parameters, metadata and strategy, and handlers that
 * record every call: the stored documents resume with them.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Action, Tool, Toolkit } from "../../src/index.js"

/** The turns' clock when 0.1 wrote the fixtures (2025-01-01T00:00:00Z). */
export const T0 = Date.UTC(2025, 0, 1)

/** Reads a folder: runs at once. */
export const ListFiles = Tool.make("list_files", {
  description: "List files.",
  parameters: { folder: Schema.String },
  success: Schema.Array(Schema.String),
  metadata: { risk: "read" }
})
/** Deletes files: awaits approval (for an hour). */
export const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files.",
  parameters: { paths: Schema.Array(Schema.String) },
  success: Schema.Struct({ deleted: Schema.Number }),
  metadata: { risk: "write" }
})
/** Cleans a folder: deferred to a day later. */
export const Cleanup = Tool.make("schedule_cleanup", {
  description: "Clean up later.",
  parameters: { folder: Schema.String },
  success: Schema.String,
  metadata: { risk: "later" }
})
/** Formats the disk: always rejected. */
export const Forbidden = Tool.make("format_disk", { description: "Never.", parameters: {}, success: Schema.String, metadata: { risk: "never" } })
/** The typed failure of `read_file`. */
export class Missing extends Schema.TaggedError<Missing>()("Missing", { path: Schema.String }) {}
/** Reads a file: runs at once, fails with `Missing`. */
export const ReadFile = Tool.make("read_file", {
  description: "Read a file.",
  parameters: { path: Schema.String },
  success: Schema.String,
  failure: Missing,
  metadata: { risk: "read" }
})

/** The generator's tools. */
export const compatTools = [ListFiles, DeleteFiles, Cleanup, Forbidden, ReadFile] as const

/** The generator's toolkit: reads run, writes await approval for an hour, cleanups wait a day, formatting is refused. */
export const kit = Toolkit.withStrategy(Toolkit.make(...compatTools), (_call, m) =>
  m.risk === "write"
    ? Action.RequireApproval({ expiresAt: T0 + 3_600_000 })
    : m.risk === "later"
    ? Action.Defer({ at: T0 + 86_400_000 })
    : m.risk === "never"
    ? Action.Reject({ reason: "formatting disks is not allowed" })
    : Action.Execute())

/** Every handler call: the tool and its parameters, in order. */
export type Ran = Array<{ readonly name: string; readonly params: unknown }>

/** Handlers of `kit` that record their calls in `ran`; `read_file` fails with `Missing` for "missing". */
export const handlers = (ran: Ran) =>
  kit.toLayer({
    list_files: (p) => Effect.sync(() => (ran.push({ name: "list_files", params: p }), ["a.log", "b.log"])),
    delete_files: (p) => Effect.sync(() => (ran.push({ name: "delete_files", params: p }), { deleted: p.paths.length })),
    schedule_cleanup: (p) => Effect.sync(() => (ran.push({ name: "schedule_cleanup", params: p }), `cleaned ${p.folder}`)),
    format_disk: (p) => Effect.sync(() => (ran.push({ name: "format_disk", params: p }), "formatted")),
    read_file: (p) =>
      Effect.suspend(() => {
        ran.push({ name: "read_file", params: p })
        return p.path === "missing" ? Effect.fail(new Missing({ path: p.path })) : Effect.succeed(`contents of ${p.path}`)
      })
  })

