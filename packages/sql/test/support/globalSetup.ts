/**
 * Starts one real PostgreSQL server for the `sql` test project (see
 * `EmbeddedPostgres.ts`) and gives its URL to the tests as `postgresUrl`.
 */
import type { TestProject } from "vitest/node"
import { EmbeddedPostgres } from "../../src/testing/index.js"

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string
  }
}

export default async function setup(project: TestProject) {
  const server = await EmbeddedPostgres.start()
  project.provide("postgresUrl", server.url)
  return () => server.stop()
}
