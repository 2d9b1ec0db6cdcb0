/**
 * The package READMEs' install sections show the fresh app's programs word
 * for word, so the code a user pastes is the code the other tests compile
 * under strict settings and run with plain node; every published package's
 * README says how to install it with its required peers.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { publishable, root } from "./support.js"

const cases = [
  { readme: "packages/core/README.md", program: "packages/install-test/app/src/core.ts" },
  { readme: "packages/providers/openai/README.md", program: "packages/install-test/app/src/providers.ts" }
]

describe("the READMEs' smallest programs", () => {
  for (const { program, readme } of cases) {
    it(`${readme} shows ${program}`, () => {
      const text = readFileSync(join(root, readme), "utf8")
      const code = readFileSync(join(root, program), "utf8")
      expect(text).toContain(`<!-- snippet: ${program} -->\n\`\`\`ts\n${code}\`\`\``)
    })
  }
})

describe("the READMEs' install commands", () => {
  for (const name of publishable.map((library) => library.folder)) {
    const readme = `packages/${name}/README.md`
    it(`${readme} says how to install the package with its peers`, () => {
      const text = readFileSync(join(root, readme), "utf8")
      const install = /```sh\n(npm install [^\n]*)\n/.exec(text)?.[1] ?? ""
      const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")) as {
        readonly name: string
        readonly peerDependencies?: Record<string, string>
        readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
      }
      const words = install.split(/\s+/)
      expect(words).toContain(manifest.name)
      // Optional peers (such as the sql package's embedded PostgreSQL for tests) are named where they are used.
      const required = Object.keys(manifest.peerDependencies ?? {}).filter((peer) => manifest.peerDependenciesMeta?.[peer]?.optional !== true)
      for (const peer of required) expect(words).toContain(peer)
    })
  }
})
