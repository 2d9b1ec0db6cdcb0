/** The README's and docs/ui.md's reconnect snippet (checked word for word, and run, in Connect.test.ts). */
import { HttpAgent } from "@ag-ui/client"

// #region reconnect
// A page that starts again (a reload, a second tab): a new client on the thread, no messages of its own.
// Its first run stores and runs nothing: the thread comes back as a MESSAGES_SNAPSHOT, and the interrupts
// still pending as the run's outcome, so `pendingInterrupts` is what waits for the person, as before.
export const reconnect = async (url: string, threadId: string, headers: Record<string, string> = {}) => {
  const agent = new HttpAgent({ url, threadId, headers })
  await agent.runAgent() // no message, no resume: a connect
  return agent // agent.messages: the thread; agent.pendingInterrupts: answer them with runAgent({ resume })
}
// #endregion reconnect
