/** The types of scripts/doc-tags.mjs, for the tests that run its checks (packages/core/test/DocTags.test.ts). */

/** What is wrong at a line (1-based). */
export interface Problem {
  readonly line: number
  readonly message: string
}

/** Core's sources (absolute). */
export declare const coreSrc: string
/** The commit `@chat-ts/core` 0.1.0 was built from. */
export declare const SINCE_0_1_0: string
/** The public modules covered, relative to `dir`. */
export declare const modulesOf: (dir: string) => ReadonlyArray<string>
/** Every `.ts` under `dir`, relative to it. */
export declare const sourcesOf: (dir: string) => ReadonlyArray<string>
/** Whether a module's header says `@internal`. */
export declare const isInternal: (text: string) => boolean
/** Stacked doc blocks anywhere in a file. */
export declare const stacked: (text: string) => ReadonlyArray<Problem>
/** What a public module's docs miss (tags, descriptions, header) and its stacked blocks. */
export declare const check: (text: string) => ReadonlyArray<Problem>
/** The text with the missing tags added (reads git history only when a tag is missing). */
export declare const tag: (text: string, module: string, file: string) => string
/** Each export of a module with its doc block's text (1-based line of the export). */
export declare const docs: (text: string) => ReadonlyArray<{ readonly name: string; readonly line: number; readonly doc: string | undefined }>
