/**
 * Vitest global setup of the install tests: makes sure the dist/ of every
 * publishable package (see `publishable`) is current (`tsc -b` of their src
 * projects, a no-op right after `npm test`'s own build) and packs each with
 * `npm pack` into a temporary folder outside the workspace, shared by every
 * test file through `inject("packed")`.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { cleanEnv, folderOf, libraries, type Packed, publishable, root, runOk } from "./support.js"

export default async function setup(project: TestProject) {
  await runOk("npx", [
    "tsc",
    "-b",
    ...publishable.map((library) => `packages/${library.folder}/tsconfig.src.json`)
  ], { cwd: root, env: cleanEnv(), timeoutMs: 600_000 }) // every library from scratch on a busy machine
  const folder = await mkdtemp(join(tmpdir(), "chat-ts-tarballs-"))
  const workspaces = libraries.flatMap((name) => ["-w", name])
  const json = await runOk("npm", ["pack", ...workspaces, "--json", "--pack-destination", folder], {
    cwd: root,
    env: cleanEnv()
  })
  const reports = JSON.parse(json) as ReadonlyArray<{
    readonly name: string
    readonly version: string
    readonly filename: string
    readonly files: ReadonlyArray<{ readonly path: string }>
  }>
  const packed: Array<Packed> = []
  for (const report of reports) {
    const manifest = JSON.parse(
      await readFile(join(root, "packages", folderOf(report.name), "package.json"), "utf8")
    ) as { readonly peerDependencies?: Record<string, string> }
    packed.push({
      name: report.name,
      version: report.version,
      tarball: join(folder, report.filename),
      files: report.files.map((file) => file.path),
      peerDependencies: manifest.peerDependencies ?? {}
    })
  }
  project.provide("packed", packed)
  return async () => {
    await rm(folder, { recursive: true, force: true })
  }
}
