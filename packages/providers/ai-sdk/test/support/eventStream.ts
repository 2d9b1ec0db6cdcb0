/**
 * The AWS event-stream binary framing (application/vnd.amazon.eventstream),
 * as Amazon Bedrock's ConverseStream answers
 * (https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream
 * describes the frame; https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
 * the events): each message is
 *
 *   total length (uint32 BE) | headers length (uint32 BE) | prelude CRC32 (of the 8 bytes before)
 *   | headers | payload | message CRC32 (of everything before it)
 *
 * and each header is name length (uint8) | name | type (7: string) | value length (uint16 BE) | value.
 * CRC32 is the IEEE 802.3 one (polynomial 0xEDB88320, reflected), as the spec says.
 *
 * `transcode` turns a fixture written as SSE blocks (`event: contentBlockDelta` + `data: {…}`, or
 * `event: exception:throttlingException`) into those frames as the body arrives, so the replay
 * server's cut and stalled bodies stay cut and stalled on the binary wire.
 */

const table = (() => {
  const out = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    out[n] = c >>> 0
  }
  return out
})()

/** CRC32 (IEEE) of the bytes. */
export const crc32 = (bytes: Uint8Array): number => {
  let crc = 0xffffffff
  for (const byte of bytes) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

const utf8 = new TextEncoder()

/** One event-stream message with string headers. */
export const encode = (headers: Readonly<Record<string, string>>, payload: Uint8Array): Uint8Array => {
  const encodedHeaders = Object.entries(headers).map(([name, value]) => {
    const n = utf8.encode(name)
    const v = utf8.encode(value)
    const out = new Uint8Array(1 + n.length + 1 + 2 + v.length)
    const view = new DataView(out.buffer)
    out[0] = n.length
    out.set(n, 1)
    out[1 + n.length] = 7
    view.setUint16(2 + n.length, v.length, false)
    out.set(v, 4 + n.length)
    return out
  })
  const headersLength = encodedHeaders.reduce((sum, h) => sum + h.length, 0)
  const total = 12 + headersLength + payload.length + 4
  const message = new Uint8Array(total)
  const view = new DataView(message.buffer)
  view.setUint32(0, total, false)
  view.setUint32(4, headersLength, false)
  view.setUint32(8, crc32(message.subarray(0, 8)), false)
  let offset = 12
  for (const header of encodedHeaders) {
    message.set(header, offset)
    offset += header.length
  }
  message.set(payload, offset)
  view.setUint32(total - 4, crc32(message.subarray(0, total - 4)), false)
  return message
}

/** The frame of one SSE block of a fixture: `event: <type>` (or `exception:<type>`) and its `data:` payload. */
export const frameOf = (block: string): Uint8Array | undefined => {
  let event: string | undefined
  const data: Array<string> = []
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim()
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart())
  }
  if (event === undefined) return undefined
  const payload = utf8.encode(data.join("\n"))
  return event.startsWith("exception:")
    ? encode({ ":exception-type": event.slice(10), ":content-type": "application/json", ":message-type": "exception" }, payload)
    : encode({ ":event-type": event, ":content-type": "application/json", ":message-type": "event" }, payload)
}

/** The SSE-written body as event-stream frames, block by block as it arrives; a failure of the body fails the frames. */
export const transcode = (body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> => {
  const decoder = new TextDecoder()
  const reader = body.getReader()
  let buffered = ""
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (true) {
        const end = buffered.indexOf("\n\n")
        if (end !== -1) {
          const block = buffered.slice(0, end)
          buffered = buffered.slice(end + 2)
          const frame = frameOf(block)
          if (frame !== undefined) return controller.enqueue(frame)
          continue
        }
        const { done, value } = await reader.read()
        if (done) {
          const frame = buffered.trim() === "" ? undefined : frameOf(buffered)
          buffered = ""
          if (frame !== undefined) controller.enqueue(frame)
          return controller.close()
        }
        buffered += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n")
      }
    },
    cancel: (reason) => reader.cancel(reason)
  })
}

/** A `fetch` to the replay server whose event-stream answers (written as SSE in the fixtures) reach the SDK as binary frames. */
export const eventStreamFetch = (target: string): typeof globalThis.fetch => async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : input.toString())
  const to = new URL(`${url.pathname}${url.search}`, target)
  const response = await globalThis.fetch(input instanceof Request ? new Request(to, input) : to, init)
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream") || response.body === null) return response
  const headers = new Headers(response.headers)
  headers.set("content-type", "application/vnd.amazon.eventstream")
  return new Response(transcode(response.body), { status: response.status, headers })
}
