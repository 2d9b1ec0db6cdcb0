/**
 * Delivering the user messages held on a paused response (`queued`, see
 * `Steering`) once every call of that response is resolved: the reducer's
 * half of steering.
 *
 * @internal
 */
import type * as S from "../../internal/schema.js"

/**
 * `messages` with the messages held on the response at `index` (the last)
 * delivered: the response without `queued`, then one user message each; or
 * `undefined` when it holds none.
 */
export const deliver = (messages: ReadonlyArray<S.Message>, index: number): ReadonlyArray<S.Message> | undefined => {
  const response = messages[index]!
  if (response.queued === undefined) return undefined
  const { queued, ...rest } = response
  const next = messages.slice(0, index)
  next.push(rest)
  for (const held of queued) {
    next.push({
      role: "user",
      parts: held.parts,
      ...(held.sender === undefined ? {} : { sender: held.sender }),
      ...(held.providerMetadata === undefined ? {} : { providerMetadata: held.providerMetadata })
    })
  }
  return next
}
