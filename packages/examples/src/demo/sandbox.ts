/**
 * The demo's sandbox: a folder of a few log and text files the agent's tools
 * work on. The demo makes a fresh temporary folder (removed on exit) unless
 * it is given one with `--sandbox`.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import type { PlatformError } from "effect/PlatformError"
import type * as Scope from "effect/Scope"

/** The sandbox folder in use. */
export class Sandbox extends Context.Service<Sandbox, { readonly root: string }>()("@chat-ts/examples/demo/Sandbox") {}

const day = 24 * 60 * 60 * 1000

/** The files a fresh sandbox holds, with their age in days. */
export const seedFiles: ReadonlyArray<{ readonly name: string; readonly ageDays: number; readonly content: string }> = [
  {
    name: "app.log",
    ageDays: 0,
    content: "2025-06-01T09:00:00Z INFO server started on :8080\n2025-06-01T09:00:02Z INFO ready\n"
  },
  {
    name: "app-2025-03.log",
    ageDays: 95,
    content: "2025-03-02T10:11:00Z WARN disk 81% full\n2025-03-02T10:12:00Z ERROR upload failed: timeout\n"
  },
  {
    name: "app-2025-04.log",
    ageDays: 64,
    content: "2025-04-07T08:00:00Z INFO nightly backup done\n"
  },
  {
    name: "notes.txt",
    ageDays: 3,
    content: "Release checklist\n- bump the version to 1.4.0\n- rotate the API keys before Friday\n- ask Sam about the flaky upload test\n"
  },
  { name: "todo.txt", ageDays: 1, content: "water the plants\nreply to Alex\n" },
  { name: "scratch.tmp", ageDays: 12, content: "temporary build output\n" }
]

/** Writes the seed files into `root` (made if missing), dating each file by its age. */
export const seed = (root: string): Effect.Effect<void, PlatformError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const now = yield* Clock.currentTimeMillis
    yield* fs.makeDirectory(root, { recursive: true })
    for (const file of seedFiles) {
      const target = path.join(root, file.name)
      yield* fs.writeFileString(target, file.content)
      const when = new Date(now - file.ageDays * day)
      yield* fs.utimes(target, when, when)
    }
  })

/** A sandbox in `dir` (seeded when it has no files yet), or in a fresh temporary folder removed with the scope. */
export const layer = (
  dir: string | undefined
): Layer.Layer<Sandbox, PlatformError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    Sandbox,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      if (dir === undefined) {
        const root: string = yield* fs.makeTempDirectoryScoped({ prefix: "chat-ts-demo-" })
        yield* seed(root)
        return { root }
      }
      const root = path.resolve(dir)
      const existing = (yield* fs.exists(root)) ? yield* fs.readDirectory(root) : []
      if (existing.length === 0) yield* seed(root)
      return { root }
    }) satisfies Effect.Effect<{ root: string }, PlatformError, FileSystem.FileSystem | Path.Path | Scope.Scope>
  )
