/**
 * The test kit's loopback replay server (`@chat-ts/core/testing`), with no
 * base path (the Anthropic SDK adds `/v1/messages` itself), and the fixtures
 * of `test/fixtures`.
 */
import { ReplayServer as Core } from "@chat-ts/core/testing"
import { readFileSync } from "node:fs"

/** Replies and helpers of the test kit's server. */
export const { cut, firstEvents, hang, json, sse } = Core

/** One queued reply. */
export type Reply = Core.Reply

/** One request the server received. */
export type Recorded = Core.Recorded

/** The running server. */
export type ReplayServer = Core.ReplayServer

/** Reads a file of `test/fixtures`. */
export const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")

/** Starts a server for the scope's lifetime. */
export const make = Core.make()
