/**
 * The published workspace packages (every packages/<folder>/package.json and
 * packages/providers/<folder>/package.json
 * without `"private": true`) for the root scripts, so a new package needs no
 * edit there:
 *
 *   node scripts/publishable.mjs list    prints their names
 *   node scripts/publishable.mjs clean   removes their dist/
 *   node scripts/publishable.mjs pack    packs them into release/ with npm pack
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../", import.meta.url))

/** The folders that hold packages: every folder of packages/ and of packages/providers/. */
const folders = ["", "providers/", "ui/"].flatMap((prefix) =>
  readdirSync(join(root, "packages", prefix), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${prefix}${entry.name}`)
)

/** The published packages: their folder under packages/ and their name, by folder. */
const publishable = folders
  .filter((folder) => existsSync(join(root, "packages", folder, "package.json")))
  .map((folder) => ({
    folder,
    manifest: JSON.parse(readFileSync(join(root, "packages", folder, "package.json"), "utf8"))
  }))
  .filter(({ manifest }) => manifest.private !== true)
  .map(({ folder, manifest }) => ({ folder, name: manifest.name }))
  .sort((a, b) => a.folder.localeCompare(b.folder))

const commands = {
  list: () => {
    for (const { name } of publishable) console.log(name)
  },
  clean: () => {
    for (const { folder } of publishable) rmSync(join(root, "packages", folder, "dist"), { recursive: true, force: true })
  },
  pack: () => {
    mkdirSync(join(root, "release"), { recursive: true })
    const workspaces = publishable.flatMap(({ name }) => ["-w", name])
    const npm = process.platform === "win32" ? "npm.cmd" : "npm"
    const ran = spawnSync(npm, ["pack", ...workspaces, "--pack-destination", "release"], { cwd: root, stdio: "inherit" })
    process.exitCode = ran.status ?? 1
  }
}

const command = commands[process.argv[2] ?? ""]
if (command === undefined) {
  console.error(`usage: node scripts/publishable.mjs ${Object.keys(commands).join("|")}`)
  process.exitCode = 2
} else {
  command()
}
