/**
 * How the demo shows things: pending calls, pause reasons, tool results.
 * Pure string functions; colours only when asked for (a terminal without
 * NO_COLOR).
 */
import type { Messages, Tool } from "@chat-ts/core"
import type { Policy } from "./tools.js"

/** Text styles; plain text when colours are off. */
export interface Style {
  readonly bold: (text: string) => string
  readonly dim: (text: string) => string
  readonly cyan: (text: string) => string
  readonly green: (text: string) => string
  readonly yellow: (text: string) => string
  readonly red: (text: string) => string
  readonly magenta: (text: string) => string
}

const ansi = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`
const plainText = (text: string) => text

/** Styles with or without ANSI colours. */
export const style = (color: boolean): Style =>
  color
    ? {
      bold: ansi(1, 22),
      dim: ansi(2, 22),
      cyan: ansi(36, 39),
      green: ansi(32, 39),
      yellow: ansi(33, 39),
      red: ansi(31, 39),
      magenta: ansi(35, 39)
    }
    : { bold: plainText, dim: plainText, cyan: plainText, green: plainText, yellow: plainText, red: plainText, magenta: plainText }

/** Whether stdout should get colours. */
export const wantsColor = (): boolean =>
  Boolean(process.stdout.isTTY) && process.env["NO_COLOR"] === undefined && process.env["TERM"] !== "dumb"

/** A call's effective arguments, pretty-printed (raw text when they are not JSON). */
export const prettyArguments = (call: Messages.ToolCallPart, effective: string): string => {
  try {
    return JSON.stringify(JSON.parse(effective === "" ? "{}" : effective), null, 2)
  } catch {
    return call.arguments
  }
}

/** A clock time, HH:MM:SS in local time. */
export const clockTime = (millis: number): string => {
  const d = new Date(millis)
  const pad = (n: number) => String(n).padStart(2, "0")
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

/** "in 3s", "in 2m 5s", "now". */
export const relative = (millis: number): string => {
  if (millis <= 0) return "now"
  if (millis < 1000) return `in ${Math.round(millis)}ms`
  const seconds = Math.ceil(millis / 1000)
  if (seconds < 60) return `in ${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `in ${minutes}m ${seconds % 60}s`
  return `in ${Math.floor(minutes / 60)}h ${minutes % 60}m`
}

/** When a scheduled call runs: "scheduled for 11:02:41 (in 3s)", or "due since 11:02:41" once its time has passed. */
export const whenDue = (at: number, now: number): string =>
  at <= now ? `due since ${clockTime(at)} (it runs when the turn goes on)` : `scheduled for ${clockTime(at)} (${relative(at - now)})`

/** A call waiting for a decision, as the session shows it. */
export interface Pending {
  readonly call: Messages.ToolCallPart
  /** Why it paused. */
  readonly kind: { readonly _tag: "Approval" } | { readonly _tag: "Scheduled"; readonly at: number }
  /** The tool's policy, when the tool is known. */
  readonly policy: Policy | undefined
  /** The tool, when it is known: edits are checked against its parameters. */
  readonly tool?: Tool.Any | undefined
}

/** The box showing one pending call: name, id, why it paused, pretty arguments. */
export const pendingBox = (s: Style, pending: Pending, now: number): string => {
  const { call, kind, policy } = pending
  const why = policy === undefined ? "" : `: ${policy.why}`
  const head = kind._tag === "Approval"
    ? `${s.yellow("needs your approval")}${why}`
    : `${s.magenta(whenDue(kind.at, now))}${why}`
  const args = prettyArguments(call, call.arguments).split("\n").map((line) => `${s.dim("│")}   ${line}`)
  return [
    `${s.dim("┌")} ${s.bold(call.name)} ${s.dim(`(${call.id})`)} · ${head}`,
    ...args,
    s.dim("└")
  ].join("\n")
}

/** A short, single-line view of a JSON value. */
export const brief = (value: unknown, max = 100): string => {
  const text = typeof value === "string" ? value.replace(/\s+/g, " ").trim() : JSON.stringify(value) ?? "null"
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}

/** One line about a resolved call (completed, failed, rejected, expired or cancelled). */
export const resultLine = (s: Style, call: Messages.ToolCallPart): string => {
  const status = call.status
  switch (status._tag) {
    case "Completed":
      return `  ${s.green("✓")} ${call.name} ${s.dim("→")} ${brief(status.result)}`
    case "Failed":
      return `  ${s.red("✗")} ${call.name} failed: ${brief(status.error)}`
    case "Rejected": {
      const reason = status.reason === undefined || status.reason === "" ? "" : `: ${status.reason}`
      return `  ${s.red("✗")} ${call.name} rejected ${status.by === "user" ? "by you" : "by policy"}${reason}`
    }
    case "Expired":
      return `  ${s.red("✗")} ${call.name} expired: nobody decided in time`
    case "Cancelled": {
      const reason = status.reason === undefined || status.reason === "" ? "" : `: ${status.reason}`
      return `  ${s.red("✗")} ${call.name} cancelled${status.by === "user-message" ? " by your new message" : ` by the ${status.by}`}${reason}`
    }
    default:
      return `  ${call.name}: ${status._tag}`
  }
}
