// Tools with context: metadata typed per tool, narrowed by the call's tool name.
import { Action, Tool, Toolkit } from "@chat-ts/core"
import { Schema } from "effect"

// #region typed-metadata
const SendEmail = Tool.make("send_email", {
  description: "Send an email.",
  parameters: { to: Schema.String, body: Schema.String },
  metadata: { kind: "email" as const, internalDomain: "example.com" }
})

const Transfer = Tool.make("transfer", {
  description: "Transfer money.",
  parameters: { iban: Schema.String, amount: Schema.Number },
  metadata: { kind: "payment" as const, approveAbove: 100 }
})

export const toolkit = Toolkit.make(SendEmail, Transfer).pipe(
  Toolkit.withStrategy((call) => {
    switch (call.name) {
      case "send_email": // call.params and call.metadata are send_email's
        return call.params.to.endsWith(`@${call.metadata.internalDomain}`) ? Action.Execute() : Action.RequireApproval()
      case "transfer": // …and here transfer's: no casts
        return call.params.amount > call.metadata.approveAbove ? Action.RequireApproval() : Action.Execute()
    }
  })
)
// #endregion typed-metadata
