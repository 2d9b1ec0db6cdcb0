/**
 * The tool calls of one streamed response, as `chat.stream` announces them
 * (`ChatEvent.ToolCallDelta`) while their arguments arrive: the name of each
 * call from its start, and the id it will carry in the messages. Ids are made
 * unique in the conversation when the response is complete (`Stepping.uniqueId`, in
 * the order the calls started, as `LanguageModel.Accumulator` orders them);
 * the same rule applied here part by part gives the same ids, so a UI can tie
 * a call's deltas to its later `ToolCall` event and its place in the messages.
 *
 * @internal
 */
import { ChatEvent } from "../ChatEvent.js"
import type * as LanguageModel from "../../model/LanguageModel.js"
import { uniqueId } from "../../turn/Stepping.js"

/** A call of the response: its id in the messages, its name once started, the deltas that came before its start. */
interface Call {
  readonly id: string
  name: string | undefined
  readonly held: Array<string>
}

/** Turns the parts of one streamed response into `ToolCallDelta` events. */
export class StreamedCalls {
  /** The ids given out in this response (never in `taken`). */
  private readonly given = new Set<string>()
  /** The newest call of each provider id: where its fragments go. */
  private readonly latest = new Map<string, Call>()

  /** `taken`: the conversation's ids before this response; it is only read. */
  constructor(private readonly taken: ReadonlySet<string>) {}

  private readonly isTaken = (id: string): boolean => this.taken.has(id) || this.given.has(id)

  /** Gives the next call of the response its id in the messages. */
  private reserve(id: string): string {
    const unique = uniqueId(id, this.isTaken, this.taken.size + this.given.size)
    this.given.add(unique)
    return unique
  }

  /** A call streamed in pieces: later fragments with its provider id go to it. */
  private open(id: string, name: string | undefined): Call {
    const call: Call = { id: this.reserve(id), name, held: [] }
    this.latest.set(id, call)
    return call
  }

  /** The event a stream part makes, if any. */
  event(part: LanguageModel.StreamPart): ChatEvent | undefined {
    switch (part._tag) {
      case "ToolCallStart":
        return this.start(part.id, part.name)
      case "ToolCallDelta":
        return this.delta(part.id, part.argumentsDelta)
      case "Part":
        // A whole call takes its id in order too; it has no deltas, and fragments never go to it.
        if (part.part._tag === "ToolCall") this.reserve(part.part.id)
        return undefined
      default:
        return undefined
    }
  }

  private start(id: string, name: string): ChatEvent {
    const known = this.latest.get(id)
    if (known !== undefined && known.name === undefined) {
      // Fragments came before their start: announce them now, under the call's name.
      known.name = name
      return ChatEvent.ToolCallDelta({ id: known.id, name, argumentsDelta: known.held.splice(0).join("") })
    }
    return ChatEvent.ToolCallDelta({ id: this.open(id, name).id, name, argumentsDelta: "" })
  }

  private delta(id: string, argumentsDelta: string): ChatEvent | undefined {
    const call = this.latest.get(id) ?? this.open(id, undefined)
    if (call.name === undefined) {
      call.held.push(argumentsDelta)
      return undefined
    }
    return argumentsDelta === "" ? undefined : ChatEvent.ToolCallDelta({ id: call.id, name: call.name, argumentsDelta })
  }
}
