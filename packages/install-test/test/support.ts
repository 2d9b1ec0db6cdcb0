/**
 * Helpers of the install tests: run commands without blocking the event loop
 * (the fake OpenAI server answers while the app runs), with a time bound, and
 * with an environment free of the workspace's npm settings.
 */
import { execFile } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const root = fileURLToPath(new URL("../../../", import.meta.url))

/** A publishable workspace package: its name and its folder under packages/ (`core`, `providers/openai`…). */
export interface Library {
  readonly name: string
  readonly folder: string
}

/** The folders (under packages/) that hold packages: every folder of packages/, and of packages/providers/. */
const packageFolders = (): ReadonlyArray<string> =>
  ["", "providers/", "ui/"].flatMap((prefix) =>
    readdirSync(join(root, "packages", prefix), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${prefix}${entry.name}`)
  )

/**
 * Every workspace package that is published (packages/<folder>/package.json or
 * packages/providers/<folder>/package.json without `"private": true`), sorted by
 * folder, so a package added later is checked without an edit here.
 */
export const publishable: ReadonlyArray<Library> = packageFolders()
  .flatMap((folder): ReadonlyArray<Library> => {
    let manifest: { readonly name?: unknown; readonly private?: unknown }
    try {
      manifest = JSON.parse(readFileSync(join(root, "packages", folder, "package.json"), "utf8"))
    } catch {
      return [] // a folder without a package.json is not a package
    }
    if (manifest.private === true) return []
    if (typeof manifest.name !== "string") throw new Error(`packages/${folder}/package.json has no name`)
    return [{ name: manifest.name, folder }]
  })
  .sort((a, b) => a.folder.localeCompare(b.folder))

/** The libraries a user installs: the names of the publishable packages. */
export const libraries: ReadonlyArray<string> = publishable.map((library) => library.name)

/** The folder (under packages/) of a publishable package. */
export const folderOf = (name: string): string => {
  const found = publishable.find((library) => library.name === name)
  if (found === undefined) throw new Error(`${name} is not a publishable workspace package`)
  return found.folder
}

/** One packed library, as `npm pack --json` describes it. */
export interface Packed {
  readonly name: string
  readonly version: string
  /** The tarball's absolute path. */
  readonly tarball: string
  /** The paths inside the tarball (relative to the package folder). */
  readonly files: ReadonlyArray<string>
  /** The package's peerDependencies. */
  readonly peerDependencies: Readonly<Record<string, string>>
}

declare module "vitest" {
  export interface ProvidedContext {
    readonly packed: ReadonlyArray<Packed>
  }
}

/**
 * The environment for a command: npm run's `npm_*` variables that describe the
 * workspace (its prefix, package, lifecycle) are dropped, so an `npm install`
 * in a temporary app works on that app only. Registry, cache and proxy
 * settings stay.
 */
export const cleanEnv = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    const workspaceOnly = /^npm_(package_|lifecycle_|command$|config_local_prefix$|config_call$|config_workspaces?$)/i
      .test(key) || key === "INIT_CWD"
    if (!workspaceOnly) env[key] = value
  }
  return { ...env, NO_COLOR: "1", FORCE_COLOR: "0", ...extra }
}

/** What a finished command printed. */
export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command to its end (killed after `timeoutMs`); never throws on a non-zero exit. */
export const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number }
): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(command, args, {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      timeout: options.timeoutMs ?? 240_000,
      maxBuffer: 64 * 1024 * 1024
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr: error !== null && error.killed ? `${stderr}\n(killed: timed out)` : stderr })
    })
  })

/** Runs a command and fails with its output when it exits non-zero. */
export const runOk = async (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number }
): Promise<string> => {
  const ran = await run(command, args, options)
  if (ran.code !== 0) {
    throw new Error(`${command} ${args.join(" ")} (in ${options.cwd}) exited ${ran.code}\n${ran.stdout}\n${ran.stderr}`)
  }
  return ran.stdout
}
