/**
 * The page's script and style sheet, served from the inbox itself (no build
 * step, no CDN). The script sends decisions to the JSON API with the CSRF
 * token, shows the server's validation messages inline, counts deadlines
 * down and follows the server's events (SSE) to refresh what changed.
 *
 * @internal
 */

/** The page's script (plain browser JavaScript). */
export const script = `"use strict";
(() => {
  const token = document.querySelector('meta[name="csrf-token"]').content;
  const conversationMeta = document.querySelector('meta[name="conversation"]');
  const conversation = conversationMeta === null ? null : conversationMeta.content;
  const live = document.getElementById("live");
  const say = (text) => { live.textContent = text; };

  const countdown = () => {
    const now = Date.now();
    for (const el of document.querySelectorAll("[data-deadline]")) {
      const left = Number(el.dataset.deadline) - now;
      if (!Number.isFinite(left)) continue;
      const abs = Math.abs(left), s = Math.floor(abs / 1000) % 60, m = Math.floor(abs / 60000) % 60, h = Math.floor(abs / 3600000);
      const text = (h > 0 ? h + "h " : "") + (h > 0 || m > 0 ? m + "m " : "") + s + "s";
      el.textContent = left >= 0 ? "in " + text : text + " ago";
      el.classList.toggle("late", left < 0);
    }
  };

  const editing = () => {
    const active = document.activeElement;
    return active !== null && (active.tagName === "TEXTAREA" || active.tagName === "INPUT");
  };

  // Shows the page as the server has it now. An update nobody asked for (unlessEditing) is held back
  // when the person started typing while it was fetched: replacing the form would lose what they typed.
  const refresh = async (unlessEditing = false) => {
    const response = await fetch(location.pathname, { headers: { accept: "text/html" }, credentials: "same-origin" });
    if (!response.ok) return false;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const next = doc.getElementById("main");
    if (next === null) return false;
    if (unlessEditing && editing()) { say("Something changed; it will show once you leave the field."); return false; }
    document.getElementById("main").replaceWith(next);
    bind();
    countdown();
    return true;
  };

  const problemsOf = (form) => form.querySelector(".problems");

  // A key given twice in one object of JSON text (which JSON.parse accepts, keeping the last value
  // while a person reads the first), or a "__proto__" key: the reason, as the server gives it, or null.
  // The text is valid JSON (JSON.parse read it), so strings and structure need no further checks.
  const keyProblem = (text) => {
    const stack = [];
    const path = () => "$" + stack.slice(0, -1).map((frame) => frame.at).join("");
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      const top = stack[stack.length - 1];
      if (c === '"') {
        let j = i + 1;
        while (text[j] !== '"') j += text.charCodeAt(j) === 92 ? 2 : 1;
        const string = JSON.parse(text.slice(i, j + 1));
        if (top !== undefined && top.keys !== null && top.expectKey) {
          if (string === "__proto__") return 'the key "__proto__" is not allowed (in ' + path() + ")";
          if (top.keys.has(string)) return "the key " + JSON.stringify(string) + " appears twice in " + path() + ": readers of the text would disagree on its value";
          top.keys.add(string);
          top.expectKey = false;
          top.at = "." + string;
        }
        i = j;
      } else if (c === "{" || c === "[") {
        stack.push({ keys: c === "{" ? new Set() : null, expectKey: c === "{", at: c === "[" ? "[0]" : "", index: 0 });
      } else if (c === "}" || c === "]") {
        stack.pop();
      } else if (c === "," && top !== undefined) {
        if (top.keys !== null) top.expectKey = true;
        else top.at = "[" + ++top.index + "]";
      }
    }
    return null;
  };

  const send = async (form) => {
    const kind = form.dataset.kind;
    let body;
    if (kind === "reject" || kind === "cancel") {
      const reason = form.elements.reason.value.trim();
      const tag = kind === "reject" ? "Reject" : "Cancel";
      body = reason === "" ? { _tag: tag } : { _tag: tag, reason };
    } else if (kind === "edit") {
      const text = form.elements.arguments.value;
      try {
        JSON.parse(text);
      } catch (error) {
        show(form, ["Not JSON: " + error.message]);
        return;
      }
      const problem = keyProblem(text);
      if (problem !== null) { show(form, ["Not accepted: " + problem + "."]); return; }
      // Sent as typed (not parsed and written again), so the server reads the very text the person saw.
      body = '{"_tag":"Approve","arguments":' + text + "}";
    } else {
      body = { _tag: "Approve" };
    }
    for (const button of document.querySelectorAll("form.decide button")) button.disabled = true;
    try {
      const url = "/api/conversations/" + encodeURIComponent(form.dataset.conversation) + "/calls/" + encodeURIComponent(form.dataset.call) + "/decision";
      const response = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", "if-match": form.dataset.version, "x-csrf-token": token },
        body: typeof body === "string" ? body : JSON.stringify(body)
      });
      const result = await response.json().catch(() => ({}));
      if (response.ok) {
        say(kind === "reject" ? "Rejected." : kind === "cancel" ? "Cancelled." : "Approved.");
        await refresh();
        return;
      }
      if (response.status === 422 && Array.isArray(result.problems)) show(form, result.problems);
      else if (response.status === 409) { show(form, [result.message || "Someone decided first."]); say("This conversation changed: reloaded."); await refresh(); }
      else show(form, [result.message || ("The server refused (" + response.status + ").")]);
    } finally {
      for (const button of document.querySelectorAll("form.decide button")) button.disabled = false;
    }
  };

  const show = (form, problems) => {
    const box = problemsOf(form);
    if (box === null) { say(problems.join(" ")); return; }
    box.replaceChildren(...problems.map((text) => { const p = document.createElement("p"); p.textContent = text; return p; }));
    const field = form.querySelector("textarea, input");
    if (field !== null) { field.setAttribute("aria-invalid", "true"); field.focus(); }
  };

  // Grants: made and revoked with the conversation's version, refreshed after.
  const sendGrant = async (form) => {
    let url, body;
    const conversation = encodeURIComponent(form.dataset.conversation);
    if (form.classList.contains("grant-new")) {
      const text = form.elements.where.value.trim();
      let where;
      if (text !== "") {
        try { where = JSON.parse(text); } catch (error) { show(form, ["Not JSON: " + error.message]); return; }
        const problem = keyProblem(text);
        if (problem !== null) { show(form, ["Not accepted: " + problem + "."]); return; }
      }
      const user = form.elements.user.value.trim(), reason = form.elements.reason.value.trim();
      body = { tool: form.elements.tool.value.trim(), expiresAfterMillis: Math.round(Number(form.elements.minutes.value) * 60000) };
      if (where !== undefined) body.where = where;
      if (user !== "") body.user = user;
      if (reason !== "") body.reason = reason;
      url = "/api/conversations/" + conversation + "/grants";
    } else {
      const reason = form.elements.reason.value.trim();
      body = reason === "" ? {} : { reason };
      url = "/api/conversations/" + conversation + "/grants/" + encodeURIComponent(form.dataset.grant) + "/revoke";
    }
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "if-match": form.dataset.version, "x-csrf-token": token },
      body: JSON.stringify(body)
    });
    const result = await response.json().catch(() => ({}));
    if (response.ok) { say(form.classList.contains("grant-new") ? "Granted." : "Revoked."); await refresh(); return; }
    show(form, [result.message || ("The server refused (" + response.status + ").")]);
  };

  const bind = () => {
    for (const form of document.querySelectorAll("form.decide")) {
      form.addEventListener("submit", (event) => { event.preventDefault(); send(form); });
    }
    for (const form of document.querySelectorAll("form.grant-new, form.grant-revoke")) {
      form.addEventListener("submit", (event) => { event.preventDefault(); sendGrant(form); });
    }
  };

  bind();
  countdown();
  setInterval(countdown, 1000);

  const events = new EventSource("/api/events");
  events.addEventListener("change", (event) => {
    let change = {};
    try { change = JSON.parse(event.data); } catch {}
    if (conversation !== null && change.id !== undefined && change.id !== conversation) return;
    if (editing()) { say("Something changed; it will show once you leave the field."); return; }
    refresh(true).then((shown) => shown && say(conversation === null ? "The list was updated." : "This conversation was updated."));
  });
  document.addEventListener("focusout", () => { if (live.textContent.startsWith("Something changed")) refresh(true); });
})();
`

/** The page's style sheet: readable on a phone, visible keyboard focus. */
export const style = `:root { color-scheme: light dark; --accent: #2457c5; --danger: #b3261e; font-family: system-ui, sans-serif; line-height: 1.45; }
body { margin: 0 auto; max-width: 52rem; padding: 0 1rem 3rem; }
header { display: flex; flex-wrap: wrap; justify-content: space-between; gap: .5rem; padding: .75rem 0; border-bottom: 1px solid #8884; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.15rem; }
.items { list-style: none; padding: 0; }
.item a { display: grid; gap: .2rem; padding: .75rem; margin: .5rem 0; border: 1px solid #8886; border-radius: .5rem; text-decoration: none; color: inherit; }
.tool { font-weight: 600; font-family: ui-monospace, monospace; }
.reason { justify-self: start; font-size: .8rem; padding: .05rem .4rem; border-radius: 1rem; background: #f5d76e55; }
.reason-scheduled { background: #7eb6ff44; }
.args, pre { white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, monospace; font-size: .9rem; }
.meta, .deadline, .version { font-size: .85rem; opacity: .8; }
.late { color: var(--danger); font-weight: 600; }
.review { justify-self: start; font-size: .9rem; padding: .3rem .5rem; border-left: 4px solid #8888; }
.review-safe { border-color: #3a9d5d; } .review-refuse, .review-unavailable { border-color: var(--danger); }
.review-note { font-size: .8rem; opacity: .8; }
.pending { border: 2px solid #f5d76e; border-radius: .5rem; padding: .75rem; margin: 1rem 0; }
form.decide, form.grant-new, form.grant-revoke { margin: .75rem 0; display: grid; gap: .35rem; }
.grant-revoked, .grant-expired { opacity: .7; }
textarea, input { font: inherit; font-family: ui-monospace, monospace; width: 100%; box-sizing: border-box; padding: .4rem; }
[aria-invalid="true"] { border: 2px solid var(--danger); }
button { font: inherit; padding: .55rem 1rem; min-height: 2.75rem; border-radius: .4rem; border: 1px solid #8888; cursor: pointer; justify-self: start; }
button.primary { background: var(--accent); color: #fff; }
button.danger { background: var(--danger); color: #fff; }
.problems { color: var(--danger); }
.problems p { margin: .2rem 0; }
.messages { padding-left: 1.2rem; }
.msg { margin: .5rem 0; }
.role { font-size: .75rem; text-transform: uppercase; opacity: .7; }
.call { margin: .3rem 0; overflow-wrap: anywhere; }
.status { font-size: .8rem; padding: .05rem .4rem; border-radius: 1rem; background: #8883; }
.decision { font-size: .85rem; }
.outcome { font-family: ui-monospace, monospace; font-size: .85rem; opacity: .85; }
.live:not(:empty) { position: sticky; top: 0; background: #2457c522; padding: .4rem .75rem; border-radius: .4rem; }
`
