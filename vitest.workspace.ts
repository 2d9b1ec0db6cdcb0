/**
 * The test projects: one per package, each with its own `vitest.config.ts`.
 * The root `vitest.config.ts` reads this list (`test.projects`), so it is the
 * one place that names them.
 */
export default ["packages/*/vitest.config.ts", "packages/providers/*/vitest.config.ts", "packages/ui/*/vitest.config.ts"]
