/**
 * The demo, interactively: its `effect/cli` prompts are driven by scripted
 * key presses through a mock `Terminal`, on a real sandbox folder.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { AnthropicDefaults } from "@chat-ts/anthropic"
import { GoogleDefaults } from "@chat-ts/google"
import { OpenAiDefaults } from "@chat-ts/openai"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, FileSystem, Layer, Option } from "effect"
import { Messages } from "@chat-ts/core"
import * as Io from "../src/demo/Io.js"
import * as Demo from "../src/demo/main.js"
import * as ScriptedModel from "../src/demo/scriptedModel.js"
import { style } from "../src/demo/render.js"
import { seedFiles } from "../src/demo/sandbox.js"
import * as Models from "../src/shared/Models.js"
import type { Key } from "./support/capture.js"
import {
  backspace,
  clearLine,
  ctrl,
  down,
  enter,
  makeTranscript,
  meta,
  onceShown,
  screenOf,
  terminalLayer,
  typed,
  withConsole
} from "./support/capture.js"

const settings = (sandbox: string): Demo.Settings => ({
  approveAll: false,
  rejectAll: Option.none(),
  messages: [],
  sandbox: Option.some(sandbox),
  cleanupDelay: Duration.millis(30),
  offline: true,
  interactive: true,
  color: false,
  typingDelay: 0,
  // The keys of these tests are all pressed at once: none is left for the answers (see "typing while the model answers").
  typeWhileAnswering: false
})

/** Runs the interactive demo on a fresh sandbox with these key presses; returns the transcript and the files left. */
const session = (keys: ReadonlyArray<Key>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const sandbox = yield* fs.makeTempDirectoryScoped({ prefix: "demo-test-" })
    const transcript = makeTranscript()
    const summary = yield* Demo.program(settings(sandbox)).pipe(
      Effect.provide(Layer.mergeAll(terminalLayer(transcript, keys), Io.fromLines([]), NodePath.layer)),
      withConsole(transcript)
    )
    const files = (yield* fs.readDirectory(sandbox)).sort()
    return { summary, text: transcript.text(), files }
  }).pipe(Effect.provide(NodeFileSystem.layer))

const allFiles = seedFiles.map((file) => file.name).sort()

/** Runs the demo with typing read while the model answers, the scripted model typing slowly enough to be interrupted. */
const typingSession = (keys: ReadonlyArray<Key>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const sandbox = yield* fs.makeTempDirectoryScoped({ prefix: "demo-test-" })
    const transcript = makeTranscript()
    const summary = yield* Demo.program({ ...settings(sandbox), typeWhileAnswering: true, typingDelay: "30 millis" }).pipe(
      Effect.provide(Layer.mergeAll(terminalLayer(transcript, keys), Io.fromLines([]), NodePath.layer)),
      withConsole(transcript)
    )
    const files = (yield* fs.readDirectory(sandbox)).sort()
    return { summary, text: transcript.text(), files }
  }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer))

/** The end of the scripted model's help answer (the demo's header never says it). */
const helpEnd = "(Set OPENAI_API_KEY to talk to a real model.)"

/** The scripted model's whole help answer. */
const helpText = ScriptedModel.respond(Messages.fromUser("hello")).text ?? ""

describe("typing while the model answers", () => {
  it.live("a line typed during the answer interrupts it; the model answers again with it, the cut answer kept", () =>
    Effect.gen(function*() {
      const { files, summary, text } = yield* typingSession([
        ...typed("hello"),
        enter,
        // The help answer streams a piece every 30 ms: the person types once it has begun.
        ...onceShown("Assistant › I am the", [...typed("list the filez"), ...backspace(1), ...typed("s"), enter]),
        ...onceShown("turn complete", [...typed("exit"), enter])
      ])
      expect(text).toContain("type while the model answers to interrupt it")
      expect(text).toContain("You › list the files (sent while the model answers)")
      expect(text).toContain("⤺ answer interrupted; the model answers again with what you wrote")
      expect(text).not.toContain(helpEnd)
      expect(text).toContain("The folder holds: app-2025-03.log (95d)")
      expect(summary.completed).toBe(1)
      // One turn: the question, the cut answer (what it had said, a beginning of the help), the input, the answer to it.
      const messages = summary.messages
      expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant", "assistant"])
      expect(Messages.textOf(messages[0]!)).toBe("hello")
      const cut = Messages.textOf(messages[1]!)
      expect(cut.startsWith("I am the")).toBe(true)
      expect(cut.length).toBeLessThan(helpText.length)
      expect(helpText.startsWith(cut)).toBe(true)
      // What was shown of it is what it kept (the piece in flight when the line came may be kept unshown).
      const shown = /Assistant › (I am the[^\n]*)\n/.exec(text)?.[1] ?? ""
      expect(cut.startsWith(shown)).toBe(true)
      expect(Messages.textOf(messages[2]!)).toBe("list the files")
      expect(Messages.toolCallsOf(messages[3]!).map((call) => [call.name, call.status._tag])).toEqual([["list_files", "Completed"]])
      expect(files).toEqual(allFiles)
    }))

  it.live("Ctrl-C while the model answers ends the answer and the session; nothing more runs", () =>
    Effect.gen(function*() {
      const { files, summary, text } = yield* typingSession([
        ...typed("delete the old logs"),
        enter,
        ...onceShown("Assistant › Let me", [ctrl("c"), ...typed("approve"), enter])
      ])
      expect(text).toContain("Bye.")
      expect(text).not.toContain("delete_files: your decision")
      expect(summary.completed).toBe(0)
      expect(files).toEqual(allFiles)
    }))

  it.live("a blank line typed during the answer sends nothing; the answer streams to its end", () =>
    Effect.gen(function*() {
      const { summary, text } = yield* typingSession([
        ...typed("hello"),
        enter,
        ...onceShown("Assistant › I am the", [...typed("   "), enter, ...typed("x"), ctrl("u"), enter]),
        ...onceShown("turn complete", [...typed("exit"), enter])
      ])
      expect(text).toContain(helpEnd)
      expect(text).not.toContain("sent while the model answers")
      expect(summary.completed).toBe(1)
      expect(summary.messages.map((message) => message.role)).toEqual(["user", "assistant"])
    }))
})

describe("the interactive demo", () => {
  it.live("approve after editing (an invalid edit is re-asked), wait for a scheduled call, reject and cancel", () =>
    Effect.gen(function*() {
      const { files, text } = yield* session([
        // An empty message is re-asked.
        enter,
        ...typed("delete the old logs"),
        enter,
        // Decision on delete_files: "Edit the arguments".
        down,
        enter,
        // The current arguments are filled in: clear them. Invalid arguments are re-asked, then fixed.
        clearLine,
        ...typed(`{"paths":[]}`),
        enter,
        ...backspace(2),
        ...typed(`"app-2025-03.log"]}`),
        enter,
        // A scheduled call: "Wait until …".
        ...typed("clean up tomorrow"),
        enter,
        enter,
        // A mixed pause: reject the deletion with a reason, cancel the cleanup without one.
        ...typed("delete the temp file now and clean up the logs tomorrow"),
        enter,
        down,
        down,
        enter,
        ...typed("keep it"),
        enter,
        down,
        down,
        down,
        enter,
        enter
        // Then the input ends: as Ctrl-C at the next prompt.
      ])

      expect(text).toContain("model:   the built-in scripted demo model (no OPENAI_API_KEY is set")
      expect(text).toContain("Type a request (or exit to leave).")
      // The pending call: name, id, why, pretty arguments.
      expect(text).toContain("┌ delete_files (call_2_1) · needs your approval: it deletes files for good")
      expect(text).toContain(`│   {\n│     "paths": [\n│       "app-2025-03.log",\n│       "app-2025-04.log"\n│     ]\n│   }`)
      // One human line per problem, not Schema's error tree.
      expect(text).toContain("paths: name at least one file")
      expect(text).not.toMatch(/└─|minItems/)
      expect(text).toContain(`✔ approved with edited arguments {"paths":["app-2025-03.log"]}`)
      expect(text).toContain("Assistant › Done: deleted app-2025-03.log.")
      // The scheduled call shows when it runs, and the demo waits for it.
      // Its time, ahead or (on a slow machine, with this short delay) already passed.
      expect(text).toMatch(/┌ schedule_cleanup \(call_4_1\) · (scheduled for \d\d:\d\d:\d\d \(in \d+m?s\)|due since \d\d:\d\d:\d\d)/)
      expect(text).toMatch(/⏳ Waiting until|⏳ The scheduled call is due/)
      expect(text).toContain("Assistant › The scheduled cleanup ran: deleted app-2025-04.log.")
      // The mixed pause.
      expect(text).toContain("⏸  The turn paused: 1 call needs your approval, 1 call is scheduled for later.")
      expect(text).toContain("✗ delete_files rejected by you: keep it")
      expect(text.split("rejected by you: keep it")).toHaveLength(2) // reported once
      expect(text).toContain("OK, I did not delete anything (reason: keep it).")
      expect(text).toContain("I cancelled the scheduled cleanup, as asked.")
      expect(text).toContain("Bye.")
      expect(files).toEqual(allFiles.filter((name) => name !== "app-2025-03.log" && name !== "app-2025-04.log"))
    }))

  it.live("Ctrl-C at a decision leaves cleanly and runs nothing", () =>
    Effect.gen(function*() {
      const { files, summary, text } = yield* session([...typed("delete the old logs"), enter])
      expect(text).toContain("delete_files: your decision")
      expect(text).toContain("Bye.")
      expect(text).not.toMatch(/Error|at .*\.ts:\d+/)
      expect(summary.completed).toBe(0)
      expect(files).toEqual(allFiles)
    }))

  it.live("line-editing keys edit the text prompts as in a shell, and never put a control character into the input", () =>
    Effect.gen(function*() {
      const keys: ReadonlyArray<Key> = [
        // Ctrl-U clears what was typed.
        ...typed("rm -rf everything"),
        ctrl("u"),
        // Ctrl-W deletes the word before the cursor; Backspace one character.
        ...typed("is in the notes.txt? junk"),
        ctrl("w"),
        ...backspace(1),
        // Ctrl-A to the start; Alt-F a word right (twice), Ctrl-F a character right; Delete deletes forward.
        ctrl("a"),
        ...typed("what "),
        meta("f"),
        meta("f"),
        ctrl("f"),
        ...Array.from({ length: 4 }, () => ({ name: "delete" })),
        // End, more text; Alt-B a word left (twice), Left; Ctrl-K deletes to the end.
        { name: "end" },
        ...typed(" and more"),
        meta("b"),
        meta("b"),
        { name: "left" },
        ctrl("k"),
        // Home and End, Ctrl-B and Ctrl-F move and change nothing.
        { name: "home" },
        { name: "end" },
        ctrl("b"),
        ctrl("f"),
        // Nothing else is inserted: chords with no edit, keys without text, control characters typed or pasted.
        ctrl("t"),
        meta("x"),
        { name: "up" },
        { name: "down" },
        { name: "undefined", input: "\u001c" },
        { name: "escape", input: "\u001b" },
        { name: "x", input: "\u0007\u007f\u009b" },
        enter,
        // The argument editor is the same prompt: here, leave with exit.
        ...typed("exit"),
        clearLine,
        ...typed("exit"),
        enter
      ]
      const transcript = makeTranscript()
      const fsys = yield* FileSystem.FileSystem
      const sandbox = yield* fsys.makeTempDirectoryScoped({ prefix: "demo-test-" })
      const summary = yield* Demo.program(settings(sandbox)).pipe(
        Effect.provide(Layer.mergeAll(terminalLayer(transcript, keys), Io.fromLines([]), NodePath.layer)),
        withConsole(transcript)
      )
      const text = transcript.text()
      // The line submitted is exactly what the edits make of it, and it reached the model.
      const screen = screenOf(transcript.raw())
      expect(screen.filter((line) => line.startsWith("✔ You") && line.endsWith(" what is in notes.txt?"))).toHaveLength(1)
      expect(screen.filter((line) => line.includes("junk") || line.includes("and more"))).toEqual([])
      expect(text).toContain("notes.txt says:\n  > Release checklist")
      expect(summary.completed).toBe(1)
      // No control character but the terminal's own escape sequences in anything shown.
      expect(text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, "")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    }).pipe(Effect.scoped, Effect.provide(NodeFileSystem.layer)))

  it.live("an edit that gives a key twice is refused, saying where, and asked again; nothing runs with it", () =>
    Effect.gen(function*() {
      const { files, text } = yield* session([
        ...typed("delete the old logs"),
        enter,
        down,
        enter,
        clearLine,
        // JSON.parse would keep the second list while a person reads the first.
        ...typed(`{"paths":["app-2025-03.log"],"paths":["notes.txt"]}`),
        enter,
        clearLine,
        ...typed(`{"paths":["app-2025-03.log"]}`),
        enter
      ])
      expect(text).toContain(`the key "paths" appears twice in $`)
      expect(text).toContain(`✔ approved with edited arguments {"paths":["app-2025-03.log"]}`)
      expect(files).toEqual(allFiles.filter((name) => name !== "app-2025-03.log"))
    }))

  it.live("'exit' ends the session", () =>
    Effect.gen(function*() {
      const { summary, text } = yield* session([...typed("what is in notes.txt?"), enter, ...typed("exit"), enter])
      expect(text).toContain("notes.txt says:\n  > Release checklist")
      expect(summary.completed).toBe(1)
      expect(text).not.toContain("Bye.")
    }))
})

describe("the demo reading lines", () => {
  it.live("messages and decisions come from the lines, in order; bad answers are re-asked", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const sandbox = yield* fs.makeTempDirectoryScoped({ prefix: "demo-test-" })
      const transcript = makeTranscript()
      const summary = yield* Demo.program({ ...settings(sandbox), interactive: false }).pipe(
        Effect.provide(Layer.mergeAll(
          terminalLayer(transcript, []),
          Io.fromLines([
            "delete the old logs",
            "maybe",
            `edit {"paths":["app-2025-03.log"],"paths":["notes.txt"]}`,
            "reject not yet",
            "",
            "list the files"
          ]),
          NodePath.layer
        )),
        withConsole(transcript)
      )
      const text = transcript.text()
      expect(text).toContain("You › delete the old logs")
      expect(text).toContain("Not understood: 'maybe'. Answer one of: approve | edit <json> | reject [reason].")
      expect(text).toContain(`That is not JSON these arguments can be (the key "paths" appears twice in $`)
      expect(text).toContain("✗ delete_files rejected by you: not yet")
      expect(text.split("rejected by you: not yet")).toHaveLength(2) // reported once
      expect(text).toContain("The folder holds: app-2025-03.log (95d)")
      expect(summary.completed).toBe(2)
      expect((yield* fs.readDirectory(sandbox)).sort()).toEqual(allFiles)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.live("input that ends before a decision fails with a clear message", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const sandbox = yield* fs.makeTempDirectoryScoped({ prefix: "demo-test-" })
      const transcript = makeTranscript()
      const error = yield* Demo.program({ ...settings(sandbox), interactive: false }).pipe(
        Effect.provide(Layer.mergeAll(terminalLayer(transcript, []), Io.fromLines(["delete the old logs"]), NodePath.layer)),
        withConsole(transcript),
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "DemoFailed", code: 1 })
      expect(error._tag === "DemoFailed" && error.reason).toBe(
        "The input ended before a decision on delete_files (call_2_1) was given."
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("Ctrl-C at a menu", () => {
  it.live("takes the menu off the screen", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const sandbox = yield* fs.makeTempDirectoryScoped({ prefix: "demo-test-" })
      const transcript = makeTranscript()
      // A request, then the input ends at the decision menu: as Ctrl-C there.
      yield* Demo.program(settings(sandbox)).pipe(
        Effect.provide(Layer.mergeAll(terminalLayer(transcript, [...typed("delete the old logs"), enter]), Io.fromLines([]), NodePath.layer)),
        withConsole(transcript)
      )
      // The menu was shown (the transcript has every frame) ...
      expect(transcript.text()).toContain("Edit the arguments")
      // ... and is gone from what the terminal shows at the end.
      const screen = screenOf(transcript.raw()).join("\n")
      expect(screen).toContain("┌ delete_files (call_2_1) · needs your approval")
      expect(screen).toContain("Bye.")
      expect(screen).not.toMatch(/your decision|Approve|Edit the arguments|Reject/)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("flags", () => {
  it.effect("--help names each provider's default model, from the provider's own defaults", () =>
    Effect.gen(function*() {
      const defaults = yield* Models.defaults
      expect(defaults).toEqual({ openai: OpenAiDefaults.chatModel, anthropic: AnthropicDefaults.model, gemini: GoogleDefaults.model })
      const text = Demo.helpText(false, defaults).replace(/\s+/g, " ")
      for (const id of Object.values(defaults)) expect(text).toContain(`(default ${id})`)
    }))

  it("--help lists every flag with its value and default, as typed with npm start", () => {
    const defaults = { openai: "o", anthropic: "a", gemini: "g" }
    const text = Demo.helpText(false, defaults)
    for (const flag of ["--approve-all", "--reject-all <reason>", "--message <text>", "--sandbox <dir>", "--cleanup-delay <duration>", "--offline"]) {
      expect(text).toContain(flag)
    }
    expect(text).toContain("npm start -- [options]")
    expect(text.replace(/\s+/g, " ")).toContain(`Default: "3 seconds"`)
    // None of effect/cli's generic texts or built-in flags.
    expect(text).not.toMatch(/A true or false value|A user-defined piece of text|--wizard|--completions|\$ demo/)
    // Plain text without colour, lines that fit a terminal.
    expect(text).not.toContain("\u001b[")
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(100)
    expect(Demo.helpText(true, defaults)).toContain("\u001b[")
  })

  it.live("--approve-all and --reject-all together are refused", () =>
    Effect.gen(function*() {
      const sandbox = path.join(os.tmpdir(), `chat-ts-demo-refused-${process.pid}`)
      const error = yield* Demo.program({
        ...settings(sandbox),
        approveAll: true,
        rejectAll: Option.some("no")
      }).pipe(
        Effect.provide(Layer.mergeAll(terminalLayer(makeTranscript(), []), Io.fromLines([]), NodePath.layer)),
        Effect.provide(NodeFileSystem.layer),
        withConsole(makeTranscript()),
        Effect.flip
      )
      expect(error).toMatchObject({ _tag: "DemoFailed", code: 2 })
      // Refused before anything was created.
      expect(fs.existsSync(sandbox)).toBe(false)
    }))

  it.effect("a blanket decision answers without asking: approvals approved, scheduled calls left to their time", () =>
    Effect.gen(function*() {
      const transcript = makeTranscript()
      const asks: Io.Io = { nextMessage: Effect.die("unused"), decide: () => Effect.die("asked the person") }
      const call = { _tag: "ToolCall" as const, id: "c1", name: "delete_files", arguments: "{}", status: { _tag: "Proposed" as const } }
      const approveAll = Io.withBlanketDecision(asks, { _tag: "ApproveAll" }, style(false))
      const rejectAll = Io.withBlanketDecision(asks, { _tag: "RejectAll", reason: "not now" }, style(false))
      const decided = yield* Effect.all([
        approveAll.decide({ call, kind: { _tag: "Approval" }, policy: undefined }),
        approveAll.decide({ call, kind: { _tag: "Scheduled", at: 0 }, policy: undefined }),
        rejectAll.decide({ call, kind: { _tag: "Scheduled", at: 0 }, policy: undefined })
      ]).pipe(withConsole(transcript))
      expect(decided).toEqual([Io.Decision.Approve(), Io.Decision.Wait(), Io.Decision.Reject({ reason: "not now" })])
      expect(transcript.text()).toBe("  (--approve-all: approve)\n  (--approve-all: wait)\n  (--reject-all: reject)\n")
    }))
})
