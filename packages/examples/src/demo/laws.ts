/**
 * The demo's agent as the property kit (`@chat-ts/core/testing`, issue 35)
 * sees it: the demo's toolkit and strategy, fake handlers over a folder held
 * in memory (a test moves no files), and what the demo promises: nothing is
 * deleted without a person's approval. `test/agent-laws.test.ts` checks the
 * loop's laws on it; `lawsSpeed.ts` measures how many scenarios a second the
 * kit runs on it.
 */
// #region agent
import type { Agent } from "@chat-ts/core/testing"
import * as Effect from "effect/Effect"
import { toolkit, tools } from "./tools.js"

/** Fake handlers: a fixed folder listing, file contents, deletions that only report. */
const fakeHandlers = tools.toLayer({
  list_files: () => Effect.succeed([{ name: "app-2025-03.log", bytes: 120, ageDays: 95 }, { name: "notes.txt", bytes: 80, ageDays: 3 }]),
  read_file: ({ path }) => (path === "notes.txt" ? Effect.succeed("Release checklist") : Effect.fail(`There is no file named '${path}'.`)),
  delete_files: ({ paths }) => Effect.succeed({ deleted: [...paths], missing: [] }),
  schedule_cleanup: () => Effect.succeed({ deleted: ["app-2025-03.log"] })
})

/** The demo's agent: its strategy (cleanups an hour later), the fakes, and its promise. */
export const demoAgent: Agent.Agent = {
  tools: toolkit({ cleanupDelay: "1 hour" }),
  handlers: fakeHandlers,
  // What the demo promises: a person approves every deletion first.
  mustAsk: (call) => call.name === "delete_files"
}
// #endregion agent
import { Action } from "@chat-ts/core"

/** A broken demo: its strategy deletes a single file without asking (a shortcut the laws catch). */
export const hastyAgent: Agent.Agent = {
  ...demoAgent,
  tools: tools.withStrategy((call, metadata) => {
    if (call.name === "delete_files" && call.params.paths.length === 1) return Action.Execute()
    switch (metadata.run) {
      case "auto":
        return Action.Execute()
      case "approval":
        return Action.RequireApproval()
      case "later":
        return Action.Defer({ after: "1 hour" })
    }
  })
}
