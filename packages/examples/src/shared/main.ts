/**
 * Running an example as a program. `isMain` tells whether a module is the
 * script node was started with, so tests can import an example without
 * running it; `runExample` prints which model is in use and runs the program
 * with Node's services.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import * as Models from "./Models.js"

/** Whether the module at `url` (its `import.meta.url`) is the script being run. */
export const isMain = (url: string): boolean => {
  const script = process.argv[1]
  return script !== undefined && (url === pathToFileURL(script).href || url === pathToFileURL(`${script}.ts`).href)
}

/**
 * A path the user typed, resolved against the folder they ran the command
 * from: npm scripts (`npm start`, `npm run -w …`) run in the package's folder
 * and give the user's folder as INIT_CWD.
 */
export const fromUserFolder = (path: string): string => resolve(process.env["INIT_CWD"] ?? process.cwd(), path)

/** Runs an example: says which model answers, then runs `program(choice)` with Node's services. */
export const runExample = <A, E>(
  program: (choice: Models.Choice) => Effect.Effect<A, E, NodeServices.NodeServices>,
  options: { readonly offlineName?: string; readonly what?: "chat" | "embeddings" } = {}
): void =>
  Models.choose().pipe(
    Effect.tap((choice) => Console.log(`[model: ${Models.label(choice, options.offlineName, options.what)}]\n`)),
    Effect.flatMap(program),
    Effect.provide(NodeServices.layer),
    NodeRuntime.runMain
  )
