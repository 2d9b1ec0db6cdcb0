/**
 * A `fetch` that sends every request meant for a vendor's real host to the
 * loopback replay server instead (same path and query), so a provider builds
 * its real URLs (Azure's `https://<resource>.openai.azure.com/openai/v1/...`,
 * Bedrock's regional host) and nothing leaves the machine.
 */
export const redirect = (target: string): typeof globalThis.fetch => {
  // The `fetch` of the moment it is made, so it may itself replace `globalThis.fetch`.
  const base = globalThis.fetch
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input.toString())
    const to = new URL(`${url.pathname}${url.search}`, target)
    return base(input instanceof Request ? new Request(to, input) : to, init)
  }
}
