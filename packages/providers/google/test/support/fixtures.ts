/** Reads the recorded bodies of `test/fixtures` (see fixtures/README.md). */
import { readFileSync } from "node:fs"

/** Reads a file of `test/fixtures`. */
export const fixture = (name: string): string => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")
