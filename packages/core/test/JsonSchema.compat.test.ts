/**
 * The JSON Schema sent for tools and structured output is what chat-ts 0.1
 * (Effect 3) sent. `fixtures/v0.1/json-schemas.json` recorded every tool
 * declaration (`Tool.wire`) and response format (`Chat.responseFormat`) that
 * 0.1's tests and examples built; each schema of those tests rebuilt here with
 * Effect 4 must give a deep-equal declaration (or format), the same reasons
 * for going non-strict, and the same refusals, but for the `$id`s 0.1 left on
 * `unknown`, `any` and `object` (`/schemas/unknown`…), which are no longer sent.
 */
import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { readFileSync } from "node:fs"
import { Chat, Tool } from "../src/index.js"
import { DeleteFiles as HelperDeleteFiles, ListFiles as HelperListFiles, ReadFile as HelperReadFile } from "./support/Chat.helpers.js"
import { Cleanup, DeleteFiles, Forbidden, ListFiles, ReadFile } from "./support/compatTools.js"
import { looseConstructs, type Node, oddlyNamed, otherTools, strictConstructs, structuredCases, toolOf } from "./support/strictConstructs.js"

// ---------------------------------------------------------------------------
// The fixture
// ---------------------------------------------------------------------------

interface ToolEntry {
  readonly kind: "tool"
  readonly name: string
  readonly description: string
  readonly strictOption?: boolean
  /** The JSON Schema 0.1 made of the parameters, before strict mode (absent when it could not make one). */
  readonly input?: Node
  readonly result:
    | { readonly declaration: Node; readonly notStrict: ReadonlyArray<string> }
    | { readonly error: string }
  readonly sites: ReadonlyArray<string>
}

interface FormatEntry {
  readonly kind: "responseFormat"
  readonly input: Node
  readonly result: {
    readonly name: string
    readonly schema: Node
    readonly strict: boolean
    readonly notStrict: ReadonlyArray<string>
    readonly wrapped: boolean
  }
  readonly sites: ReadonlyArray<string>
}

type Entry = ToolEntry | FormatEntry

const entries: ReadonlyArray<Entry> = JSON.parse(
  readFileSync(new URL("./fixtures/v0.1/json-schemas.json", import.meta.url), "utf8")
) as ReadonlyArray<Entry>

/** What is sent: the value as JSON carries it. */
const sent = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** The `$id`s 0.1 wrote on `unknown`, `any` and `object` (`/schemas/unknown`…): recorded in the fixture, no longer sent (issue 32). */
const markers = new Set(["/schemas/unknown", "/schemas/any", "/schemas/object", "/schemas/never", "/schemas/void", "/schemas/%7B%7D", "/schemas/enums"])

/** A recorded declaration as it is sent now: 0.1's, without its markers. */
const unmarked = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(unmarked)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(
      Object.entries(value).flatMap(([key, v]) =>
        (key === "$id" || key === "$comment") && typeof v === "string" && markers.has(v) ? [] : [[key, unmarked(v)]]
      )
    )
    : value

/** The index of the one tool entry 0.1 recorded for this name, description and `strict` option, among those `pick` keeps. */
const toolEntry = (
  key: { readonly name: string; readonly description: string; readonly strict?: boolean | undefined },
  pick: (entry: ToolEntry) => boolean = () => true
): number => {
  const found = entries.flatMap((entry, index) =>
    entry.kind === "tool" && entry.name === key.name && entry.description === key.description &&
      entry.strictOption === key.strict && pick(entry)
      ? [index]
      : []
  )
  if (found.length !== 1) throw new Error(`${found.length} entries for the tool '${key.name}' ("${key.description}")`)
  return found[0]!
}

/** The index of the one response format entry with this 0.1 name, among those `pick` keeps. */
const formatEntry = (name: string, pick: (input: Node) => boolean): number => {
  const found = entries.flatMap((entry, index) =>
    entry.kind === "responseFormat" && entry.result.name === name && pick(entry.input) ? [index] : []
  )
  if (found.length !== 1) throw new Error(`${found.length} response format entries named '${name}'`)
  return found[0]!
}

const xOf = (entry: ToolEntry): Node | undefined => (entry.input?.properties as { readonly x?: Node } | undefined)?.x

// ---------------------------------------------------------------------------
// The tools and formats rebuilt, each with its entry
// ---------------------------------------------------------------------------

interface ToolCase {
  readonly name: string
  readonly tool: Tool.Any
  readonly entry: number
}

const constructCases: ReadonlyArray<ToolCase> = [
  ...Object.entries(strictConstructs).map(([name, construct]) => {
    const tool = toolOf(construct.field)
    return { name: `construct ${name}`, tool, entry: toolEntry(tool, (e) => xOf(e) !== undefined && construct.fixture(xOf(e)!, e.input!)) }
  }),
  ...Object.entries(looseConstructs).map(([name, construct]) => {
    const tool = toolOf(construct.field)
    return { name: `loose construct ${name}`, tool, entry: toolEntry(tool, (e) => xOf(e) !== undefined && construct.fixture(xOf(e)!, e.input!)) }
  }),
  ...otherTools.map(({ fixture, name, tool }) => ({ name, tool, entry: toolEntry(tool, (e) => fixture(e as unknown as Node)) }))
]

const Pay = Tool.make("pay", {
  description: "Pay a bill.",
  parameters: { amount: Schema.Number },
  success: Schema.Struct({ paid: Schema.Number })
})
const Sync = Tool.make("sync", {
  description: "Copy a file to the backup (idempotent: same key, same copy).",
  parameters: { path: Schema.String },
  success: Schema.Struct({ attempt: Schema.Number }),
  idempotent: true
})
class Target extends Schema.Class<Target>("Target")({ host: Schema.String }) {}
const Ping = Tool.make("ping", { description: "Ping.", parameters: {} })
const Deploy = Tool.make("deploy", { description: "Deploy.", parameters: Target })

const otherTestCases: ReadonlyArray<ToolCase> = [
  { name: "Chat.helpers list_files", tool: HelperListFiles, entry: toolEntry(HelperListFiles) },
  { name: "Chat.helpers delete_files", tool: HelperDeleteFiles, entry: toolEntry(HelperDeleteFiles) },
  { name: "Chat.helpers read_file", tool: HelperReadFile, entry: toolEntry(HelperReadFile) },
  { name: "Worker.test pay", tool: Pay, entry: toolEntry(Pay) },
  { name: "Worker.test sync", tool: Sync, entry: toolEntry(Sync) },
  { name: "Chat.test ping (no parameters)", tool: Ping, entry: toolEntry(Ping) },
  { name: "Chat.test deploy (a class as parameters)", tool: Deploy, entry: toolEntry(Deploy) },
  { name: "v0.1 fixtures delete_files", tool: DeleteFiles, entry: toolEntry(DeleteFiles) },
  { name: "v0.1 fixtures read_file", tool: ReadFile, entry: toolEntry(ReadFile) }
]

/**
 * Tools of the v0.1 fixtures' generator that 0.1's recording did not see (it ran the tests and examples,
 * not the generator): their parameters match an entry of another tool with the same parameters schema.
 */
const sameParameters: ReadonlyArray<ToolCase> = [
  { name: "v0.1 fixtures list_files ({ folder })", tool: ListFiles, entry: toolEntry(HelperListFiles) },
  { name: "v0.1 fixtures schedule_cleanup ({ folder })", tool: Cleanup, entry: toolEntry(HelperListFiles) },
  { name: "v0.1 fixtures format_disk ({})", tool: Forbidden, entry: toolEntry(Ping) }
]

interface FormatCase {
  readonly name: string
  readonly schema: Schema.Codec<unknown, unknown>
  readonly entry: number
}

const hasKeys = (...keys: ReadonlyArray<string>) => (input: Node) =>
  JSON.stringify(Object.keys((input.properties ?? {}) as Node)) === JSON.stringify(keys)

const formatCases: ReadonlyArray<FormatCase> = [
  ...structuredCases.map((c) => ({
    name: `completeStructured with ${c.name}`,
    schema: c.schema,
    entry: formatEntry("output", (input) => {
      switch (c.name) {
        case "an array at the top":
          return input.type === "array"
        case "a string at the top":
          return input.type === "string"
        case "a union at the top":
          return Array.isArray(input.anyOf)
        case "a class with an optional field":
          return hasKeys("name", "age")(input)
        default:
          return hasKeys("root")(input)
      }
    })
  })),
  { name: "a record under an odd identifier", schema: oddlyNamed, entry: formatEntry("Weird_name_with__chars", () => true) },
  {
    name: "Chat.streamStructured Person (a number from a string)",
    schema: Schema.Struct({ name: Schema.String, languages: Schema.Array(Schema.String), born: Schema.NumberFromString }),
    entry: formatEntry("output", hasKeys("name", "languages", "born"))
  },
  {
    name: "Chat.test Report",
    schema: Schema.Struct({ deleted: Schema.Number, note: Schema.String }).annotate({ identifier: "Report" }),
    entry: formatEntry("Report", () => true)
  },
  {
    name: "ReadmeSnippets Summary",
    schema: Schema.Struct({ deleted: Schema.Number, kept: Schema.Array(Schema.String) }),
    entry: formatEntry("output", hasKeys("deleted", "kept"))
  },
  {
    name: "examples structured-output User",
    schema: Schema.Struct({ name: Schema.String, likes: Schema.Array(Schema.String) }).annotate({ identifier: "User" }),
    entry: formatEntry("User", () => true)
  },
  {
    name: "examples streaming-ui Trip",
    schema: Schema.Struct({ city: Schema.String, days: Schema.Number, sights: Schema.Array(Schema.String) }).annotate({
      identifier: "Trip"
    }),
    entry: formatEntry("Trip", () => true)
  },
  {
    name: "openai strict.test French cities",
    schema: Schema.Array(Schema.String).annotate({ identifier: "French cities!" }),
    entry: formatEntry("French_cities_", () => true)
  }
]

// ---------------------------------------------------------------------------
// The comparisons
// ---------------------------------------------------------------------------

/** The part of 0.1's refusal that chat-ts wrote (not the Effect 3 message it quoted in parentheses). */
const ownText = (error: string): string => {
  const quoted = "its parameters cannot be written as JSON Schema ("
  return error.startsWith(quoted) ? quoted : error
}

const expectTool = (tool: Tool.Any, entry: ToolEntry, rename?: { readonly name: string; readonly description: string }) => {
  const wire = Tool.wire(tool)
  if ("error" in entry.result) {
    expect(Result.isFailure(wire), "0.1 refused this tool").toBe(true)
    if (Result.isFailure(wire)) {
      expect(wire.failure._tag).toBe("InvalidToolSchema")
      expect(wire.failure.detail.startsWith(ownText(entry.result.error))).toBe(true)
    }
    return
  }
  expect(Result.isSuccess(wire), Result.isFailure(wire) ? wire.failure.detail : "").toBe(true)
  if (Result.isFailure(wire)) return
  const declaration = unmarked(entry.result.declaration) as Node
  const expected = rename === undefined ? declaration : { ...declaration, ...rename }
  expect(sent(wire.success.declaration)).toStrictEqual(expected)
  expect(wire.success.notStrict).toStrictEqual(entry.result.notStrict)
  expect(sent(tool.declaration)).toStrictEqual(expected)
}

describe("JSON Schema sent for tools: as 0.1 sent it", () => {
  for (const c of [...constructCases, ...otherTestCases]) {
    it(`${c.name} (fixture entry ${c.entry})`, () => {
      expectTool(c.tool, entries[c.entry] as ToolEntry)
    })
  }

  for (const c of sameParameters) {
    it(`${c.name}: the parameters 0.1 sent for the same schema (fixture entry ${c.entry})`, () => {
      expectTool(c.tool, entries[c.entry] as ToolEntry, { name: c.tool.name, description: c.tool.description })
    })
  }
})

describe("JSON Schema sent for structured output: as 0.1 sent it", () => {
  for (const c of formatCases) {
    it(`${c.name} (fixture entry ${c.entry})`, () => {
      const entry = entries[c.entry] as FormatEntry
      expect(sent(Chat.responseFormat(c.schema))).toStrictEqual({
        type: "json",
        name: entry.result.name,
        schema: entry.result.schema,
        strict: entry.result.strict
      })
    })
  }
})

describe("json-schemas.json coverage", () => {
  const covered = new Set([...constructCases, ...otherTestCases].map((c) => c.entry).concat(formatCases.map((c) => c.entry)))

  it("every entry recorded from Tool.strict.test.ts is rebuilt here", () => {
    const fromStrictTests = entries.flatMap((entry, index) =>
      entry.sites.includes("packages/core/test/Tool.strict.test.ts") ? [index] : []
    )
    expect(fromStrictTests.filter((index) => !covered.has(index))).toEqual([])
  })

  it("no two cases are compared with the same entry, but for schemas 0.1 declared alike", () => {
    const byEntry = new Map<number, Array<string>>()
    for (const c of [...constructCases, ...otherTestCases]) byEntry.set(c.entry, [...(byEntry.get(c.entry) ?? []), c.name])
    expect([...byEntry.values()].filter((names) => names.length > 1)).toEqual([
      ["construct optional (null sent)", "construct optional (value sent)"],
      ["Chat.helpers delete_files", "v0.1 fixtures delete_files"],
      ["Chat.helpers read_file", "v0.1 fixtures read_file"]
    ])
  })
})

describe("no marker $id is sent (issue 32)", () => {
  const ids = (value: unknown): Array<string> =>
    Array.isArray(value)
      ? value.flatMap(ids)
      : typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([key, v]) => [...(key === "$id" || key === "$comment" ? [`${key}: ${String(v)}`] : []), ...ids(v)])
      : []
  class Node extends Schema.Class<Node>("Node")({
    data: Schema.Unknown,
    children: Schema.Array(Schema.suspend((): Schema.Codec<Node, unknown> => Node))
  }) {}
  enum Colour { Red = "red", Blue = "blue" }
  const fields = {
    unknown: Schema.Unknown,
    any: Schema.Any,
    object: Schema.ObjectKeyword,
    empty: Schema.Struct({}),
    enums: Schema.Enum(Colour),
    list: Schema.Array(Schema.Unknown),
    record: Schema.Record(Schema.String, Schema.Unknown),
    union: Schema.Union([Schema.String, Schema.Unknown]),
    tuple: Schema.Tuple([Schema.String, Schema.Unknown]),
    annotated: Schema.Unknown.annotate({ description: "anything" }),
    optional: Schema.optional(Schema.Unknown),
    tree: Node
  }

  it("in a tool's parameters (strict or not) and in a response format, at any depth, $defs included", () => {
    const tool = Tool.make("anything", { description: "Takes anything.", parameters: fields })
    expect(ids(sent(tool.declaration))).toEqual([])
    const wire = Tool.wire(tool)
    expect(Result.isSuccess(wire) && ids(sent(wire.success.declaration))).toEqual([])
    expect(ids(sent(Chat.responseFormat(Schema.Struct(fields))))).toEqual([])
  })

  it("annotations on those nodes are kept: the title and description the model reads", () => {
    const tool = Tool.make("anything", { description: "Takes anything.", parameters: fields })
    const properties = (sent(tool.declaration) as { parameters: { properties: Record<string, unknown> } }).parameters.properties
    expect(properties["unknown"]).toEqual({ title: "unknown" })
    expect(properties["annotated"]).toEqual({ title: "unknown", description: "anything" })
    expect(properties["object"]).toEqual({
      anyOf: [{ type: "object" }, { type: "array" }],
      title: "object",
      description: "an object in the TypeScript meaning, i.e. the `object` type"
    })
  })
})
