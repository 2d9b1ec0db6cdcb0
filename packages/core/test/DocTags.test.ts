/**
 * Core's docs as Effect writes them, checked by the logic of `scripts/doc-tags.mjs`: every export of
 * a public module has a one-line doc with `@since` and `@category`, every module a header with
 * `@since`, and no source file (internal ones included) stacks two doc blocks before one
 * declaration (editors show only the last one). `node scripts/doc-tags.mjs` adds missing tags.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as DocTags from "../../../scripts/doc-tags.mjs"

/**
 * Files whose stacked blocks other parts of issue 33 merge (A: `turn/Turn.ts`). It may only
 * shrink: a file listed here without a stacked block fails the test until it is removed.
 */
const pendingStacked: ReadonlyArray<string> = []

const read = (module: string): string => readFileSync(join(DocTags.coreSrc, module), "utf8")
const modules = DocTags.modulesOf(DocTags.coreSrc)

describe("core's docs", () => {
  it("covers the public modules and leaves out internal ones", () => {
    expect(modules).toContain("turn/Turn.ts")
    expect(modules).toContain("index.ts")
    expect(modules).toContain("testing/MockLanguageModel.ts")
    expect(modules.filter((module) => module.split("/").includes("internal"))).toEqual([])
    expect(modules.filter((module) => DocTags.isInternal(read(module)))).toEqual([])
  })

  it("every export of a public module has a description, @since and @category; every module a header with @since", () => {
    const problems = modules.flatMap((module) =>
      DocTags.check(read(module))
        .filter((p) => !(pendingStacked.includes(module) && p.message.startsWith("stacked")))
        .map((p) => `${module}:${p.line}: ${p.message}`)
    )
    expect(problems).toEqual([])
  })

  it("no source file stacks doc blocks (internal ones included)", () => {
    const files = DocTags.sourcesOf(DocTags.coreSrc)
    const found = files.filter((file) => DocTags.stacked(read(file)).length > 0)
    expect(found.filter((file) => !pendingStacked.includes(file))).toEqual([])
    expect(pendingStacked.filter((file) => !found.includes(file))).toEqual([])
  })

  it("a run of the script changes nothing (every tag is there, and it is idempotent)", () => {
    const changed = modules.filter((module) => DocTags.tag(read(module), module, join(DocTags.coreSrc, module)) !== read(module))
    expect(changed).toEqual([])
  })
})

describe("the docs that name core's files", () => {
  const root = fileURLToPath(new URL("../../..", import.meta.url))
  const pages = [
    "README.md",
    "packages/core/README.md",
    ...readdirSync(join(root, "docs")).filter((file) => file.endsWith(".md")).map((file) => `docs/${file}`)
  ]

  it("name files that exist (core's files moved into folders)", () => {
    const named = pages.flatMap((page) =>
      [...readFileSync(join(root, page), "utf8").matchAll(/packages\/core\/(?:src|test)\/[\w./-]*\w/g)].map((match) => ({ page, path: match[0] }))
    )
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter(({ path }) => !existsSync(join(root, path)))).toEqual([])
  })
})

describe("the check", () => {
  const header = "/**\n * A module.\n *\n * @since 0.1.0\n */\nimport * as Effect from \"effect/Effect\"\n\n"
  const messages = (text: string): ReadonlyArray<string> => DocTags.check(text).map((p) => `${p.line}: ${p.message}`)

  it("accepts an export with a description, @category and @since", () => {
    expect(messages(`${header}/**\n * Adds one.\n *\n * @category utils\n * @since 0.2.0\n */\nexport const inc = (n: number) => n + 1\n`))
      .toEqual([])
  })

  it("finds an export without @since, without @category, without a doc or without a description", () => {
    expect(messages(`${header}/**\n * Adds one.\n *\n * @category utils\n */\nexport const inc = (n: number) => n + 1\n`))
      .toEqual(["13: `inc` has no @since <version>"])
    expect(messages(`${header}/**\n * Adds one.\n *\n * @since 0.2.0\n */\nexport const inc = (n: number) => n + 1\n`))
      .toEqual(["13: `inc` has no @category"])
    expect(messages(`${header}/** Adds one. */\nexport type Inc = number\n`)).toEqual([
      "9: `Inc` has no @since <version>",
      "9: `Inc` has no @category"
    ])
    expect(messages(`${header}export class Inc {}\n`)).toEqual(["8: `Inc` has no doc"])
    expect(messages(`${header}/**\n * @category utils\n * @since 0.2.0\n */\nexport const inc = 1\n`))
      .toEqual(["12: `inc` has a doc without a description"])
  })

  it("finds the names of an export list and barrels without tags", () => {
    expect(messages(`${header}export {\n  /** Adds one. */\n  inc,\n  /**\n   * Adds two.\n   *\n   * @category utils\n   * @since 0.1.0\n   */\n  add2\n} from "./x.js"\n`))
      .toEqual(["10: `inc` has no @since <version>", "10: `inc` has no @category"])
    expect(messages(`${header}/** Tools. */\nexport * as Tool from "./tools/Tool.js"\n`))
      .toEqual(["9: `Tool` has no @since <version>", "9: `Tool` has no @category"])
    expect(messages(`${header}export { a, b } from "./x.js"\n`))
      .toEqual(["8: an export list on one line: write one name a line, each with its doc"])
  })

  it("finds a module without a header or without @since on it", () => {
    expect(messages("import * as Effect from \"effect/Effect\"\n")).toEqual(["1: no module header doc"])
    expect(messages("/**\n * A module.\n */\nimport * as Effect from \"effect/Effect\"\n"))
      .toEqual(["1: the module header has no @since"])
  })

  it("finds stacked doc blocks on an export and on a field, but not a header above the first doc", () => {
    const tagged = "/**\n * Adds one.\n *\n * @category utils\n * @since 0.2.0\n */\n"
    expect(messages(`${header}/** The old line. */\n${tagged}export const inc = (n: number) => n + 1\n`))
      .toEqual(["9: stacked doc blocks (editors show only the last one): merge them into one"])
    expect(DocTags.stacked("/** A type. */\ntype T = {\n  /** One. */\n\n  /** Two. */\n  readonly a: number\n}\n"))
      .toEqual([{ line: 5, message: "stacked doc blocks (editors show only the last one): merge them into one" }])
    expect(DocTags.stacked(`/**\n * A barrel.\n *\n * @since 0.1.0\n */\n\n${tagged}export * as X from "./x/X.js"\n`)).toEqual([])
  })
})
