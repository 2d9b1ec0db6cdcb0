/**
 * AI SDK tools, written as an AI SDK program writes them (`tool` from `ai`, zod 4 schemas), with
 * a record of what their `execute` and `needsApproval` were called with.
 */
import { tool } from "ai"
import { z } from "zod"

/** What the tools' functions were called with. */
export interface Record {
  readonly executed: Array<{ readonly tool: string; readonly input: unknown; readonly toolCallId: string }>
  readonly asked: Array<{ readonly tool: string; readonly input: unknown; readonly toolCallId: string }>
}

export const record = (): Record => ({ executed: [], asked: [] })

/** A weather lookup that runs, a transfer that asks a person above 100, a delete that always asks. */
export const bankTools = (rec: Record) => ({
  get_weather: tool({
    description: "The current weather in a city.",
    inputSchema: z.object({
      city: z.string().min(2).describe("The city"),
      unit: z.enum(["celsius", "fahrenheit"]).default("celsius")
    }),
    needsApproval: false,
    execute: async ({ city, unit }, { toolCallId }) => {
      rec.executed.push({ tool: "get_weather", input: { city, unit }, toolCallId })
      return { city, temperature: unit === "celsius" ? 17 : 63 }
    }
  }),
  transfer: tool({
    description: "Transfer money to an account.",
    inputSchema: z.object({ to: z.string().regex(/^[A-Z]{2}\d{4}$/), amount: z.number().positive().max(10_000) }),
    needsApproval: async ({ amount }, { toolCallId }) => {
      rec.asked.push({ tool: "transfer", input: { amount }, toolCallId })
      return amount > 100
    },
    execute: async ({ to, amount }, { toolCallId }) => {
      rec.executed.push({ tool: "transfer", input: { to, amount }, toolCallId })
      return `sent ${amount} to ${to}`
    }
  }),
  delete_account: tool({
    description: "Delete an account.",
    inputSchema: z.object({ id: z.string().min(1) }),
    needsApproval: true,
    execute: async ({ id }, { toolCallId }) => {
      rec.executed.push({ tool: "delete_account", input: { id }, toolCallId })
      return { deleted: id }
    }
  })
})
