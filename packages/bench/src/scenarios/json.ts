/**
 * Scenario 9: `Messages.toJson` / `fromJson` against `JSON.stringify` /
 * `JSON.parse` of the same document, on histories of 10 to 10,000 messages.
 * Every sample's output is checked (the round trip gives the messages back).
 */
import * as EffectResult from "effect/Result"
import { Messages } from "@chat-ts/core"
import { type Budget, timeTasks, type Timing } from "../harness.js"
import * as History from "../history.js"

export interface Config {
  readonly sizes: ReadonlyArray<number>
  readonly budget: Budget
}

export interface Row {
  readonly messages: number
  readonly bytes: number
  readonly toJson: Timing
  readonly stringify: Timing
  readonly fromJson: Timing
  readonly parse: Timing
  /** `toJson` over `JSON.stringify`, medians. */
  readonly toJsonRatio: number
  /** `fromJson` over `JSON.parse`, medians. */
  readonly fromJsonRatio: number
}

export interface Result {
  readonly rows: ReadonlyArray<Row>
}

export const run = async (config: Config): Promise<Result> => {
  const rows: Array<Row> = []
  for (const size of config.sizes) {
    const messages = History.toChatTs(History.entries(size))
    const json = EffectResult.getOrThrow(Messages.toJson(messages))
    const document = JSON.parse(json) as unknown
    const back = EffectResult.getOrThrow(Messages.fromJson(json))
    if (back.length !== messages.length || JSON.stringify(back) !== JSON.stringify(messages)) {
      throw new Error("json: the round trip lost messages")
    }
    const timings = await timeTasks([
      { name: "toJson", fn: () => EffectResult.getOrThrow(Messages.toJson(messages)) },
      { name: "stringify", fn: () => JSON.stringify(document) },
      { name: "fromJson", fn: () => EffectResult.getOrThrow(Messages.fromJson(json)) },
      { name: "parse", fn: () => JSON.parse(json) }
    ], config.budget)
    const t = (name: string) => timings[name]!
    rows.push({
      messages: size,
      bytes: Buffer.byteLength(json, "utf8"),
      toJson: t("toJson"),
      stringify: t("stringify"),
      fromJson: t("fromJson"),
      parse: t("parse"),
      toJsonRatio: Math.round((t("toJson").medianUs / t("stringify").medianUs) * 100) / 100,
      fromJsonRatio: Math.round((t("fromJson").medianUs / t("parse").medianUs) * 100) / 100
    })
  }
  return { rows }
}
