/**
 * `@since` and `@category` on every export of `@chat-ts/core`, as Effect writes them, and no stacked
 * doc blocks (two `/** *\/` blocks in a row before one declaration: editors show only the last one).
 *
 *   node scripts/doc-tags.mjs           adds the missing tags to packages/core/src (idempotent)
 *   node scripts/doc-tags.mjs --check   lists what is missing, and stacked blocks in every source
 *                                       file (internal ones too); exits 1 if there is any
 *   node scripts/doc-tags.mjs --list    prints every export with the category and version it would get
 *
 * Covered: every `export` of every module under packages/core/src except those in an `internal/`
 * folder (testing/internal included) and those whose header says `@internal`: declarations, the names of `export { … }` / `export type { … }`
 * lists (one name a line, each with its own doc), and the barrels' `export * as X`. A tag already
 * present is kept as written, so a hand-chosen `@category` survives every run.
 *
 * `@since`: 0.1.0 if the module exported that name at `SINCE_0_1_0` (the commit 0.1.0 was built
 * from, named by the version commit 74be115; core was one flat folder then, so the module is found
 * by its file name), else 0.2.0 if it did at `SINCE_0_2_0` (0.2.0's release), else the next version. Adding tags needs that commit in the clone; `--check` does not.
 *
 * `@category`: the first rule of `CATEGORY_RULES` that matches the export's kind and name (see the
 * table below).
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { basename, dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../", import.meta.url))
/** Core's sources. */
export const coreSrc = join(root, "packages/core/src")

/** The commit `@chat-ts/core` 0.1.0 was built from (see the message of 74be115, "Version 0.2.0"). */
export const SINCE_0_1_0 = "23384b2"

/** The commit `@chat-ts/core` 0.2.0 was released at ("Version 0.2.0", changesets). */
export const SINCE_0_2_0 = "74be115"

/** The version of an export that was in neither release: the next one. */
export const LATER = "0.3.0"

/** Whether a module's header doc says `@internal` (a flat module the package does not export). */
export const isInternal = (text) => {
  const header = /^\s*\/\*\*[\s\S]*?\*\//.exec(text)
  return header !== null && /^\s*\*\s*@internal\b/m.test(header[0])
}

/**
 * The modules covered, relative to `dir`: every `.ts` under it outside an `internal/` folder whose
 * header does not say `@internal` (such a module is no more public than an `internal/` one).
 */
export const modulesOf = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) {
      return entry.name === "internal" ? [] : modulesOf(join(dir, entry.name)).map((file) => `${entry.name}/${file}`)
    }
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") && !isInternal(readFileSync(join(dir, entry.name), "utf8"))
      ? [entry.name]
      : []
  })

/** Every `.ts` under `dir` (internal ones included), relative to `dir`: stacked blocks are checked in all. */
export const sourcesOf = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourcesOf(join(dir, entry.name)).map((file) => `${entry.name}/${file}`)
      : entry.name.endsWith(".ts") ? [entry.name] : []
  )

// ---------------------------------------------------------------------------
// Reading a module's exports and their doc blocks
// ---------------------------------------------------------------------------

const declaration =
  /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:abstract\s+)?(const|let|var|function\*?|class|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/
const namespaceExport = /^export\s+\*\s+as\s+([A-Za-z_$][\w$]*)\s+from\s+"([^"]+)"/
const listOpen = /^export\s+(type\s+)?\{\s*$/
const listItem = /^(\s+)(type\s+)?([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?\s*,?\s*$/
const listClose = /^\}(?:\s*from\s+"([^"]+)")?/

/**
 * The doc blocks right above line `at` (only blank lines between), nearest last, each `{ start, end }`
 * (line indexes, inclusive). A block opening the file is the module's header, not a declaration's.
 */
const blocksAbove = (lines, at) => {
  const blocks = []
  let i = at - 1
  for (;;) {
    while (i >= 0 && lines[i].trim() === "") i--
    if (i < 0 || !lines[i].trimEnd().endsWith("*/")) break
    let start = i
    while (start >= 0 && !lines[start].includes("/*")) start--
    if (start < 0 || !lines[start].trimStart().startsWith("/**")) break
    if (lines.slice(0, start).every((line) => line.trim() === "")) break
    blocks.unshift({ start, end: i })
    i = start - 1
  }
  return blocks
}

/**
 * The exports of a module's text, in order: `{ name, kind, line, indent, text, from, local }`, where
 * `kind` is a declaration keyword, `"namespace-export"`, or `"value-name"` / `"type-name"` for a name
 * of an `export { … }` list (`from`: the list's module, `local`: the name there), and `text` is the
 * declaration's first line. `problems` holds what cannot be tagged (several names on one line).
 */
export const scan = (text) => {
  const lines = text.split("\n")
  const exports = []
  const problems = []
  for (let at = 0; at < lines.length; at++) {
    const line = lines[at]
    const ns = namespaceExport.exec(line)
    if (ns !== null) {
      exports.push({ name: ns[1], kind: "namespace-export", line: at, indent: "", text: line, from: ns[2] })
      continue
    }
    const open = listOpen.exec(line)
    if (open !== null) {
      const items = []
      let end = at + 1
      for (; end < lines.length && listClose.exec(lines[end]) === null; end++) {
        const item = listItem.exec(lines[end])
        if (item !== null) {
          items.push({
            name: item[4] ?? item[3],
            local: item[3],
            kind: open[1] !== undefined || item[2] !== undefined ? "type-name" : "value-name",
            line: end,
            indent: item[1],
            text: lines[end]
          })
        } else if (/^\s+[A-Za-z_$][\w$]*\s*,\s*[A-Za-z_$]/.test(lines[end])) {
          problems.push({ line: end, message: "several exported names on one line: write one a line, each with its doc" })
        }
      }
      const from = end < lines.length ? listClose.exec(lines[end])[1] : undefined
      for (const item of items) exports.push({ ...item, from })
      at = end
      continue
    }
    if (/^export\s*(type\s*)?\{.*\}/.test(line) && !/^export\s*\{\s*\}/.test(line)) {
      problems.push({ line: at, message: "an export list on one line: write one name a line, each with its doc" })
      continue
    }
    const decl = declaration.exec(line)
    if (decl === null) continue
    const kind = decl[1].replace("*", "")
    const previous = exports.at(-1)
    // An overload after the first (and the implementation) shares the first's doc.
    if (kind === "function" && previous?.kind === "function" && previous.name === decl[2]) continue
    exports.push({ name: decl[2], kind, line: at, indent: "", text: line })
  }
  return { lines, exports, problems }
}

/** The tags of a doc block (`{ tag: value }`, the first of each) and whether it has prose. */
const readBlock = (lines, block) => {
  const body = lines
    .slice(block.start, block.end + 1)
    .map((line) =>
      line
        .trim()
        .replace(/^\/\*\*/, "")
        .replace(/\*\/$/, "")
        .replace(/^\*(?!\/)/, "")
        .trim()
    )
  const tags = {}
  let prose = false
  let inTags = false
  for (const line of body) {
    const tag = /^@(\w+)\s*(.*)$/.exec(line)
    if (tag !== null) {
      inTags = true
      if (!(tag[1] in tags)) tags[tag[1]] = tag[2].trim()
    } else if (line !== "" && !inTags) prose = true
  }
  return { tags, prose, body }
}

/** Each export of a module's text with the text of its doc block (the last one above it), if any. */
export const docs = (text) => {
  const { lines, exports } = scan(text)
  return exports.map((e) => {
    const block = blocksAbove(lines, e.line).at(-1)
    return { name: e.name, line: e.line + 1, doc: block === undefined ? undefined : lines.slice(block.start, block.end + 1).join("\n") }
  })
}

// ---------------------------------------------------------------------------
// The category rules
// ---------------------------------------------------------------------------

const isType = (kind) => kind === "type" || kind === "interface" || kind === "type-name"
const pascal = (name) => /^[A-Z]/.test(name)
/** Whether a declaration's first line declares a function (an arrow, `function`, a `dual`). */
const isFunction = (decl) => /=>|^export\s+(declare\s+)?(async\s+)?function\b|=\s*(<[^=]*>\s*)?\(|=\s*dual\b|:\s*\{\s*$/.test(decl)
/** A const written as a literal (number, string, array, object, `Duration`, `Symbol`). */
const literal = /=\s*(-?\d|"|'|`|\[|\{\s*$|\{\s*[A-Za-z_$"'][^=]*\}\s*(as const)?\s*$|Duration\.|Symbol\b)/

/**
 * `@category` by the export's kind and name: the first rule that matches wins. `declaration` is the
 * declaration's first line (for a name of an `export { … }` list, the first line of the declaration
 * in the module it comes from, when that module is in this package).
 *
 * | rule | category |
 * | --- | --- |
 * | a barrel's `export * as X from "./folder/X.js"` | the module's folder under src (`data`, `turn`, `chat`, `testing`, …) |
 * | `is…`, `has…` (then a capital), `is` | guards |
 * | a name ending in `Error`, or a class of `Schema.ErrorClass` / `TaggedErrorClass` / `Data.TaggedError` | errors |
 * | a class of `Context.Service` / `Context.Reference` | services |
 * | `layer`, `layer…` | layers |
 * | `TypeId`, `…TypeId` | symbols |
 * | a type or an interface | models |
 * | a class of `Schema.*`, a PascalCase const written with `Schema` or aliasing another module's PascalCase value | schemas |
 * | a PascalCase const otherwise (a tagged union's constructors) | constructors |
 * | `make…`, `of`, `empty`, `from…` except `fromJson` | constructors |
 * | `to…`, `fromJson`, `encode…`, `decode…` | conversions |
 * | `with…` | combinators |
 * | `match` | pattern matching |
 * | a const that is no function: `max…`, `min…`, `default…`, SCREAMING_CASE, or written as a literal | constants |
 * | under a banner of `BANNER_CATEGORIES` | that banner's category |
 * | any other function or const | utils |
 */
export const CATEGORY_RULES = [
  { when: (e) => /^(is|has)([A-Z]|$)/.test(e.name), category: "guards" },
  {
    when: (e, decl) =>
      /Error$/.test(e.name) || /extends\s+(Schema\.(Tagged)?ErrorClass|Data\.(Tagged)?Error)\b/.test(decl),
    category: "errors"
  },
  { when: (e, decl) => /\bextends\s+Context\.(Service|Reference|Tag)\b/.test(decl), category: "services" },
  { when: (e) => /^layer([A-Z]|$)/.test(e.name), category: "layers" },
  { when: (e) => /(^|[a-z])TypeId$/.test(e.name), category: "symbols" },
  { when: (e) => isType(e.kind), category: "models" },
  {
    when: (e, decl) =>
      (e.kind === "class" && /extends\s+Schema\./.test(decl)) ||
      (e.kind === "const" && pascal(e.name) && (/\bSchema\b/.test(decl) || /=\s*[A-Za-z_$][\w$]*\.[A-Z][\w$]*\s*$/.test(decl))),
    category: "schemas"
  },
  { when: (e) => (e.kind === "const" || e.kind === "function") && pascal(e.name), category: "constructors" },
  { when: (e) => /^(make([A-Z]|$)|of$|empty$|from(?!Json$)([A-Z]|$))/.test(e.name), category: "constructors" },
  { when: (e) => /^(to[A-Z]|fromJson$|encode|decode)/.test(e.name), category: "conversions" },
  { when: (e) => /^with[A-Z]/.test(e.name), category: "combinators" },
  { when: (e) => /^(match|\$match)$/.test(e.name), category: "pattern matching" },
  {
    when: (e, decl) =>
      e.kind === "const" && !isFunction(decl) &&
      (/^(max|min|default)[A-Z]/.test(e.name) || /^[A-Z][A-Z0-9_]+$/.test(e.name) || literal.test(decl)),
    category: "constants"
  },
  { when: (e, decl, banner) => banner !== undefined && banner in BANNER_CATEGORIES, category: (e, banner) => BANNER_CATEGORIES[banner] },
  { when: () => true, category: "utils" }
]

/** Banners (`// ----` / title / `// ----`) whose functions take a category from the banner. */
export const BANNER_CATEGORIES = {
  Constructors: "constructors",
  Queries: "getters",
  Updates: "combinators",
  "What the model sees": "conversions",
  "Versioned encoding": "conversions",
  "The reducer": "reducer",
  "Circuit breaker (pure transitions)": "circuit breaker",
  "The router": "constructors",
  "The scenarios": "scenarios",
  "Registering with a test runner": "utils"
}

/** The title of the banner above line `at`, if any. */
const bannerAbove = (lines, at) => {
  for (let i = at - 1; i >= 2; i--) {
    if (/^\/\/ -{10,}$/.test(lines[i]) && /^\/\/ -{10,}$/.test(lines[i - 2])) return lines[i - 1].replace(/^\/\/\s*/, "")
  }
  return undefined
}

/** The first line of the declaration of `name` exported by the module `from` of `file`, or "". */
const declarationIn = (file, from, name) => {
  if (from === undefined || !from.startsWith(".")) return ""
  let text
  try {
    text = readFileSync(join(dirname(file), from.replace(/\.js$/, ".ts")), "utf8")
  } catch {
    return ""
  }
  const found = text.split("\n").find((line) => declaration.exec(line)?.[2] === name)
  return found ?? ""
}

/** The category of export `e` of the module at `file` (absolute path) whose lines are `lines`. */
export const categoryOf = (e, lines, file) => {
  if (e.kind === "namespace-export") {
    return relative(coreSrc, join(dirname(file), e.from)).split(/[\\/]/)[0]
  }
  const kind = e.kind === "value-name" ? (declaration.exec(declarationIn(file, e.from, e.local))?.[1] ?? "const") : e.kind
  const decl = e.kind === "value-name" || e.kind === "type-name" ? declarationIn(file, e.from, e.local) : e.text
  const subject = { ...e, kind: e.kind === "type-name" ? "type-name" : kind }
  const banner = bannerAbove(lines, e.line)
  const rule = CATEGORY_RULES.find((r) => r.when(subject, decl, banner))
  return typeof rule.category === "function" ? rule.category(subject, banner) : rule.category
}

// ---------------------------------------------------------------------------
// `@since`: what 0.1.0 exported
// ---------------------------------------------------------------------------

const gitShow = (spec) => {
  try {
    return execFileSync("git", ["-C", root, "show", spec], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  } catch {
    return undefined
  }
}

let checkedRef = false
const oldExports = new Map()
/** The names the module `module` (relative to core's src) exported in 0.1.0, when it lived in the flat src. */
export const exportedIn0_1_0 = (module) => exportedAt(SINCE_0_1_0, module)

/** The names the module `module` exported at `commit`, when core's src was flat (0.1.0 and 0.2.0 were). */
const exportedAt = (commit, module) => {
  if (!checkedRef) {
    for (const release of [SINCE_0_1_0, SINCE_0_2_0]) {
      if (gitShow(`${release}:packages/core/package.json`) === undefined) {
        throw new Error(`doc-tags: commit ${release} (a release of core) is not in this clone; fetch the history to add tags`)
      }
    }
    checkedRef = true
  }
  const old = module.startsWith("testing/") ? module : basename(module)
  const key = `${commit}:${old}`
  if (!oldExports.has(key)) {
    const text = gitShow(`${commit}:packages/core/src/${old}`)
    oldExports.set(key, new Set(text === undefined ? [] : scan(text).exports.map((e) => e.name)))
  }
  return oldExports.get(key)
}

/** The version an export of `module` first appeared in. */
export const sinceOf = (module, name) =>
  exportedIn0_1_0(module).has(name) ? "0.1.0" : exportedAt(SINCE_0_2_0, module).has(name) ? "0.2.0" : LATER

// ---------------------------------------------------------------------------
// Checking and tagging
// ---------------------------------------------------------------------------

/**
 * Stacked doc blocks anywhere in a file (on an export, a field, a variant…): a `/** *\/` block
 * followed, with only blank lines between, by another one. TypeScript shows only the last. The
 * module's header (the block opening the file) is not counted. Each is `{ line, message }`, 1-based.
 */
export const stacked = (text) => {
  const lines = text.split("\n")
  const found = []
  const header = lines.findIndex((line) => line.trim() !== "")
  let headerEnd = -1
  if (header !== -1 && lines[header].trimStart().startsWith("/**")) headerEnd = lines.findIndex((line, i) => i >= header && line.includes("*/"))
  let previousEnd = -1
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trimStart().startsWith("/**")) continue
    let end = i
    while (end < lines.length && !lines[end].includes("*/")) end++
    if (previousEnd !== -1 && previousEnd !== headerEnd && lines.slice(previousEnd + 1, i).every((line) => line.trim() === "")) {
      found.push({ line: i + 1, message: "stacked doc blocks (editors show only the last one): merge them into one" })
    }
    previousEnd = end
    i = end
  }
  return found
}

/**
 * What is wrong with a public module's docs, each `{ line, message }` (1-based lines): an export
 * without a doc, without prose, without `@since` or `@category`; stacked doc blocks; a module
 * without a header doc carrying `@since`.
 */
export const check = (text) => {
  const { lines, exports, problems } = scan(text)
  const found = [...problems.map((p) => ({ line: p.line + 1, message: p.message })), ...stacked(text)]
  const header = lines.findIndex((line) => line.trim() !== "")
  if (header === -1 || !lines[header].trimStart().startsWith("/**")) {
    found.push({ line: 1, message: "no module header doc" })
  } else {
    const end = lines.findIndex((line, i) => i >= header && line.includes("*/"))
    if (!/@since\s+\d+\.\d+\.\d+/.test(lines.slice(header, end + 1).join("\n"))) {
      found.push({ line: header + 1, message: "the module header has no @since" })
    }
  }
  for (const e of exports) {
    const blocks = blocksAbove(lines, e.line)
    const where = `\`${e.name}\``
    if (blocks.length === 0) {
      found.push({ line: e.line + 1, message: `${where} has no doc` })
      continue
    }
    const { tags, prose } = readBlock(lines, blocks.at(-1))
    if (!prose) found.push({ line: e.line + 1, message: `${where} has a doc without a description` })
    if (!/^\d+\.\d+\.\d+$/.test(tags.since ?? "")) found.push({ line: e.line + 1, message: `${where} has no @since <version>` })
    if ((tags.category ?? "") === "") found.push({ line: e.line + 1, message: `${where} has no @category` })
  }
  return found
}

/** The doc block `block` of `lines` with `@category` and `@since` added where missing, as lines. */
const withTags = (lines, block, indent, category, since) => {
  const { tags, body } = readBlock(lines, block)
  const original = lines.slice(block.start, block.end + 1)
  const line = (text) => (text === "" ? `${indent} *` : `${indent} * ${text}`)
  const needsCategory = (tags.category ?? "") === ""
  const needsSince = (tags.since ?? "") === ""
  if (!needsCategory && !needsSince) return original
  if (block.start === block.end) {
    // `/** text */` becomes a block of its own lines.
    const text = body[0]
    return [`${indent}/**`, ...(text === "" ? [] : [line(text), ...(/^@\w+/.test(text) ? [] : [line("")])]), ...(needsCategory ? [line(`@category ${category}`)] : []), ...(needsSince ? [line(`@since ${since}`)] : []), `${indent} */`]
  }
  // A block of several lines keeps its lines as written (examples keep their indentation).
  const closing = original.at(-1)
  const kept = closing.trim() === "*/" ? original.slice(0, -1) : [...original.slice(0, -1), closing.replace(/\s*\*\/\s*$/, "")]
  const sinceAt = kept.findIndex((text) => /^\s*\*\s*@since\b/.test(text))
  if (!needsSince && sinceAt !== -1) {
    return [...kept.slice(0, sinceAt), line(`@category ${category}`), ...kept.slice(sinceAt), `${indent} */`]
  }
  const last = kept.at(-1).trim().replace(/^\/\*\*/, "").replace(/^\*/, "").trim()
  const gap = last === "" || /^@\w+/.test(last) ? [] : [line("")]
  return [...kept, ...gap, ...(needsCategory ? [line(`@category ${category}`)] : []), ...(needsSince ? [line(`@since ${since}`)] : []), `${indent} */`]
}

/**
 * `text` (the module `module`, relative to core's src, at `file`) with `@since` and `@category`
 * added to every export's doc that lacks them; an export without a doc gets a block of the two tags
 * (`check` still asks for its description). Running it twice changes nothing the second time.
 */
export const tag = (text, module, file) => {
  const { lines, exports } = scan(text)
  const edits = []
  for (const e of exports) {
    const blocks = blocksAbove(lines, e.line)
    const category = categoryOf(e, lines, file)
    if (blocks.length === 0) {
      edits.push({ start: e.line, end: e.line - 1, lines: [`${e.indent}/**`, `${e.indent} * @category ${category}`, `${e.indent} * @since ${sinceOf(module, e.name)}`, `${e.indent} */`] })
      continue
    }
    const block = blocks.at(-1)
    const { tags } = readBlock(lines, block)
    if ((tags.category ?? "") !== "" && (tags.since ?? "") !== "") continue
    edits.push({ start: block.start, end: block.end, lines: withTags(lines, block, e.indent, category, sinceOf(module, e.name)) })
  }
  const out = [...lines]
  for (const edit of edits.sort((a, b) => b.start - a.start)) out.splice(edit.start, edit.end - edit.start + 1, ...edit.lines)
  return out.join("\n")
}

const main = () => {
  if (process.argv.includes("--list")) {
    for (const module of modulesOf(coreSrc)) {
      const file = join(coreSrc, module)
      const { lines, exports } = scan(readFileSync(file, "utf8"))
      for (const e of exports) console.log(`${module}\t${e.name}\t${e.kind}\t${categoryOf(e, lines, file)}\t${sinceOf(module, e.name)}`)
    }
    return
  }
  const checking = process.argv.includes("--check")
  let failures = 0
  let changed = 0
  for (const module of modulesOf(coreSrc)) {
    const file = join(coreSrc, module)
    const text = readFileSync(file, "utf8")
    const name = relative(root, file)
    if (checking) {
      for (const p of check(text)) {
        console.log(`${name}:${p.line}: ${p.message}`)
        failures++
      }
    } else {
      const next = tag(text, module, file)
      if (next !== text) {
        writeFileSync(file, next)
        changed++
      }
      for (const p of check(next)) {
        console.log(`${name}:${p.line}: ${p.message}`)
        failures++
      }
    }
  }
  const covered = new Set(modulesOf(coreSrc))
  for (const module of sourcesOf(coreSrc).filter((module) => !covered.has(module))) {
    for (const p of stacked(readFileSync(join(coreSrc, module), "utf8"))) {
      console.log(`${relative(root, join(coreSrc, module))}:${p.line}: ${p.message}`)
      failures++
    }
  }
  if (!checking) console.log(`doc-tags: ${changed} module(s) tagged`)
  if (failures > 0) {
    console.log(`doc-tags: ${failures} problem(s)`)
    process.exitCode = 1
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main()
