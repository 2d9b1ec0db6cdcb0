/**
 * Who may decide: the `Approver` service the application provides.
 *
 * `identify` finds the person behind a request (from a bearer token, a
 * session cookie, a header set by a trusted gateway…); no identity is a 401.
 * `authorize` is the application's own rule: whether that person may take this decision on
 * this call (per tool, per conversation, per argument…); `false` is a 403.
 * The call's own decision policy (who may approve, four-eyes, a quorum) is
 * checked as well, by @chat-ts/core, with the identity's `id` and `roles`; the
 * decision is recorded on the call's status with who, when and the hash of
 * the arguments.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * A person who may decide. `id` is recorded in the audit trail; `name` is shown in the page; `roles` are
 * what the calls' decision policies name (see `DecisionPolicy` in @chat-ts/core), recorded with each decision.
 */
export class Identity extends Schema.Class<Identity>("@chat-ts/inbox/Identity")({
  id: Schema.NonEmptyString,
  name: Schema.optional(Schema.String),
  roles: Schema.optional(Schema.Array(Schema.String))
}) {}

/** The identity as a decider of @chat-ts/core: its id and roles. */
export const deciderOf = (identity: Identity): { readonly id: string; readonly roles?: ReadonlyArray<string> } =>
  identity.roles === undefined ? { id: identity.id } : { id: identity.id, roles: identity.roles }

/** The decision being authorized. */
export interface Request {
  readonly conversationId: string
  readonly callId: string
  /** The tool the call would run. */
  readonly tool: string
  /** The arguments the call would run with (the edited ones for an edit), as JSON text. */
  readonly arguments: string
  /**
   * `cancel`: an operator withdraws the call (see `InboxApi.DecisionPayload`). `grant` /
   * `revoke-grant`: making or revoking a grant of the conversation; `callId` is then the grant's id,
   * `tool` its tool pattern and `arguments` its predicate as JSON text (`null`: any).
   */
  readonly decision: "approve" | "edit" | "reject" | "cancel" | "grant" | "revoke-grant"
}

/** The contract an application fulfils. */
export interface Service {
  /** The identity behind a request, or none (the request is refused with 401). It must not trust anything a browser can forge. */
  readonly identify: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<Option.Option<Identity>>
  /** Whether `identity` may take this decision (`false`: 403). */
  readonly authorize: (identity: Identity, request: Request) => Effect.Effect<boolean>
}

/** The approver in use. */
export class Approver extends Context.Service<Approver, Service>()("@chat-ts/inbox/Approver") {}

/** Makes an approver; without `authorize` every identified person may decide everything. */
export const make = (options: {
  readonly identify: Service["identify"]
  readonly authorize?: Service["authorize"]
}): Service => ({ identify: options.identify, authorize: options.authorize ?? (() => Effect.succeed(true)) })

/** A layer providing an approver. */
export const layer = (options: Parameters<typeof make>[0]): Layer.Layer<Approver> => Layer.succeed(Approver, make(options))

/**
 * An approver trusting a header set by a gateway in front of the server (e.g. `x-forwarded-user` from an
 * authenticating proxy). Only safe when nothing but that gateway can reach the server.
 */
export const fromTrustedHeader = (
  header: string,
  authorize?: Service["authorize"]
): Service =>
  make({
    identify: (request) =>
      Effect.succeed(
        Option.fromNullishOr(request.headers[header.toLowerCase()]).pipe(
          Option.filter((id) => id.length > 0 && id.length <= 200),
          Option.map((id) => new Identity({ id }))
        )
      ),
    ...(authorize === undefined ? {} : { authorize })
  })
