/**
 * The chat page of the `ui` example: React with the AI SDK's `useChat` and
 * its stock transport (it posts to `/api/chat`), talking to a chat-ts turn
 * served by @chat-ts/ai-sdk-ui. A call that needs approval shows its
 * arguments, its deadline (from chat-ts's `data-chat-ts-call` part) and
 * Approve / Reject buttons (with a reason, and optional edited arguments);
 * once every call is answered, `useChat` sends the responses by itself and
 * the stream goes on. At start the page loads the stored conversation from
 * the same endpoint (`GET /api/chat?id=…`) as `useChat`'s initial messages,
 * so a reload mid-pause shows the calls that wait (and what a new message
 * cancelled, with the reason) instead of an empty chat; reloaded mid-turn, it
 * says the answer is still being written and loads again until it is (or
 * 30 s passed). Bundled by esbuild
 * (no CDN).
 */
// #region types
import { useChat } from "@ai-sdk/react"
import type { UiHistory, UiMessageChunk } from "@chat-ts/ai-sdk-ui"
import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai"
import { type FormEvent, useEffect, useRef, useState } from "react"
import { createRoot } from "react-dom/client"
import { readRefusal } from "./refusal.js"

// The page's messages, typed with chat-ts's data parts and metadata.
type Message = UIMessage<UiMessageChunk.Metadata, UiMessageChunk.DataTypes>
type Part = Message["parts"][number]
type ToolPart = Extract<Part, { readonly toolCallId: string }>

const chatId = new URLSearchParams(location.search).get("chat") ?? crypto.randomUUID()
// A reload comes back to this conversation: its id goes in the address.
if (new URLSearchParams(location.search).get("chat") === null) history.replaceState(null, "", `?chat=${encodeURIComponent(chatId)}`)

const isTool = (part: Part): part is ToolPart => part.type.startsWith("tool-") || part.type === "dynamic-tool"

const when = (millis: number) => new Date(millis).toLocaleTimeString()

/** What chat-ts says about each call, from the data parts of every message (a later part of a call replaces an earlier one). */
const callData = (messages: ReadonlyArray<Message>): ReadonlyMap<string, UiMessageChunk.CallData> =>
  new Map(messages.flatMap((m) => m.parts.flatMap((p) => p.type === "data-chat-ts-call" ? [[p.data.callId, p.data] as const] : [])))
// #endregion types

function ToolCard(props: {
  readonly part: ToolPart
  readonly data: UiMessageChunk.CallData | undefined
  readonly respond: (id: string, approved: boolean, reason?: string, edit?: unknown) => void
}) {
  const { data, part } = props
  const [reason, setReason] = useState("")
  const [edit, setEdit] = useState("")
  const [problem, setProblem] = useState("")
  const name = part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length)
  const approve = () => {
    if (edit.trim() === "") return props.respond(part.approval!.id, true)
    try {
      props.respond(part.approval!.id, true, undefined, JSON.parse(edit))
    } catch {
      setProblem("the edited arguments are not JSON")
    }
  }
  return (
    <div className="tool" data-call={part.toolCallId} data-state={part.state}>
      <div className="tool-head">
        <b>{name}</b> <span className="state">{part.state}</span>
      </div>
      <pre>{JSON.stringify(part.input)}</pre>
      {data?.deadline === undefined ? null : <div className="deadline">decide before {when(data.deadline)}</div>}
      {data?.decidedBy === undefined ? null : <div className="decided">decided by {data.decidedBy}{data.edited ? " (edited)" : ""}</div>}
      {part.state === "output-available" ? <pre className="output">{JSON.stringify(part.output)}</pre> : null}
      {/* A cancelled or expired call says so below, in its own words: the text the model was told is not repeated. */}
      {part.state === "output-error" && data?.status !== "cancelled" && data?.status !== "expired" ? <pre className="error">{part.errorText}</pre> : null}
      {part.state === "output-denied" ? <div className="denied">rejected{data?.reason ? `: ${data.reason}` : ""}</div> : null}
      {data?.review === undefined ? null : <div className="review">reviewer: {data.review.verdict} ({data.review.reason})</div>}
      {data?.policy?.quorum === undefined ? null : (
        <div className="votes">approvals {data.votes?.length ?? 0} of {data.policy.quorum}{data.votes?.length ? ` (${data.votes.map((v) => v.by).join(", ")})` : ""}</div>
      )}
      {data?.policy?.notRequester === true ? <div className="four-eyes">someone other than who asked must approve</div> : null}
      {/* A new message cancels the calls no one decided: the data part of the later message says so. */}
      {data?.status === "cancelled" ? <div className="cancelled">cancelled{data.reason ? `: ${data.reason}` : ""}</div> : null}
      {data?.status === "expired" ? <div className="expired">expired: nobody decided in time</div> : null}
      {part.state === "approval-requested" && data?.status !== "cancelled" && data?.status !== "expired"
        ? (
          <div className="decide">
            <textarea aria-label={`edited arguments of ${name}`} placeholder="edited arguments (JSON, optional)" value={edit} onChange={(e) => setEdit(e.target.value)} />
            <button onClick={approve}>Approve</button>
            <input aria-label={`reason for rejecting ${name}`} placeholder="reason" value={reason} onChange={(e) => setReason(e.target.value)} />
            <button onClick={() => props.respond(part.approval!.id, false, reason === "" ? undefined : reason)}>Reject</button>
            {problem === "" ? null : <div className="error">{problem}</div>}
          </div>
        )
        : null}
    </div>
  )
}

function Conversation(props: { readonly initial: Array<Message> }) {
  // #region usechat
  // Edited arguments of every approval of this pause: sent with the request useChat makes once all are answered.
  const edits = useRef<Record<string, unknown>>({})
  const { addToolApprovalResponse, clearError, error, messages, sendMessage, status, stop } = useChat<Message>({
    id: chatId,
    // The stored conversation, loaded before the chat starts (see `App`): a reload shows what waits.
    messages: props.initial,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses
  })
  const [text, setText] = useState("")
  const data = callData(messages)
  const send = async (event: FormEvent) => {
    event.preventDefault()
    if (text.trim() === "") return
    edits.current = {}
    setText("")
    // While an answer streams: stop reading it, then send. The server's turn takes the message as its
    // input: the answer is cut where it was, the model answers the message, in this request's stream.
    if (status === "submitted" || status === "streaming") await stop()
    void sendMessage({ text })
  }
  const respond = (id: string, approved: boolean, reason?: string, edit?: unknown) => {
    if (edit !== undefined) edits.current = { ...edits.current, [id]: edit }
    void addToolApprovalResponse({
      id,
      approved,
      ...(reason === undefined ? {} : { reason }),
      options: { body: { chatTs: { edits: edits.current } } }
    })
  }
  // #endregion usechat
  // #region retry
  // A refusal, readable; a retryable one (Busy: another tab's request held the conversation) is sent again as it was:
  // sendMessage() without a message posts the current messages (the same user message, or the same approval responses).
  const refusal = error === undefined ? undefined : readRefusal(error)
  const retry = () => {
    clearError()
    void sendMessage(undefined, { body: { chatTs: { edits: edits.current } } })
  }
  // #endregion retry
  return (
    <main>
      <h1>chat-ts × useChat</h1>
      <div className="messages">
        {messages.map((message) => (
          <div key={message.id} className="message" data-role={message.role}>
            {message.parts.map((part, i) =>
              part.type === "text"
                ? <p key={i}>{part.text}</p>
                : part.type === "reasoning"
                ? <p key={i} className="reasoning">{part.text}</p>
                : isTool(part)
                ? <ToolCard key={part.toolCallId} part={part} data={data.get(part.toolCallId)} respond={respond} />
                : null
            )}
          </div>
        ))}
      </div>
      <div className="status" data-status={status}>{status}</div>
      {refusal === undefined ? null : (
        <div className="error" data-reason={refusal.reason}>
          {refusal.message}
          {refusal.retryable ? <button type="button" onClick={retry}>Try again</button> : null}
        </div>
      )}
      <form onSubmit={send}>
        <input aria-label="message" value={text} onChange={(e) => setText(e.target.value)} placeholder="Ask the agent…" />
        <button type="submit" disabled={status === "error"}>Send</button>
      </form>
    </main>
  )
}

// #region restore
/** The stored conversation: the endpoint's `GET ?id=` (same sign-in, same checks). */
const load = async (id: string): Promise<UiHistory.History> => {
  const response = await fetch(`/api/chat?id=${encodeURIComponent(id)}`, { headers: { accept: "application/json" } })
  if (!response.ok) throw new Error(((await response.json()) as { readonly message?: string }).message ?? `HTTP ${response.status}`)
  return (await response.json()) as UiHistory.History
}

/** `useChat`'s initial messages; while a turn is under way (`running`) loaded again every 2 s, 15 times at most. */
const loadSettled = async (id: string, running: () => void): Promise<Array<Message>> => {
  for (let tries = 1; ; tries++) {
    const loaded = await load(id)
    // A turn that failed before answering reads as running too: after 30 s the page shows what is stored.
    if (!loaded.running || tries === 15) return [...loaded.messages] as Array<Message>
    running()
    await new Promise((resolve) => setTimeout(resolve, 2000))
  }
}

function App() {
  const [initial, setInitial] = useState<Array<Message> | Error | "running">()
  useEffect(() => void loadSettled(chatId, () => setInitial("running")).then(setInitial, (e: unknown) => setInitial(e instanceof Error ? e : new Error(String(e)))), [])
  if (initial === undefined) return <main><div className="status" data-status="loading">loading…</div></main>
  if (initial === "running") return <main><div className="status" data-status="running">the answer is still being written…</div></main>
  if (initial instanceof Error) return <main><div className="error">could not load the conversation: {initial.message}</div></main>
  return <Conversation initial={initial} />
}
// #endregion restore

createRoot(document.getElementById("root")!).render(<App />)
