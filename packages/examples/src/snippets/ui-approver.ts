/**
 * docs/ui.md's `Approver` for the UI endpoints: who is calling, from a
 * session cookie, and who may decide what. Run by
 * test/ui-approver.test.ts behind `UiHttp.toWebHandler`.
 */
// #region approver
import { Approver } from "@chat-ts/inbox"
import { Effect, Option } from "effect"

/** A signed-in person, as your session store keeps them. */
export interface Session {
  readonly user: string
  readonly roles: ReadonlyArray<string>
}

/** Who is calling (from the session cookie your sign-in route set) and who may decide what. */
export const approver = (sessions: (token: string) => Effect.Effect<Option.Option<Session>>) =>
  Approver.make({
    // Behind UiHttp and AgUiHttp (a route, or toWebHandler's function) `request` is effect's HttpServerRequest
    // of the incoming request: `request.cookies`, `request.headers` (lower-case names), `request.url`, `request.method`.
    // Rest it on what a browser cannot forge: a cookie you issued (HttpOnly, SameSite), a verified token.
    identify: (request) => {
      const token = request.cookies["session"]
      if (token === undefined) return Effect.succeedNone // a 401
      return Effect.map(sessions(token), Option.map((session) => new Approver.Identity({ id: session.user, roles: session.roles })))
    },
    // Every approval, edit, rejection, cancel: the person, the conversation and call, the tool, the arguments
    // it would run with (the edited ones for an edit) and the kind of decision. `false` is a 403.
    authorize: (identity, request) =>
      Effect.succeed(request.tool !== "refund" || (identity.roles ?? []).includes("finance"))
  })
// #endregion approver
