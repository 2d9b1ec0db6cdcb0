/**
 * A reviewer model's verdict reaches the approver: the pending call of the API
 * carries it, and the page shows it (escaped) next to the arguments, as advice.
 */
import { Reviewer, Toolkit } from "@chat-ts/core"
import { MockLanguageModel } from "@chat-ts/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fixture from "./support/fixture.js"

const review = { verdict: "needs-person", reason: "Mail to an outside <b>address</b>.", confidence: 0.75 } as const

/** Every call would run, but the reviewer asks a person for each. */
const reviewed = Toolkit.make(Fixture.SendEmail, Fixture.Transfer, Fixture.DeleteFiles, Fixture.WireFunds).pipe(
  Reviewer.review({ model: MockLanguageModel.make(() => MockLanguageModel.text(JSON.stringify(review))) })
)

const email = { id: "e1", name: "send_email", arguments: { to: "ann@example.com", subject: "hi" } }

describe("the inbox shows a reviewer's verdict", () => {
  it.effect("in the pending call of the API, on the list and on the conversation page", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make({ tools: reviewed })
      yield* env.seed("c1", [email])
      const pending = yield* Fixture.request(`${env.url}/api/pending`, { user: "alice" })
      assert.deepStrictEqual(pending.json.items.map((item: any) => item.review), [review])
      const detail = yield* Fixture.request(`${env.url}/api/conversations/c1`, { user: "alice" })
      assert.deepStrictEqual(detail.json.pending[0].review, review)

      const list = yield* Fixture.request(`${env.url}/`, { user: "alice" })
      assert.include(list.text, "reviewer: needs a person")
      const page = yield* Fixture.request(`${env.url}/c/c1`, { user: "alice" })
      assert.include(page.text, "Reviewer: <strong>needs a person</strong>")
      assert.include(page.text, "(confidence 75%)")
      assert.include(page.text, "Mail to an outside &#60;b&#62;address&#60;/b&#62;.")
      assert.notInclude(page.text, "<b>address</b>")
      assert.deepStrictEqual(env.runs, [])
    }))

  it.effect("a call without a reviewer has no verdict", () =>
    Effect.gen(function*() {
      const env = yield* Fixture.make()
      yield* env.seed("c1", [email])
      const pending = yield* Fixture.request(`${env.url}/api/pending`, { user: "alice" })
      assert.isUndefined(pending.json.items[0].review)
      const page = yield* Fixture.request(`${env.url}/c/c1`, { user: "alice" })
      assert.notInclude(page.text, "Reviewer:")
    }))
})
