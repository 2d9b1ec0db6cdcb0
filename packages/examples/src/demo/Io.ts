/**
 * Where the demo's input comes from: the person's messages and their decisions
 * on pending calls.
 *
 * - `interactive`: prompts of `effect/cli` on the terminal (select, text with
 *   validation and a shell's line editing, see `lineEditing.ts`; Ctrl-C to leave).
 * - `lines`: one line at a time from piped stdin (or any list of lines), for
 *   scripts: a message per line; at a pause, `approve`, `edit <json>`,
 *   `reject [reason]` or, for a scheduled call, `wait`.
 * - decision flags (`--approve-all`, `--reject-all`) and `--message` flags
 *   override either source.
 */
import { Messages, type Tool } from "@chat-ts/core"
import * as Prompt from "effect/cli/Prompt"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Scope from "effect/Scope"
import * as Stdio from "effect/Stdio"
import * as Stream from "effect/Stream"
import * as Terminal from "effect/Terminal"
import type { Pending, Style } from "./render.js"
import { withLineEditing } from "./lineEditing.js"
import { clockTime } from "./render.js"

/** What the person decided for one pending call. */
export type Decision = Data.TaggedEnum<{
  /** Run it as the model asked (a scheduled call: run it now). */
  Approve: {}
  /** Run it with these arguments (a JSON value that matches the tool's parameters). */
  Edit: { readonly arguments: unknown }
  /** Do not run it; the model sees the reason. */
  Reject: { readonly reason: string | undefined }
  /** A scheduled call: leave it to run at its time. */
  Wait: {}
}>

/** Constructors of decisions. */
export const Decision = Data.taggedEnum<Decision>()

/** The person left (Ctrl-C at a prompt). */
export class Quit extends Schema.TaggedError<Quit>()("Quit", {}) {}

/** Piped input ended while a decision was still needed. */
export class InputEnded extends Schema.TaggedError<InputEnded>()("InputEnded", { id: Schema.String, name: Schema.String }) {
  override get message() {
    return `The input ended before a decision on ${this.name} (${this.id}) was given.`
  }
}

/** The demo's input. */
export interface Io {
  /** The next message of the person; `None` when they are done. */
  readonly nextMessage: Effect.Effect<Option.Option<string>, Quit>
  /** The person's decision on one pending call. */
  readonly decide: (pending: Pending) => Effect.Effect<Decision, Quit | InputEnded>
  /**
   * Reads what the person types while the model answers, handing each line to `send` (the turn
   * then interrupts the answer and the model answers again with it); fails with `Quit` on Ctrl-C
   * (or exit), ends when the input does. Absent: nothing is read while the model answers.
   */
  readonly whileAnswering?: (send: (text: string) => Effect.Effect<void>) => Effect.Effect<void, Quit>
}

/** Where typing during an answer stands after one key: the line so far, and a line sent or a quit. */
export type TypeAhead =
  | { readonly _tag: "Typing"; readonly line: string }
  | { readonly _tag: "Send"; readonly text: string }
  | { readonly _tag: "Quit" }

/**
 * One key typed while the model answers (no echo: the answer keeps the screen): printable text is
 * added, Backspace and Ctrl-U edit, Enter sends a line that is not blank (`exit` leaves), Ctrl-C
 * leaves; any other key or control character is ignored.
 */
export const typeAhead = (line: string, key: Terminal.UserInput): TypeAhead => {
  const { ctrl, name } = key.key
  if (ctrl && (name === "c" || name === "d")) return { _tag: "Quit" }
  if (ctrl && name === "u") return { _tag: "Typing", line: "" }
  if (name === "backspace") return { _tag: "Typing", line: [...line].slice(0, -1).join("") }
  if (name === "return" || name === "enter") {
    const text = line.trim()
    if (text === "") return { _tag: "Typing", line: "" }
    return /^(exit|quit|bye)$/i.test(text) ? { _tag: "Quit" } : { _tag: "Send", text }
  }
  const input = Option.getOrUndefined(key.input)
  // eslint-disable-next-line no-control-regex
  if (ctrl || key.key.meta || input === undefined || /[\u0000-\u001f\u007f-\u009f]/.test(input)) return { _tag: "Typing", line }
  return { _tag: "Typing", line: line + input }
}

/** Reads the terminal's keys while the model answers (see `Io.whileAnswering`). */
const readWhileAnswering = (send: (text: string) => Effect.Effect<void>): Effect.Effect<void, Quit, Terminal.Terminal> =>
  Effect.scoped(Effect.gen(function*() {
    const terminal = yield* Terminal.Terminal
    const keys = yield* terminal.readInput
    let line = ""
    while (true) {
      const key = yield* Queue.take(keys).pipe(Effect.option)
      if (Option.isNone(key)) return // the input ended: nothing more is typed
      const next = typeAhead(line, key.value)
      if (next._tag === "Quit") return yield* new Quit()
      if (next._tag === "Send") {
        line = ""
        yield* send(next.text)
      } else line = next.line
    }
  }))

// ---------------------------------------------------------------------------
// Validation of edited arguments
// ---------------------------------------------------------------------------

/** One human line per problem ("paths: name at least one file"), not Schema's tree. */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const isObject = (json: unknown): boolean => typeof json === "object" && json !== null && !Array.isArray(json)

/**
 * Checks edited arguments (JSON text) against the tool's parameters (an
 * unknown tool's are checked by the chat on resume). `Success` holds the JSON
 * value to approve with; `Failure` says what is wrong.
 */
export const validateArguments = (
  toolName: string,
  text: string,
  tool: Tool.Any | undefined
): Result.Result<unknown, string> => {
  // Read as the core reads edits: a key given twice (the handler would get the last value, a person
  // reading it sees the first), a "__proto__" key or text that is not JSON is refused, with why.
  const parsed = Messages.parseJson(text)
  if (Result.isFailure(parsed)) return Result.fail(`That is not JSON these arguments can be (${parsed.failure}).`)
  const json = parsed.success
  if (tool === undefined) return Result.succeed(json)
  const mismatch = (problems: ReadonlyArray<string>) =>
    `Those arguments do not match ${toolName}'s parameters:\n${problems.map((problem) => `  ${problem}`).join("\n")}`
  if (!isObject(json)) return Result.fail(mismatch(["the arguments: expected a JSON object"]))
  const decode = Schema.decodeUnknownResult(tool.parameters as Schema.Decoder<unknown>)
  return decode(json, { onExcessProperty: "error", errors: "all" }).pipe(
    Result.mapError((error) =>
      mismatch(formatIssues(error.issue).issues.map((issue) => {
        const path = issue.path === undefined || issue.path.length === 0
          ? "the arguments"
          : issue.path.map((key) => String(typeof key === "object" ? key.key : key)).join(".")
        return `${path}: ${issue.message}`
      }))
    ),
    Result.map(() => json)
  )
}

const compact = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text))
  } catch {
    return text
  }
}

// ---------------------------------------------------------------------------
// Interactive: effect/cli prompts
// ---------------------------------------------------------------------------

const quitOnCtrlC = <A>(prompt: Prompt.Prompt<A>): Effect.Effect<A, Quit, Prompt.Environment> =>
  Effect.catchTag(prompt, "QuitError", () => Effect.fail(new Quit()))

/** ANSI: erases `rows` lines (the cursor's and those above it) and returns to the first column. */
export const eraseLines = (rows: number): string =>
  Array.from({ length: rows }, (_, i) => (i < rows - 1 ? "\u001b[2K\u001b[1A" : "\u001b[2K")).join("") + "\u001b[G"

type Choice = "approve" | "edit" | "reject" | "wait"

/** Prompts on the terminal. */
export const interactive = Effect.gen(function*() {
  const terminal = yield* Effect.context<Prompt.Environment>()
  const run = <A>(prompt: Prompt.Prompt<A>) => quitOnCtrlC(prompt).pipe(Effect.provide(terminal))

  const editArguments = (pending: Pending) =>
    run(withLineEditing(Prompt.String({
      message: `New arguments for ${pending.call.name} as JSON (edit the current ones; Ctrl-U clears them)`,
      default: compact(pending.call.arguments),
      validate: (text) =>
        Result.match(validateArguments(pending.call.name, text, pending.tool), {
          onFailure: (error) => Effect.fail(error),
          onSuccess: () => Effect.succeed(text)
        })
      // `validate` accepted the text: it has each key once, so JSON.parse reads the value it checked.
    }))).pipe(Effect.map((text) => Decision.Edit({ arguments: JSON.parse(text) })))

  const rejectReason = run(withLineEditing(Prompt.String({ message: "Why? (the model sees this; Enter to skip)" }))).pipe(
    Effect.map((reason) => Decision.Reject({ reason: reason.trim() === "" ? undefined : reason.trim() }))
  )

  const io: Io = {
    nextMessage: run(withLineEditing(Prompt.String({
      message: "You",
      validate: (text) =>
        text.trim() === "" ? Effect.fail("Type a request (or exit to leave).") : Effect.succeed(text.trim())
    }))).pipe(Effect.map((text) => (/^(exit|quit|bye)$/i.test(text) ? Option.none() : Option.some(text)))),
    decide: (pending) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const choices: ReadonlyArray<Prompt.SelectChoice<Choice>> = pending.kind._tag === "Approval"
          ? [
            { title: "Approve", value: "approve", description: "run it with these arguments" },
            { title: "Edit the arguments", value: "edit", description: "change them, then run it" },
            { title: "Reject", value: "reject", description: "do not run it; tell the model why" }
          ]
          : [
            pending.kind.at <= now
              ? { title: "Let it run (it is due)", value: "wait", description: "its time has passed: it runs when the turn goes on" }
              : { title: `Wait until ${clockTime(pending.kind.at)}`, value: "wait", description: "let it run at its time" },
            { title: "Run it now", value: "approve", description: "do not wait" },
            { title: "Edit the arguments and run now", value: "edit" },
            { title: "Cancel it", value: "reject", description: "do not run it; tell the model why" }
          ]
        const choice = yield* run(Prompt.Select({ message: `${pending.call.name}: your decision`, choices })).pipe(
          // Ctrl-C at the menu: take it (its message line and choices) off the screen before leaving.
          Effect.tapError(() =>
            Effect.orDie(Effect.flatMap(Terminal.Terminal, (t) => t.display(eraseLines(choices.length + 1)))).pipe(
              Effect.provide(terminal)
            )
          )
        )
        switch (choice) {
          case "approve":
            return Decision.Approve()
          case "wait":
            return Decision.Wait()
          case "edit":
            return yield* editArguments(pending)
          case "reject":
            return yield* rejectReason
        }
      }),
    whileAnswering: (send) => readWhileAnswering(send).pipe(Effect.provide(terminal))
  }
  return io
})

// ---------------------------------------------------------------------------
// Lines: piped stdin or a fixed list
// ---------------------------------------------------------------------------

/** A source of input lines. */
export class LineInput extends Context.Service<
  LineInput,
  { readonly next: Effect.Effect<Option.Option<string>> }
>()("@chat-ts/examples/demo/LineInput") {}

/** Lines of stdin, read only once asked for (so an interactive session never touches stdin here). */
export const stdinLines: Layer.Layer<LineInput, never, Stdio.Stdio> = Layer.effect(
  LineInput,
  Effect.gen(function*() {
    const stdio = yield* Stdio.Stdio
    const scope = yield* Effect.scope
    const pull = yield* Effect.cached(
      stdio.stdin.pipe(Stream.decodeText(), Stream.splitLines, Stream.toPull, Scope.provide(scope))
    )
    const buffer: Array<string> = []
    let done = false
    const next: Effect.Effect<Option.Option<string>> = Effect.suspend(() => {
      if (buffer.length > 0) return Effect.succeed(Option.some(buffer.shift()!))
      if (done) return Effect.succeed(Option.none())
      return pull.pipe(
        Effect.flatten,
        Effect.match({
          onFailure: () => {
            done = true
          },
          onSuccess: (lines) => {
            buffer.push(...lines)
          }
        }),
        Effect.andThen(next)
      )
    })
    return { next }
  })
)

/** A fixed list of lines (for tests). */
export const fromLines = (lines: ReadonlyArray<string>): Layer.Layer<LineInput> =>
  Layer.sync(LineInput, () => {
    const rest = [...lines]
    return { next: Effect.sync(() => Option.fromUndefinedOr(rest.shift())) }
  })

const help = "approve | edit <json> | reject [reason]"
const scheduledHelp = "wait | approve (run now) | edit <json> | reject [reason]"

/** Reads one decision from a line; `Failure` says why the line was not understood. */
export const parseDecision = (pending: Pending, line: string): Result.Result<Decision, string> => {
  const text = line.trim()
  const scheduled = pending.kind._tag === "Scheduled"
  if (/^(a|approve|y|yes|run|now)$/i.test(text)) return Result.succeed(Decision.Approve())
  if (scheduled && /^(w|wait)$/i.test(text)) return Result.succeed(Decision.Wait())
  const reject = /^(r|reject|n|no|cancel)(?:\s+(.*))?$/is.exec(text)
  if (reject !== null) {
    const reason = reject[2]?.trim()
    return Result.succeed(Decision.Reject({ reason: reason === undefined || reason === "" ? undefined : reason }))
  }
  const edit = /^(e|edit)\s+(.*)$/is.exec(text)
  if (edit !== null) {
    return Result.map(validateArguments(pending.call.name, edit[2]!, pending.tool), (json) => Decision.Edit({ arguments: json }))
  }
  return Result.fail(`Not understood: '${text}'. Answer one of: ${scheduled ? scheduledHelp : help}.`)
}

/** Input from lines: messages and decisions in the order they are needed. Lines are echoed. */
export const lines = (s: Style) =>
  Effect.gen(function*() {
    const input = yield* LineInput
    const io: Io = {
      nextMessage: Effect.gen(function*() {
        while (true) {
          const line = yield* input.next
          if (Option.isNone(line)) return Option.none()
          const text = line.value.trim()
          if (text === "") continue
          if (/^(exit|quit|bye)$/i.test(text)) return Option.none()
          yield* Console.log(`${s.bold("You ›")} ${text}`)
          return Option.some(text)
        }
      }),
      decide: (pending) =>
        Effect.gen(function*() {
          const options = pending.kind._tag === "Scheduled" ? scheduledHelp : help
          while (true) {
            yield* Console.log(`${s.bold(`${pending.call.name}: your decision`)} ${s.dim(`(${options})`)}`)
            const line = yield* input.next
            if (Option.isNone(line)) return yield* new InputEnded({ id: pending.call.id, name: pending.call.name })
            if (line.value.trim() === "") continue
            yield* Console.log(`${s.dim("›")} ${line.value.trim()}`)
            const decision = parseDecision(pending, line.value)
            if (Result.isSuccess(decision)) return decision.success
            yield* Console.log(s.red(decision.failure))
          }
        })
    }
    return io
  })

// ---------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------

/** Messages given as `--message` flags, in order; then the end. */
export const withMessages = (io: Io, messages: ReadonlyArray<string>, s: Style): Io => {
  const rest = [...messages]
  return {
    ...io,
    nextMessage: Effect.suspend(() => {
      const next = rest.shift()
      return next === undefined
        ? Effect.succeed(Option.none())
        : Effect.as(Console.log(`${s.bold("You ›")} ${next}`), Option.some(next))
    })
  }
}

/** A blanket decision (`--approve-all`, `--reject-all reason`) in place of asking. */
export const withBlanketDecision = (
  io: Io,
  blanket: { readonly _tag: "ApproveAll" } | { readonly _tag: "RejectAll"; readonly reason: string },
  s: Style
): Io => ({
  ...io,
  decide: (pending) => {
    const decision = blanket._tag === "RejectAll"
      ? Decision.Reject({ reason: blanket.reason === "" ? undefined : blanket.reason })
      : pending.kind._tag === "Scheduled"
      ? Decision.Wait()
      : Decision.Approve()
    const flag = blanket._tag === "RejectAll" ? "--reject-all" : "--approve-all"
    return Effect.as(Console.log(s.dim(`  (${flag}: ${decision._tag.toLowerCase()})`)), decision)
  }
})
