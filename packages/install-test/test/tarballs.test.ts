/**
 * What `npm pack` ships: JavaScript, declarations and source maps built from
 * every source module, the README, the LICENSE, package.json, and nothing
 * else; publint and Are The Types Wrong find no problem.
 */
import { readdir } from "node:fs/promises"
import { join, relative } from "node:path"
import { describe, expect, inject, it } from "vitest"
import { folderOf, libraries, root, run } from "./support.js"

const packed = inject("packed")

/** The source modules of a package, as the dist/ paths they build to (without extension). */
const modulesOf = async (name: string): Promise<ReadonlyArray<string>> => {
  const src = join(root, "packages", folderOf(name), "src")
  const entries = await readdir(src, { recursive: true })
  return entries
    .filter((entry) => entry.endsWith(".ts"))
    .map((entry) => `dist/${relative(src, join(src, entry)).replace(/\.ts$/, "")}`)
    .sort()
}

describe("the tarballs", () => {
  it("finds the published packages in packages/ (at least the first three)", () => {
    for (const name of ["@chat-ts/core", "@chat-ts/openai", "@chat-ts/sql"]) expect(libraries).toContain(name)
    for (const name of ["@chat-ts/examples", "@chat-ts/bench", "@chat-ts/install-test"]) expect(libraries).not.toContain(name)
  })

  it("packs every library", () => {
    expect(packed.map((p) => p.name).sort()).toEqual([...libraries].sort())
  })

  for (const name of libraries) {
    describe(name, () => {
      const pkg = () => packed.find((p) => p.name === name)!

      it("holds JavaScript, declarations and source maps of every source module, README, LICENSE and package.json only", async () => {
        const modules = await modulesOf(name)
        expect(modules.length).toBeGreaterThan(0)
        const expected = [
          "LICENSE",
          "README.md",
          "package.json",
          ...modules.flatMap((module) => [`${module}.d.ts`, `${module}.js`, `${module}.js.map`])
        ].sort()
        expect([...pkg().files].sort()).toEqual(expected)
      })

      it("ships no tests, fixtures, sources or configs", () => {
        const unwanted = pkg().files.filter((file) =>
          /(^|\/)(test|tests|fixtures|src)\//.test(file) ||
          /tsconfig|vitest|\.tsbuildinfo$|\.test\.|(^|\/)\.[^/]+$/.test(file) ||
          (file.endsWith(".ts") && !file.endsWith(".d.ts"))
        )
        expect(unwanted).toEqual([])
      })

      it("is clean for publint (strict)", async () => {
        const ran = await run(join(root, "node_modules", ".bin", "publint"), ["--strict", pkg().tarball], { cwd: root })
        expect(ran.stdout + ran.stderr).toContain("All good!")
        expect(ran.code).toBe(0)
      })

      // Every resolution (node10, node16 from ESM and from CJS, bundler). The one rule left
      // out says a require() reaches ES modules: the packages are ESM only, which Node 22.12+
      // loads through require() too.
      it("is clean for Are The Types Wrong", async () => {
        const ran = await run(
          join(root, "node_modules", ".bin", "attw"),
          [pkg().tarball, "--ignore-rules", "cjs-resolves-to-esm", "--no-color"],
          { cwd: root }
        )
        expect(ran.code, ran.stdout + ran.stderr).toBe(0)
        expect(ran.stdout).toContain("No problems found")
      })
    })
  }
})
