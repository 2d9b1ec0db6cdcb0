/**
 * CSRF tokens for the page's decisions: an HMAC of the viewer's identity
 * under a server secret. Another site cannot read the page, so it cannot
 * learn the token its forged request would need.
 *
 * @internal
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as Redacted from "effect/Redacted"

/** Makes the token functions under `secret` (a fresh random one when none is given). */
export const make = (secret: Redacted.Redacted<string> | undefined) => {
  const key = secret === undefined ? randomBytes(32) : Buffer.from(Redacted.value(secret), "utf8")
  const token = (identity: string): string => createHmac("sha256", key).update(identity, "utf8").digest("base64url")
  const check = (identity: string, given: string | undefined): boolean => {
    if (given === undefined) return false
    const expected = Buffer.from(token(identity), "utf8")
    const actual = Buffer.from(given, "utf8")
    return actual.length === expected.length && timingSafeEqual(actual, expected)
  }
  return { token, check }
}
