import { describe, expect, it } from "@effect/vitest"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import { CrossSite } from "../src/index.js"

/** A request to the endpoint at 127.0.0.1:8080 with these headers. */
const request = (headers: Record<string, string>) =>
  HttpServerRequest.fromWeb(new Request("http://127.0.0.1:8080/api/chat", { method: "POST", headers }))

describe("CrossSite.check", () => {
  it("believes Sec-Fetch-Site when it is sent: only same-origin and none pass", () => {
    expect(CrossSite.check(request({ "sec-fetch-site": "same-origin" }))).toBeUndefined()
    expect(CrossSite.check(request({ "sec-fetch-site": "none" }))).toBeUndefined()
    for (const site of ["cross-site", "same-site", "SAME-ORIGIN", "", "garbage"]) {
      expect(CrossSite.check(request({ "sec-fetch-site": site }))).toMatch(/another site/)
    }
  })

  it("without Sec-Fetch-Site, the Origin must be the endpoint's own host or an allowed origin", () => {
    expect(CrossSite.check(request({ origin: "http://127.0.0.1:8080" }))).toBeUndefined()
    expect(CrossSite.check(request({ origin: "http://127.0.0.1:9090" }))).toMatch(/another origin/)
    expect(CrossSite.check(request({ origin: "https://evil.example" }))).toMatch(/another origin/)
    expect(CrossSite.check(request({ origin: "null" }))).toMatch(/another origin/)
    expect(CrossSite.check(request({ origin: "https://app.example.com" }), ["https://app.example.com"])).toBeUndefined()
    // An allowed origin passes whatever Sec-Fetch-Site says (a page of the application on another site).
    expect(CrossSite.check(request({ origin: "https://app.example.com", "sec-fetch-site": "cross-site" }), ["https://app.example.com"])).toBeUndefined()
  })

  it("a request with neither header is not a browser's cross-site request: it goes on to the Approver", () => {
    expect(CrossSite.check(request({}))).toBeUndefined()
  })
})
