/**
 * A fresh app outside the workspace: a temporary folder with its own
 * package.json, the packed tarballs and the effect version under test
 * installed by plain `npm install`, and the sources of `app/`.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { cleanEnv, type Packed, root, runOk } from "./support.js"

const template = fileURLToPath(new URL("../app/", import.meta.url))

/** The version a workspace package resolved to (what the lock file installed). */
export const workspaceVersion = async (name: string): Promise<string> =>
  (JSON.parse(await readFile(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version

/** The lowest version a caret or tilde range allows (`^4.1.0` → `4.1.0`). */
export const lowestOf = (range: string): string => {
  const match = /^[\^~]?(\d+\.\d+\.\d+)$/.exec(range.trim())
  if (match === null) throw new Error(`not a simple range: ${range}`)
  return match[1]!
}

export interface App {
  /** The app's folder (in the system's temporary folder). */
  readonly folder: string
  /** Deletes the app. */
  readonly remove: () => Promise<void>
}

/**
 * Makes the app: copies app/ (without the files in `leaveOut`), installs the
 * tarballs and `dependencies` (name → exact version), with --prefer-offline so
 * the npm cache CI filled serves what it has.
 */
export const makeApp = async (options: {
  readonly tarballs: ReadonlyArray<Packed>
  readonly dependencies: Readonly<Record<string, string>>
  readonly leaveOut?: ReadonlyArray<string>
}): Promise<App> => {
  const folder = await mkdtemp(join(tmpdir(), "chat-ts-app-"))
  await cp(template, folder, {
    recursive: true,
    filter: (source) => !(options.leaveOut ?? []).some((name) => source.endsWith(name))
  })
  const dependencies: Record<string, string> = { ...options.dependencies }
  for (const packed of options.tarballs) dependencies[packed.name] = `file:${packed.tarball}`
  await writeFile(
    join(folder, "package.json"),
    JSON.stringify({ name: "fresh-app", private: true, type: "module", dependencies }, null, 2)
  )
  await runOk("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: folder })
  return { folder, remove: () => rm(folder, { recursive: true, force: true }) }
}

/** Every installed copy of a package in the app's tree: its folder (relative) and version. */
export const copiesOf = async (folder: string, name: string): Promise<ReadonlyArray<string>> => {
  const found: Array<string> = []
  const walk = async (modules: string): Promise<void> => {
    let entries: ReadonlyArray<string>
    try {
      entries = await readdir(join(folder, modules))
    } catch {
      return
    }
    for (const entry of entries) {
      const names = entry.startsWith("@")
        ? (await readdir(join(folder, modules, entry))).map((inner) => `${entry}/${inner}`)
        : entry.startsWith(".") ? [] : [entry]
      for (const pkg of names) {
        const at = `${modules}/${pkg}`
        if (pkg === name) {
          const { version } = JSON.parse(await readFile(join(folder, at, "package.json"), "utf8")) as { version: string }
          found.push(`${at}@${version}`)
        }
        await walk(`${at}/node_modules`)
      }
    }
  }
  await walk("node_modules")
  return found
}

/**
 * Type-checks (and for node16, emits to out/) the app with one of its strict
 * configs, using the workspace's tsc; `flags` are added to the command line.
 */
export const compile = (folder: string, config: "node16" | "bundler" | "node10", flags: ReadonlyArray<string> = []) =>
  runOk(join(root, "node_modules", ".bin", "tsc"), ["-p", `tsconfig.${config}.json`, ...flags], { cwd: folder })

/** What the app's programs print: the pause, the approved call running, the answer. */
export const expectedLines = ["paused for call_1", "deleting a.log, b.log", "Deleted a.log and b.log."]

/** Runs a compiled program of the app (out/<name>.js) with plain node and returns its lines. */
export const runProgram = async (folder: string, name: string, env: NodeJS.ProcessEnv = cleanEnv()) =>
  (await runOk(process.execPath, [join("out", `${name}.js`)], { cwd: folder, env, timeoutMs: 60_000 }))
    .trim()
    .split("\n")
