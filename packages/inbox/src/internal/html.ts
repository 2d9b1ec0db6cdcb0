/**
 * The inbox page, rendered on the server: a list of pending calls and a
 * conversation's detail. Every value from the store goes through `escape`;
 * the page holds no secret but the CSRF token of the person viewing it.
 *
 * @internal
 */
import type * as InboxApi from "../InboxApi.js"

/** Escapes text for HTML content and quoted attribute values. */
export const escape = (value: string): string =>
  value.replace(/[&<>"'`]/g, (c) => `&#${c.charCodeAt(0)};`)

const time = (millis: number): string => {
  const date = new Date(millis)
  return Number.isNaN(date.getTime()) ? String(millis) : date.toISOString()
}

const deadline = (call: InboxApi.PendingCall): string =>
  call.deadline === undefined
    ? ""
    : `<span class="deadline">${call.reason === "approval" ? "expires" : "due"} <time datetime="${escape(time(call.deadline))}" data-deadline="${call.deadline}">${escape(time(call.deadline))}</time></span>`

const verdictText = { "safe": "safe", "needs-person": "needs a person", "refuse": "refuse", "unavailable": "no verdict" } as const

/** A reviewer model's verdict, when the call has one: advice written by a model that read the arguments, not a decision. */
const review = (call: InboxApi.PendingCall): string =>
  call.review === undefined
    ? ""
    : `<aside class="review review-${escape(call.review.verdict)}" aria-label="Reviewer's verdict">Reviewer: <strong>${escape(verdictText[call.review.verdict])}</strong>${
      call.review.confidence === undefined ? "" : ` <span class="confidence">(confidence ${Math.round(call.review.confidence * 100)}%)</span>`
    } — <span class="review-reason">${escape(call.review.reason)}</span> <span class="review-note">(a model's advice: read the arguments)</span></aside>`

/** Who a policy names for one kind of decision, as words. */
const namedText = (deciders: { readonly ids?: ReadonlyArray<string> | undefined; readonly roles?: ReadonlyArray<string> | undefined } | undefined): string => {
  if (deciders === undefined) return "anyone signed in"
  const names = [...(deciders.roles ?? []).map((role) => `role ${role}`), ...(deciders.ids ?? [])]
  return names.length === 0 ? "nobody" : names.join(", ")
}

/** Who asked for a call, as words: every sender of the messages it answers, and "someone unknown" for a message without one. */
const askedText = (call: InboxApi.PendingCall): string => {
  const names = [...(call.requesters ?? []), ...(call.requesterUnknown === true ? ["someone unknown"] : [])]
  return names.length === 0 ? "unknown" : names.join(", ")
}

/** Who asked for a call, when a sender is recorded (several when messages were delivered together). */
const asked = (call: InboxApi.PendingCall): string =>
  call.requesters === undefined
    ? ""
    : `<p class="requesters" data-requesters="${escape((call.requesters ?? []).join(" "))}">Asked by: ${escape(askedText(call))}</p>`

/** Who may decide a call and how far its quorum is, or nothing for a call without a policy. */
const whoMayDecide = (call: InboxApi.PendingCall): string => {
  const policy = call.policy
  if (policy === undefined) return ""
  const quorum = call.quorum ?? 1
  const votes = call.votes ?? []
  const rules = [
    `approve: ${namedText(policy.approve)}`,
    ...(policy.edit === undefined ? [] : [`edit: ${namedText(policy.edit)}`]),
    ...(policy.reject === undefined ? [] : [`reject: ${namedText(policy.reject)}`]),
    ...(policy.notRequester === true
      ? [`not who asked (${askedText(call)}${call.requesterUnknown === true || call.requesters === undefined ? ": nobody may approve" : ""})`]
      : [])
  ]
  return `<p class="who-may">Who may decide: ${escape(rules.join(" · "))}</p>${
    quorum <= 1
      ? ""
      : `<p class="quorum" data-votes="${votes.length}" data-quorum="${quorum}">Approvals: ${votes.length} of ${quorum}${
        votes.length === 0 ? "" : ` (${escape(votes.map((vote) => vote.by).join(", "))})`
      }</p>`
  }`
}

/** The frame of every page. */
export const layout = (options: {
  readonly title: string
  readonly who: string
  readonly csrf: string
  readonly body: string
  readonly conversation?: string
}): string =>
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${escape(options.csrf)}">
${options.conversation === undefined ? "" : `<meta name="conversation" content="${escape(options.conversation)}">`}
<title>${escape(options.title)}</title>
<link rel="stylesheet" href="/inbox.css">
<script src="/inbox.js" defer></script>
</head>
<body>
<header><a href="/" class="home">Approvals inbox</a> <span class="who">Signed in as <strong>${escape(options.who)}</strong></span></header>
<div id="live" role="status" aria-live="polite" class="live"></div>
<main id="main">
${options.body}
</main>
</body>
</html>`

/** The list of pending calls. */
export const list = (items: ReadonlyArray<InboxApi.PendingCall>): string => {
  if (items.length === 0) return `<h1>Pending decisions</h1><p class="empty">Nothing waits for a decision.</p>`
  const rows = items.map((call) =>
    `<li class="item">
<a href="/c/${encodeURIComponent(call.conversationId)}#call-${encodeURIComponent(call.id)}" data-call="${escape(call.id)}">
<span class="tool">${escape(call.tool)}</span>
<span class="reason reason-${call.reason}">${call.reason === "approval" ? "needs approval" : "scheduled"}</span>
<code class="args">${escape(call.arguments.slice(0, 160))}</code>
${call.review === undefined ? "" : `<span class="review review-${escape(call.review.verdict)}">reviewer: ${escape(verdictText[call.review.verdict])}</span>`}
<span class="meta">conversation ${escape(call.conversationId)} · paused <time datetime="${escape(time(call.updatedAt))}">${escape(time(call.updatedAt))}</time></span>
${deadline(call)}
${asked(call)}
${whoMayDecide(call)}
</a>
</li>`
  ).join("\n")
  return `<h1>Pending decisions <span class="count">(${items.length})</span></h1>\n<ul class="items">\n${rows}\n</ul>`
}

const partText = (part: Record<string, unknown>): string => {
  switch (part._tag) {
    case "Text":
    case "Reasoning":
      return typeof part.text === "string" ? part.text : ""
    case "File":
      return `[file ${typeof part.mediaType === "string" ? part.mediaType : ""}]`
    default:
      return ""
  }
}

const contextOf = (view: InboxApi.ConversationView): string =>
  view.messages.map((raw) => {
    const message = raw as { role: string; parts: ReadonlyArray<Record<string, unknown>> }
    const texts = message.parts.map(partText).filter((text) => text !== "")
    const calls = message.parts.filter((part) => part._tag === "ToolCall").map((part) => {
      const call = view.calls.find((c) => c.id === part.id)
      if (call === undefined) return ""
      const decided = call.decision === undefined
        ? ""
        : ` · <span class="decision">decided by <strong>${escape(call.decision.by)}</strong> at <time datetime="${escape(time(call.decision.at))}">${escape(time(call.decision.at))}</time></span>`
      const cancelled = call.cancellation === undefined
        ? ""
        : ` · <span class="cancellation">cancelled by <strong>${escape(call.cancellation.by)}</strong> at <time datetime="${escape(time(call.cancellation.at))}">${escape(time(call.cancellation.at))}</time></span>`
      return `<div class="call status-${escape(call.status)}"><code>${escape(call.tool)}(${escape(call.arguments)})</code> <span class="status">${escape(call.status)}</span>${decided}${cancelled}${
        call.outcome === undefined ? "" : `<div class="outcome">${escape(call.outcome)}</div>`
      }</div>`
    })
    return `<li class="msg msg-${escape(message.role)}"><span class="role">${escape(message.role)}</span>${
      texts.map((text) => `<p>${escape(text)}</p>`).join("")
    }${calls.join("")}</li>`
  }).join("\n")

type Kind = "approve" | "edit" | "reject" | "cancel"

/** Whether the person viewing may take this kind of decision (a view made for nobody in particular shows every form). */
const allowed = (call: InboxApi.PendingCall, kind: Kind): boolean => call.may === undefined || call.may[kind].allowed

const kindText: Record<Kind, string> = { approve: "approve", edit: "edit the arguments", reject: "reject", cancel: "cancel" }

/** What the person viewing may not do with a call and why (the forms for it are not shown). */
const notAllowed = (call: InboxApi.PendingCall): string => {
  const may = call.may
  if (may === undefined) return ""
  const kinds = (["approve", "edit", "reject", "cancel"] as const).filter((kind) => !may[kind].allowed && (kind !== "edit" || (call.quorum ?? 1) <= 1))
  if (kinds.length === 0) return ""
  return `<ul class="not-allowed" aria-label="What you may not do">${
    kinds.map((kind) => `<li data-kind="${kind}">You may not ${kindText[kind]}${may[kind].detail === undefined ? "" : `: ${escape(may[kind].detail!)}`}</li>`).join("")
  }</ul>`
}

const decisionForms = (view: InboxApi.ConversationView, call: InboxApi.PendingCall): string => {
  const pretty = (() => {
    try {
      return JSON.stringify(JSON.parse(call.arguments), null, 2)
    } catch {
      return call.arguments
    }
  })()
  const base = `data-conversation="${escape(view.id)}" data-call="${escape(call.id)}" data-version="${view.version}"`
  const id = escape(call.id)
  return `<section class="pending" id="call-${id}" aria-labelledby="title-${id}">
<h2 id="title-${id}"><span class="tool">${escape(call.tool)}</span> <span class="reason reason-${call.reason}">${call.reason === "approval" ? "needs approval" : "scheduled"}</span></h2>
${call.description === undefined ? "" : `<p class="description">${escape(call.description)}</p>`}
${deadline(call)}
${review(call)}
${asked(call)}
${whoMayDecide(call)}
<pre class="args" aria-label="Arguments">${escape(pretty)}</pre>
${notAllowed(call)}
${!allowed(call, "approve") ? "" : `<form class="decide approve" ${base} data-kind="approve"><button type="submit" class="primary">Approve</button></form>`}
${(call.quorum ?? 1) > 1 || !allowed(call, "edit") ? "" : `<form class="decide edit" ${base} data-kind="edit">
<label for="edit-${id}">Edit the arguments (JSON)</label>
<textarea id="edit-${id}" name="arguments" rows="${Math.min(12, pretty.split("\n").length + 1)}" spellcheck="false" aria-describedby="problems-edit-${id}">${escape(pretty)}</textarea>
${call.parameters === undefined ? "" : `<details><summary>Parameters (JSON Schema)</summary><pre>${escape(JSON.stringify(call.parameters, null, 2))}</pre></details>`}
<div class="problems" id="problems-edit-${id}" role="alert"></div>
<button type="submit">Approve with these arguments</button>
</form>`}
${!allowed(call, "reject") ? "" : `<form class="decide reject" ${base} data-kind="reject">
<label for="reason-${id}">Reason (the model sees it)</label>
<input id="reason-${id}" name="reason" maxlength="4000" autocomplete="off">
<div class="problems" id="problems-reject-${id}" role="alert"></div>
<button type="submit" class="danger">Reject</button>
</form>`}
${!allowed(call, "cancel") ? "" : `<form class="decide cancel" ${base} data-kind="cancel">
<label for="cancel-${id}">Withdraw it as an operator, not a rejection (the model sees the reason)</label>
<input id="cancel-${id}" name="reason" maxlength="4000" autocomplete="off">
<div class="problems" id="problems-cancel-${id}" role="alert"></div>
<button type="submit">Cancel the call</button>
</form>`}
</section>`
}

const grantState = (grant: InboxApi.GrantView): string =>
  grant.revoked !== undefined ? "revoked" : grant.live ? "live" : "expired"

const grantItem = (view: InboxApi.ConversationView, grant: InboxApi.GrantView): string => {
  const state = grantState(grant)
  const revoke = state !== "live"
    ? ""
    : `<form class="grant-revoke" data-conversation="${escape(view.id)}" data-grant="${escape(grant.id)}" data-version="${view.version}">
<label for="revoke-${escape(grant.id)}">Reason</label> <input id="revoke-${escape(grant.id)}" name="reason" maxlength="4000" autocomplete="off">
<div class="problems" role="alert"></div>
<button type="submit" class="danger">Revoke</button>
</form>`
  return `<li class="grant grant-${state}" id="grant-${escape(grant.id)}"><code>${escape(grant.tool)}</code>${
    grant.where === undefined ? " (any arguments)" : ` where <code>${escape(JSON.stringify(grant.where))}</code>`
  }${grant.user === undefined ? "" : ` for user <strong>${escape(grant.user)}</strong>`} · <span class="state">${state}</span> · by <strong>${escape(grant.by)}</strong> until <time datetime="${escape(time(grant.expiresAt))}">${escape(time(grant.expiresAt))}</time>${
    grant.reason === undefined ? "" : ` · ${escape(grant.reason)}`
  }${grant.revoked === undefined ? "" : ` · revoked by <strong>${escape(grant.revoked.by)}</strong>`}${revoke}</li>`
}

/** The grants of a conversation, and a form for a new one (it covers only calls proposed after it). */
const grants = (view: InboxApi.ConversationView): string =>
  `<section class="grants" aria-labelledby="grants-title">
<h2 id="grants-title">Grants</h2>
${view.grants.length === 0 ? `<p class="empty">No grants.</p>` : `<ul class="grant-list">\n${view.grants.map((g) => grantItem(view, g)).join("\n")}\n</ul>`}
<form class="grant-new" data-conversation="${escape(view.id)}" data-version="${view.version}">
<p class="hint">Approve later calls ahead of time. Calls waiting now are not covered: decide them above.</p>
<label for="grant-tool">Tool (a name, or a pattern with *)</label> <input id="grant-tool" name="tool" maxlength="64" required autocomplete="off">
<label for="grant-where">Arguments must satisfy (JSON predicate, empty: any)</label>
<textarea id="grant-where" name="where" rows="3" spellcheck="false" placeholder='{"path":["to"],"equals":"ann@example.com"}'></textarea>
<label for="grant-minutes">For how many minutes</label> <input id="grant-minutes" name="minutes" type="number" min="1" max="527040" value="60" required>
<label for="grant-user">Only for user (optional)</label> <input id="grant-user" name="user" maxlength="200" autocomplete="off">
<label for="grant-reason">Reason (optional)</label> <input id="grant-reason" name="reason" maxlength="4000" autocomplete="off">
<div class="problems" role="alert"></div>
<button type="submit">Grant</button>
</form>
</section>`

/** One conversation: its pending calls with their forms, then the context. */
export const detail = (view: InboxApi.ConversationView): string =>
  `<h1>Conversation <code>${escape(view.id)}</code> <span class="version">version ${view.version}</span></h1>
${view.pending.length === 0 ? `<p class="empty">No call of this conversation waits for a decision.</p>` : view.pending.map((call) => decisionForms(view, call)).join("\n")}
${grants(view)}
<h2>Conversation</h2>
<ol class="messages">
${contextOf(view)}
</ol>`

/** A page saying the request has no identity (401). */
export const unauthorized = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in</title></head><body><h1>Sign in required</h1><p>The approvals inbox does not know who you are.</p></body></html>`

/** A page for an unknown conversation (404). */
export const notFound = (id: string): string => `<h1>Not found</h1><p>No conversation <code>${escape(id)}</code>.</p><p><a href="/">Back to the inbox</a></p>`
