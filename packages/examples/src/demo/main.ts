/**
 * The chat-ts demo: a terminal chat agent over a sandbox folder.
 *
 *   npm start                                   # interactive
 *   npm start -- --approve-all -m "delete the old logs"
 *   printf 'delete the old logs\nreject keep them\n' | npm start
 *   npm start -- --mcp                          # the tools of the MCP files server
 *
 * `list_files` and `read_file` run on their own, `delete_files` waits for your
 * approval, `schedule_cleanup` is deferred to a later time; a strategy reading
 * each tool's metadata decides which is which. With `--mcp` the tools are
 * those of the MCP example's files server (src/mcp/files-server.ts, a child
 * process confined to the sandbox), decided by their MCP annotations. Without
 * `OPENAI_API_KEY` the demo runs offline on a built-in scripted model.
 */
import { Chat, type Tool } from "@chat-ts/core"
import { McpChat, McpStrategy, type McpTool } from "@chat-ts/mcp"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Path from "effect/Path"
import * as Schema from "effect/Schema"
import type * as Terminal from "effect/Terminal"
import * as Mcp from "../mcp.js"
import { fromUserFolder, isMain } from "../shared/main.js"
import * as Models from "../shared/Models.js"
import * as Io from "./Io.js"
import { style, wantsColor } from "./render.js"
import * as Sandbox from "./sandbox.js"
import * as ScriptedModel from "./scriptedModel.js"
import * as Session from "./session.js"
import * as Tools from "./tools.js"

/** The demo's settings (its command-line flags). */
export interface Settings {
  readonly approveAll: boolean
  readonly rejectAll: Option.Option<string>
  readonly messages: ReadonlyArray<string>
  readonly sandbox: Option.Option<string>
  readonly cleanupDelay: Duration.Duration
  readonly offline: boolean
  /** Ask on the terminal (true) or read piped lines (false). */
  readonly interactive: boolean
  readonly color: boolean
  /**
   * The scripted model's pause between streamed text pieces of 4 characters (default 40 millis when
   * typing while it answers is on, leaving time to type; otherwise 12 millis).
   */
  readonly typingDelay?: Duration.Input
  /** Use the tools of the MCP files server (src/mcp/files-server.ts) instead of the demo's own. */
  readonly mcp?: boolean
  /**
   * Interactive only: read what the person types while the model answers; a line sent then
   * interrupts the answer and the model answers again with it (default true).
   */
  readonly typeWhileAnswering?: boolean
}

/** The session did not end well; the process exits with `code`. */
export class DemoFailed extends Schema.TaggedError<DemoFailed>()("DemoFailed", { code: Schema.Number, reason: Schema.String }) {}

const systemPrompt = (root: string) =>
  [
    "You are a careful file assistant working in one sandbox folder" + ` (${root}).`,
    "Use list_files to see the files (with their age in days) and read_file to read one.",
    "delete_files deletes files for good; a person approves each call, so propose it directly when asked.",
    "schedule_cleanup deletes matching old files later; use it when the person asks for a cleanup later (tonight, tomorrow).",
    "Logs older than 30 days count as old. Answer briefly."
  ].join(" ")

const mcpSystemPrompt = (root: string) =>
  [
    "You are a careful file assistant working in one folder" + ` (${root}) through an MCP server.`,
    "Use list_files to see the files (with their age in days) and read_file to read one (by its name).",
    "write_file writes a file; delete_files deletes files for good (by their names); a person approves each call,",
    "so propose it directly when asked. Logs older than 30 days count as old. Answer briefly."
  ].join(" ")

/** The policy the session shows for an MCP tool: what the default strategy makes of its annotations. */
const mcpPolicy = (tool: Tool.Any): Tools.Policy =>
  McpStrategy.isReadOnly((tool.metadata as McpTool.Metadata).annotations)
    ? { run: "auto", why: "read-only, as the server says" }
    : { run: "approval", why: "not marked read-only by the server" }

/** A labelled line of the header ("  tools:   …"), wrapped at word boundaries to at most 100 columns. */
const headerLines = (label: string, text: string): ReadonlyArray<string> => {
  const indent = "           "
  const lines: Array<string> = []
  let line = `  ${`${label}:`.padEnd(indent.length - 2)}`
  let empty = true
  for (const word of text.split(" ")) {
    if (!empty && line.length + 1 + word.length > 100) {
      lines.push(line)
      line = indent + word
    } else {
      line = empty ? line + word : `${line} ${word}`
    }
    empty = false
  }
  return [...lines, line]
}

/** The demo as a program of its settings. */
export const program = (
  settings: Settings
): Effect.Effect<
  Session.Summary,
  DemoFailed | Chat.MakeError,
  Terminal.Terminal | FileSystem.FileSystem | Path.Path | Io.LineInput
> =>
  // Contradictory flags are refused before anything is created (the sandbox folder included).
  settings.approveAll && Option.isSome(settings.rejectAll)
    ? Effect.fail(new DemoFailed({ code: 2, reason: "Give either --approve-all or --reject-all, not both." }))
    : run(settings)

const run = (settings: Settings) =>
  Effect.gen(function*() {
    const s = style(settings.color)
    const choice = yield* Models.choose({ offline: settings.offline })
    const { root } = yield* Sandbox.Sandbox
    // With --mcp, the files server starts now (closed with the session) and serves the tools.
    const files = settings.mcp === true ? yield* Mcp.connect(root) : undefined
    const catalogue: Tools.Catalogue = files === undefined
      ? Tools.catalogue
      : { tools: (yield* files.current).toolkit.tools, policy: mcpPolicy }

    // In milliseconds: a delay chat-ts can check (it takes no Effect Duration, which may be a NaN read as zero).
    const kit = Tools.toolkit({ cleanupDelay: Duration.toMillis(settings.cleanupDelay) })
    const delay = Duration.format(settings.cleanupDelay)
    yield* Console.log(s.bold("chat-ts demo") + " — a tool-calling agent over a sandbox folder")
    yield* Console.log(`  sandbox: ${root}${Option.isNone(settings.sandbox) ? " (a temporary folder, removed on exit)" : ""}`)
    const modelName = Models.label(choice, "the built-in scripted demo model")
    // Lines of at most 100 columns: the header must not wrap on an ordinary terminal.
    const paint = choice._tag === "Offline" ? s.yellow : (text: string) => text
    yield* Console.log(headerLines("model", modelName).map(paint).join("\n"))
    yield* Console.log(headerLines(
      "tools",
      files === undefined
        ? `list_files, read_file run on their own · delete_files asks you first · ` +
          `schedule_cleanup runs later (${delay} from now here, standing in for "tomorrow")`
        : `from the MCP files server (over stdio): list_files, read_file run on their own · ` +
          `write_file, delete_files ask you first`
    ).join("\n"))
    if (choice._tag === "Offline") {
      const suggestions = files === undefined ? ScriptedModel.suggestions.slice(0, 4) : ["delete the old logs"]
      yield* Console.log(headerLines("try", suggestions.map((t) => `"${t}"`).join(", ")).join("\n"))
    }
    yield* Console.log(s.dim(
      !settings.interactive
        ? "  (reading input non-interactively)"
        : settings.typeWhileAnswering === false
        ? "  (type exit or press Ctrl-C to leave)"
        : "  (type exit or press Ctrl-C to leave; type while the model answers to interrupt it)"
    ))
    yield* Console.log("")

    let io: Io.Io = settings.interactive ? yield* Io.interactive : yield* Io.lines(s)
    const typing = settings.interactive && settings.typeWhileAnswering !== false
    if (!typing) io = { nextMessage: io.nextMessage, decide: io.decide }
    if (settings.messages.length > 0) io = Io.withMessages(io, settings.messages, s)
    if (settings.approveAll) io = Io.withBlanketDecision(io, { _tag: "ApproveAll" }, s)
    if (Option.isSome(settings.rejectAll)) io = Io.withBlanketDecision(io, { _tag: "RejectAll", reason: settings.rejectAll.value }, s)

    const model = Models.languageModel(
      choice,
      files === undefined
        ? ScriptedModel.layer({ typingDelay: settings.typingDelay ?? (typing ? "40 millis" : "12 millis") })
        : Mcp.offline
    )
    const session = files === undefined
      ? Chat.make({ tools: kit, system: systemPrompt(root), maxSteps: 8 }).pipe(
        Effect.provide(Layer.mergeAll(model, Tools.handlers)),
        Effect.flatMap((chat) => Session.run(io, s, chat))
      )
      : McpChat.make({ servers: [files], system: mcpSystemPrompt(root), maxSteps: 8 }).pipe(
        Effect.provide(model),
        Effect.flatMap((chat) => Session.run(io, s, chat, catalogue))
      )
    const summary = yield* session.pipe(
      // Ctrl-C while the model answers or a scheduled call is awaited (not at a prompt).
      Effect.onInterrupt(() => Console.log(s.dim("\nInterrupted; calls that had not run will not run. Bye."))),
      Effect.catchTags({
        Quit: () => Effect.as(Console.log(s.dim("\nBye.")), { completed: 0, failed: 0, messages: [] }),
        InputEnded: (error) => new DemoFailed({ code: 1, reason: error.message })
      })
    )
    if (summary.failed > 0) {
      return yield* new DemoFailed({ code: 1, reason: `${summary.failed} turn(s) failed.` })
    }
    return summary
  }).pipe(
    Effect.scoped,
    Effect.provide(Sandbox.layer(Option.getOrUndefined(settings.sandbox))),
    Effect.catchTag("McpConnectError", (error) => new DemoFailed({ code: 1, reason: `The MCP files server failed: ${error.detail}` })),
    Effect.catchTag("RefreshToolsDefect", (error) => new DemoFailed({ code: 1, reason: `Reading the MCP server's tools failed: ${error.detail}` })),
    Effect.catchTag("ConfigError", (error) => new DemoFailed({ code: 2, reason: `Bad configuration: ${error.message}` })),
    Effect.catchTag("PlatformError", (error) => new DemoFailed({ code: 1, reason: error.message }))
  )

/** The default of --cleanup-delay. */
const defaultCleanupDelay = "3 seconds"

/** What each flag does: the command's own descriptions and the --help page. */
const flagText = {
  approveAll: "Approve every call that asks for approval; scheduled calls run at their time.",
  rejectAll: "Reject every pending call, telling the model this reason.",
  message: "A message to send (repeatable); the demo ends after the last one.",
  sandbox:
    "Use this folder as the sandbox, seeded with demo files when empty (relative to where you ran npm). Default: a temporary folder, removed on exit.",
  cleanupDelay: `How long schedule_cleanup calls are deferred, standing in for "tomorrow". Default: "${defaultCleanupDelay}".`,
  offline: "Use the built-in scripted model even when OPENAI_API_KEY is set.",
  mcp:
    "Use the tools of the MCP files server (list_files, read_file, write_file, delete_files), started over stdio and confined to the sandbox, instead of the demo's own."
}

const durationFlag = Flag.String("cleanup-delay").pipe(
  Flag.withDescription(flagText.cleanupDelay),
  Flag.withDefault(defaultCleanupDelay),
  Flag.filterMap(
    (text) => Duration.fromInput(text as Duration.Input),
    (text) => `a duration such as "3 seconds" or "1 minute" ('${text}' is not a duration)`
  )
)

/** The command line. */
export const command = Command.make(
  "demo",
  {
    approveAll: Flag.Boolean("approve-all").pipe(
      Flag.withDescription(flagText.approveAll),
      Flag.withDefault(false)
    ),
    rejectAll: Flag.String("reject-all").pipe(
      Flag.withDescription(flagText.rejectAll),
      Flag.optional
    ),
    messages: Flag.String("message").pipe(
      Flag.withAlias("m"),
      Flag.withDescription(flagText.message),
      Flag.atLeast(0)
    ),
    sandbox: Flag.String("sandbox").pipe(
      Flag.withDescription(flagText.sandbox),
      Flag.optional
    ),
    cleanupDelay: durationFlag,
    offline: Flag.Boolean("offline").pipe(
      Flag.withDescription(flagText.offline),
      Flag.withDefault(false)
    ),
    mcp: Flag.Boolean("mcp").pipe(
      Flag.withDescription(flagText.mcp),
      Flag.withDefault(false)
    )
  },
  (flags) => {
    // On a terminal, ask there for whatever the flags leave open; piped input is read line by line.
    const blanket = flags.approveAll || Option.isSome(flags.rejectAll)
    const interactive = Boolean(process.stdin.isTTY) && !(blanket && flags.messages.length > 0)
    const sandbox = Option.map(flags.sandbox, fromUserFolder) // `npm start -- --sandbox ./sb` means the user's ./sb
    return program({ ...flags, sandbox, interactive, color: wantsColor() }).pipe(Effect.provide(Io.stdinLines))
  }
)

/**
 * The --help page, written for this demo rather than effect/cli's generic
 * one: the command as it is typed (`npm start -- …`), each flag with its
 * value and default, the environment, no escape codes unless `color`, and
 * lines of at most 100 columns.
 */
export const helpText = (
  color: boolean,
  defaults: { readonly openai: string; readonly anthropic: string; readonly gemini: string }
): string => {
  const s = style(color)
  const flags: ReadonlyArray<readonly [string, string]> = [
    ["--approve-all", flagText.approveAll],
    ["--reject-all <reason>", flagText.rejectAll],
    ["-m, --message <text>", flagText.message],
    ["--sandbox <dir>", flagText.sandbox],
    ["--cleanup-delay <duration>", flagText.cleanupDelay],
    ["--offline", flagText.offline],
    ["--mcp", flagText.mcp],
    ["-h, --help", "Show this help."],
    ["--version", "Show the demo's version."]
  ]
  const environment: ReadonlyArray<readonly [string, string]> = [
    ["OPENAI_API_KEY", "Talk to OpenAI (or a compatible server) instead of the scripted model."],
    ["OPENAI_BASE_URL", "A compatible server, e.g. http://localhost:11434/v1 for Ollama."],
    ["OPENAI_MODEL", `The model (default ${defaults.openai}).`],
    ["ANTHROPIC_API_KEY", "Without OPENAI_API_KEY: talk to Claude."],
    ["ANTHROPIC_MODEL", `The Claude model (default ${defaults.anthropic}).`],
    ["GEMINI_API_KEY", "Without OPENAI_API_KEY or ANTHROPIC_API_KEY: talk to Gemini (GOOGLE_API_KEY works too)."],
    ["GEMINI_MODEL", `The Gemini model (default ${defaults.gemini}).`],
    ["NO_COLOR", "No colours."]
  ]
  const wrap = (text: string, indent: number): ReadonlyArray<string> => {
    const lines: Array<string> = []
    let line = ""
    for (const word of text.split(" ")) {
      if (line !== "" && indent + line.length + 1 + word.length > 100) {
        lines.push(line)
        line = word
      } else line = line === "" ? word : `${line} ${word}`
    }
    return [...lines, line].map((text) => " ".repeat(indent) + text)
  }
  const table = (rows: ReadonlyArray<readonly [string, string]>) =>
    rows.flatMap(([name, text]) => [`  ${s.bold(name)}`, ...wrap(text, 6)])
  return [
    `${s.bold("chat-ts demo")} 0.1.0 — a tool-calling agent over a sandbox folder`,
    "",
    s.bold("Usage"),
    "  npm start -- [options]",
    "",
    s.bold("Options"),
    ...table(flags),
    "",
    s.bold("Environment"),
    ...table(environment),
    ""
  ].join("\n")
}

const cli = Command.run(command, { version: "0.1.0" })

if (isMain(import.meta.url) && process.argv.slice(2).some((arg) => arg === "--help" || arg === "-h")) {
  // The providers' default model ids, from their packages (loaded for the help page only).
  Effect.runPromise(Models.defaults).then((defaults) => process.stdout.write(helpText(wantsColor(), defaults)))
} else if (isMain(import.meta.url)) {
  cli.pipe(
    Effect.catchTag("DemoFailed", (error) =>
      Console.error(error.reason).pipe(Effect.andThen(Effect.sync(() => {
        process.exitCode = error.code
      })))),
    // A malformed command line: effect/cli has printed what is wrong.
    Effect.catchIf(CliError.isCliError, () =>
      Effect.sync(() => {
        process.exitCode = 2
      })),
    Effect.provide(NodeServices.layer),
    NodeRuntime.runMain({ disableErrorReporting: false })
  )
}
