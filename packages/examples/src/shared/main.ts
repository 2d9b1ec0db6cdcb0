/**
 * Running an example as a program: `isMain` tells whether a module is the
 * script node was started with (so tests can import it without running it).
 */
import { pathToFileURL } from "node:url"

/** Whether the module at `url` (its `import.meta.url`) is the script being run. */
export const isMain = (url: string): boolean => {
  const script = process.argv[1]
  return script !== undefined && (url === pathToFileURL(script).href || url === pathToFileURL(`${script}.ts`).href)
}
