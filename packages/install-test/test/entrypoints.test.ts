/**
 * Every entry point of every published package loads under plain `node` on
 * the installed workspace tree (node_modules, the built dist/), none but
 * core's own `.` loads core's barrel (the others import core's modules
 * through its per-module entry points), and the lock
 * file holds no Effect package that cannot load with Effect 4.1: the effect 3
 * line, and the 4.x pre-releases before rc.118 that import `effect/unstable/*`
 * (a path 4.1 no longer has), such as `@effect/ai-openai` and
 * `@effect/sql-sqlite-node` today.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishable, root, run } from "./support.js"

/** The import specifiers of a package: its name plus every subpath of its "exports" but package.json. */
const entryPoints = (folder: string): ReadonlyArray<string> => {
  const manifest = JSON.parse(readFileSync(join(root, "packages", folder, "package.json"), "utf8")) as {
    readonly name: string
    readonly exports: Readonly<Record<string, unknown>>
  }
  return Object.keys(manifest.exports)
    .filter((subpath) => subpath !== "./package.json")
    .map((subpath) => subpath === "." ? manifest.name : `${manifest.name}/${subpath.slice(2)}`)
}

interface Locked {
  readonly version?: string
  readonly dependencies?: Readonly<Record<string, string>>
  readonly peerDependencies?: Readonly<Record<string, string>>
}

const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  readonly packages: Readonly<Record<string, Locked>>
}

/** The installed packages of the lock file (not the workspace's own folders), by path. */
const installed = Object.entries(lock.packages).filter(([path]) => path.includes("node_modules/"))

describe("entry points under plain node", () => {
  for (const { folder } of publishable) {
    for (const specifier of entryPoints(folder)) {
      it(`import("${specifier}") loads`, async () => {
        const ran = await run(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(specifier)})`], {
          cwd: root,
          timeoutMs: 60_000
        })
        expect(ran.stderr).toBe("")
        expect(ran.code).toBe(0)
      })
    }
  }
})

describe("core's barrel", () => {
  // The other packages import core's modules through its per-module entry points
  // (`@chat-ts/core/Messages`), so a program loads every module of core only if it imports the barrel.
  it("is loaded by no entry point of the other packages", async () => {
    const specifiers = publishable.filter(({ folder }) => folder !== "core").flatMap(({ folder }) => entryPoints(folder))
    expect(specifiers.length).toBeGreaterThan(5)
    const script = [
      `import { registerHooks } from "node:module"`,
      `const loaded = []`,
      `registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) })`,
      `for (const specifier of ${JSON.stringify(specifiers)}) await import(specifier)`,
      `console.log(JSON.stringify(loaded.filter((url) => url.includes("/core/dist/"))))`
    ].join("\n")
    const ran = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root, timeoutMs: 60_000 })
    expect(ran.stderr).toBe("")
    const core = JSON.parse(ran.stdout.trim()) as ReadonlyArray<string>
    expect(core.some((url) => url.endsWith("/core/dist/turn/Messages.js"))).toBe(true)
    expect(core.filter((url) => url.endsWith("/core/dist/index.js"))).toEqual([])
  })
})

describe("the lock file", () => {
  it("holds one effect, 4.1 or later", () => {
    const copies = installed.filter(([path]) => path.endsWith("node_modules/effect")).map(([, pkg]) => pkg.version)
    expect(copies).toHaveLength(1)
    expect(copies[0]).toMatch(/^4\.(?:[1-9]|\d\d+)\.\d+$/)
  })

  it("holds no package built for effect 3 or for a 4.x pre-release", () => {
    const offenders = installed.flatMap(([path, pkg]) => {
      const ranges = [pkg.dependencies?.["effect"], pkg.peerDependencies?.["effect"]].filter((r): r is string => r !== undefined)
      return ranges.some((range) => /(^|[\s^~<>=|])[0-3]\.|4\.0\.0-/.test(range)) ? [`${path}@${pkg.version} (effect ${ranges.join(", ")})`] : []
    })
    expect(offenders).toEqual([])
  })

  it("holds none of the @effect packages folded into effect 4 (platform, sql, ai, cli, workflow, cluster, rpc, experimental)", () => {
    const folded = /node_modules\/@effect\/(platform|sql|ai|ai-[\w-]+|cli|workflow|cluster|rpc|experimental|sql-sqlite-node)$/
    expect(installed.map(([path]) => path).filter((path) => folded.test(path))).toEqual([])
  })
})
