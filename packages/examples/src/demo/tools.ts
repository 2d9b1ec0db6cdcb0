/**
 * The demo agent's tools over the sandbox folder, and the strategy that
 * decides, from each tool's metadata, whether a call runs on its own, waits
 * for a person's approval, or is deferred to a later time.
 */
import { Action, Tool, Toolkit } from "@chat-ts/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import type { PlatformError } from "effect/PlatformError"
import * as Schema from "effect/Schema"
import { Sandbox } from "./sandbox.js"

/** How a tool's calls are handled: the metadata the strategy reads. */
export interface Policy {
  /** `auto`: run at once; `approval`: a person decides; `later`: deferred to a later time. */
  readonly run: "auto" | "approval" | "later"
  /** Why, in a few words (shown when a call pauses). */
  readonly why: string
}

const policy = (run: Policy["run"], why: string): Policy => ({ run, why })

/** A file of the sandbox as `list_files` reports it. */
export const FileEntry = Schema.Struct({
  name: Schema.String,
  bytes: Schema.Number,
  ageDays: Schema.Number
})

export const ListFiles = Tool.make("list_files", {
  description: "List the files of the sandbox folder with their size in bytes and their age in days.",
  parameters: {},
  success: Schema.Array(FileEntry),
  failure: Schema.String,
  metadata: policy("auto", "read-only")
})

export const ReadFile = Tool.make("read_file", {
  description: "Read a text file of the sandbox folder.",
  parameters: { path: Schema.String.annotate({ description: "The file name, e.g. notes.txt" }) },
  success: Schema.String,
  failure: Schema.String,
  metadata: policy("auto", "read-only")
})

export const DeleteFiles = Tool.make("delete_files", {
  description: "Delete files of the sandbox folder for good.",
  parameters: {
    paths: Schema.Array(Schema.String).check(Schema.isMinLength(1, { message: "name at least one file" })).annotate({
      description: "The file names to delete"
    })
  },
  success: Schema.Struct({ deleted: Schema.Array(Schema.String), missing: Schema.Array(Schema.String) }),
  failure: Schema.String,
  metadata: policy("approval", "it deletes files for good, so a person approves it first")
})

export const ScheduleCleanup = Tool.make("schedule_cleanup", {
  description:
    "Schedule a cleanup of the sandbox folder for later (e.g. tonight or tomorrow): deletes the files matching " +
    "`pattern` that are older than `olderThanDays` days.",
  parameters: {
    pattern: Schema.String.annotate({ description: "A file name pattern, e.g. *.log" }),
    olderThanDays: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
  },
  success: Schema.Struct({ deleted: Schema.Array(Schema.String) }),
  failure: Schema.String,
  metadata: policy("later", "maintenance runs later, off the critical path")
})

/** The tools, with no strategy yet. */
export const tools = Toolkit.make(ListFiles, ReadFile, DeleteFiles, ScheduleCleanup)

/** Every tool of the demo, by name. */
export const byName: Readonly<Record<string, Tool.Any & { readonly metadata: Policy }>> = tools.tools

/** What the session shows of the tools in use: each tool by name, and its policy. */
export interface Catalogue {
  readonly tools: Readonly<Record<string, Tool.Any>>
  readonly policy: (tool: Tool.Any) => Policy | undefined
}

/** The demo's own tools. */
export const catalogue: Catalogue = { tools: byName, policy: (tool) => byName[tool.name]?.metadata }

/**
 * The strategy: reads each tool's `Policy`. Deferred calls run `cleanupDelay`
 * after the decision (a few seconds in the demo, standing in for "tomorrow").
 */
export const toolkit = (options: { readonly cleanupDelay: Action.Delay }) =>
  tools.withStrategy((_call, metadata) => {
    switch (metadata.run) {
      case "auto":
        return Action.Execute()
      case "approval":
        return Action.RequireApproval()
      case "later":
        return Action.Defer({ after: options.cleanupDelay })
    }
  })

const day = 24 * 60 * 60 * 1000

const isNotFound = (error: PlatformError): boolean => error.reason._tag === "NotFound"

const globToRegExp = (pattern: string): RegExp =>
  new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`)

/** The handlers: real file operations, confined to the sandbox folder. */
export const handlers = tools.toLayer(
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { root } = yield* Sandbox

    // Only plain file names directly in the sandbox are accepted.
    const resolve = (name: string): Effect.Effect<string, string> =>
      name === "" || name === "." || name === ".." || /[/\\]/.test(name)
        ? Effect.fail(`'${name}' is not a file name of the sandbox folder (use names like notes.txt, no folders).`)
        : Effect.succeed(path.join(root, name))

    const describe = (error: { readonly message: string }) => error.message

    const list = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const names = (yield* fs.readDirectory(root)).sort()
      const entries: Array<typeof FileEntry.Type> = []
      for (const name of names) {
        // A file may vanish between the listing and its stat (another call deleting it): skip it.
        const info = yield* fs.stat(path.join(root, name)).pipe(
          Effect.map(Option.some),
          Effect.catchIf(isNotFound, () => Effect.succeed(Option.none()))
        )
        if (Option.isNone(info) || info.value.type !== "File") continue
        const modified = info.value.mtime._tag === "Some" ? info.value.mtime.value.getTime() : now
        entries.push({ name, bytes: Number(info.value.size), ageDays: Math.max(0, Math.floor((now - modified) / day)) })
      }
      return entries
    }).pipe(Effect.mapError(describe))

    return {
      list_files: () => list,
      read_file: ({ path: name }) =>
        resolve(name).pipe(
          Effect.flatMap((file) =>
            fs.readFileString(file).pipe(
              Effect.mapError((error) =>
                isNotFound(error)
                  ? `There is no file named '${name}' in the sandbox.`
                  : describe(error)
              )
            )
          )
        ),
      delete_files: ({ paths }) =>
        Effect.gen(function*() {
          const deleted: Array<string> = []
          const missing: Array<string> = []
          for (const name of paths) {
            const file = yield* resolve(name)
            const removed = yield* fs.remove(file).pipe(
              Effect.as(true),
              Effect.catchIf(isNotFound, () => Effect.succeed(false)),
              Effect.mapError(describe)
            )
            if (removed) deleted.push(name)
            else missing.push(name)
          }
          return { deleted, missing }
        }),
      schedule_cleanup: ({ olderThanDays, pattern }) =>
        Effect.gen(function*() {
          const match = globToRegExp(pattern)
          const deleted: Array<string> = []
          for (const entry of yield* list) {
            if (!match.test(entry.name) || entry.ageDays < olderThanDays) continue
            const removed = yield* fs.remove(path.join(root, entry.name)).pipe(
              Effect.as(true),
              Effect.catchIf(isNotFound, () => Effect.succeed(false)),
              Effect.mapError(describe)
            )
            if (removed) deleted.push(entry.name)
          }
          return { deleted }
        })
    }
  })
)
