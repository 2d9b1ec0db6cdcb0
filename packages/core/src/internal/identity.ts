/**
 * Canonical identities: the one check every id a rule compares goes through
 * (a decider's id and roles, a requester, a vote's `by`, a policy's lists, a
 * grantor, a canceller). Ids are compared exactly, so an id that looks like
 * another but is not the same text (`"Bob "` beside `"Bob"`, `"alice\u200b"`
 * beside `"alice"`, a decomposed `"e\u0301"` beside `"é"`) would count as
 * another person: such ids are refused, never normalised behind the caller's
 * back. Case is kept as it is (ids are case-sensitive).
 *
 * @internal
 */

/** Characters nobody sees or that mean something else than text: controls (Cc), format characters (Cf: zero-width, bidi, BOM) and line or paragraph separators. */
const invisible = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u

/**
 * Characters that show as nothing, or as a blank, though they are letters or marks: Unicode's
 * default-ignorable code points (Hangul fillers U+3164 / U+115F / U+FFA0, the combining grapheme
 * joiner, variation selectors, tag characters) and the braille blank U+2800, which tools render as
 * nothing and so make `"alice\u3164"` read as `alice`.
 */
const blank = /[\p{Default_Ignorable_Code_Point}\u2800]/u

/** A space other than the plain one (U+0020): a no-break, wide or ideographic space reads as a plain one. */
const otherSpace = /[^\P{Zs}\u0020]/u

/** Half of a UTF-16 pair with no other half: text no encoder writes as it is. */
const loneSurrogate = /\p{Cs}/u

/** `U+XXXX` for a character. */
const codePoint = (char: string): string => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`

/**
 * Why `id` is not a canonical id, or `undefined` when it is: a non-empty
 * string without whitespace around it, without control, format (zero-width,
 * bidi) or separator characters, without characters that show as nothing (default-ignorable
 * ones, the braille blank) or spaces other than U+0020, well formed, and in Unicode normal form NFC.
 */
export const problem = (id: unknown): string | undefined => {
  if (typeof id !== "string") return "it is not a string"
  if (id.length === 0) return "it is empty"
  if (loneSurrogate.test(id)) return "it holds a lone surrogate (not well-formed Unicode)"
  const found = invisible.exec(id)
  if (found !== null) return `it holds an invisible or control character (${codePoint(found[0])})`
  const hidden = blank.exec(id)
  if (hidden !== null) return `it holds a character that shows as nothing (${codePoint(hidden[0])})`
  const space = otherSpace.exec(id)
  if (space !== null) return `it holds a space other than the plain one (${codePoint(space[0])})`
  if (id.trim() !== id) return "it has whitespace around it"
  if (id.normalize("NFC") !== id) return "it is not in Unicode normal form NFC"
  return undefined
}

/** Whether `id` is canonical (see `problem`). */
export const isCanonical = (id: unknown): boolean => problem(id) === undefined

/** Why `what` (named in the text) is not canonical: `the decider's id "Bob " is not canonical: it has whitespace around it`. */
export const describe = (what: string, id: unknown): string | undefined => {
  const why = problem(id)
  if (why === undefined) return undefined
  return typeof id === "string" ? `${what} ${JSON.stringify(id)} is not a canonical id: ${why}` : `${what} is not a canonical id: ${why}`
}

/** Why a person (an id and roles) is not canonical, or `undefined`. */
export const personProblem = (person: { readonly id: unknown; readonly roles?: ReadonlyArray<unknown> | undefined }, who: string): string | undefined => {
  const bad = describe(`${who}'s id`, person.id)
  if (bad !== undefined) return bad
  for (const role of person.roles ?? []) {
    const badRole = describe(`${who}'s role`, role)
    if (badRole !== undefined) return badRole
  }
  return undefined
}

/** Why a list of ids or roles (a policy's, say) holds one that is not canonical, or `undefined`. */
export const listProblem = (ids: ReadonlyArray<unknown> | undefined, what: string): string | undefined => {
  for (const id of ids ?? []) {
    const bad = describe(what, id)
    if (bad !== undefined) return bad
  }
  return undefined
}
