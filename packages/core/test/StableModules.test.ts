/**
 * The core README promises that core uses only the modules Effect marks
 * stable: every `effect/...` module imported by packages/core/src carries
 * `@stability stable` in its module header (read from effect's own sources).
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const src = fileURLToPath(new URL("../src", import.meta.url))
const effectRoot = dirname(createRequire(import.meta.url).resolve("effect/package.json"))

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : []
  )

/**
 * The one exception, by file: the optional property kit (`@chat-ts/core/testing/Properties`, which
 * needs fast-check too) derives tools' arguments from their Schemas with `effect/Arbitrary`.
 */
const exempt: Readonly<Record<string, ReadonlyArray<string>>> = { "testing/Properties.ts": ["effect/Arbitrary"] }

const importsOf = (file: string): ReadonlyArray<string> =>
  [...readFileSync(file, "utf8").matchAll(/from "(effect\/[^"]+)"/g)].map((match) => match[1]!)

const relative = (file: string): string => file.slice(src.length + 1).split("\\").join("/")

/** Every `effect` module specifier imported by core's sources ("effect" itself is the stable barrel of stable modules), but the exempt ones. */
const imported = [...new Set(sources(src).flatMap((file) =>
  importsOf(file).filter((specifier) => !(exempt[relative(file)] ?? []).includes(specifier))
))].sort()

/** The stability tag of a module's header comment (its first doc comment). */
const stabilityOf = (specifier: string): string | undefined => {
  const header = /\/\*\*([\s\S]*?)\*\//.exec(readFileSync(join(effectRoot, "src", `${specifier.slice("effect/".length)}.ts`), "utf8"))
  return header === null ? undefined : /@stability (\w+)/.exec(header[1]!)?.[1]
}

describe("core's Effect modules", () => {
  it("are found", () => {
    expect(imported).toContain("effect/Effect")
    expect(imported).toContain("effect/Schema")
  })

  it("the exemptions are real: those files import exactly those unstable modules, and no other file does", () => {
    for (const [file, specifiers] of Object.entries(exempt)) {
      expect(importsOf(join(src, file))).toEqual(expect.arrayContaining([...specifiers]))
      for (const specifier of specifiers) expect(stabilityOf(specifier)).toBe("unstable")
    }
    expect(imported).not.toContain("effect/Arbitrary")
  })

  it("are all marked stable by Effect", () => {
    expect(imported.map((specifier) => [specifier, stabilityOf(specifier)]).filter(([, stability]) => stability !== "stable")).toEqual([])
  })
})
