/**
 * The package READMEs' install sections show the fresh app's programs word
 * for word, so the code a user pastes is the code the other tests compile
 * under strict settings and run with plain node.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root } from "./support.js"

const cases = [
  { readme: "packages/core/README.md", program: "packages/install-test/app/src/core.ts" },
  { readme: "packages/providers/README.md", program: "packages/install-test/app/src/providers.ts" }
]

describe("the READMEs' smallest programs", () => {
  for (const { program, readme } of cases) {
    it(`${readme} shows ${program}`, () => {
      const text = readFileSync(join(root, readme), "utf8")
      const code = readFileSync(join(root, program), "utf8")
      expect(text).toContain(`<!-- snippet: ${program} -->\n\`\`\`ts\n${code}\`\`\``)
    })
  }

  for (const readme of ["packages/core/README.md", "packages/providers/README.md", "packages/sql/README.md"]) {
    it(`${readme} says how to install the package with its peers`, () => {
      const text = readFileSync(join(root, readme), "utf8")
      const name = readme.split("/")[1]!
      const install = /```sh\n(npm install [^\n]*)\n/.exec(text)?.[1] ?? ""
      const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")) as {
        readonly name: string
        readonly peerDependencies: Record<string, string>
        readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>
      }
      const words = install.split(/\s+/)
      expect(words).toContain(manifest.name)
      // Optional peers (such as the sql package's embedded PostgreSQL for tests) are named where they are used.
      const required = Object.keys(manifest.peerDependencies).filter((peer) => manifest.peerDependenciesMeta?.[peer]?.optional !== true)
      for (const peer of required) expect(words).toContain(peer)
    })
  }
})
