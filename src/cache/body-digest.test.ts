import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { a, MARK, MARK_1H, piBody, res, txt, u, use } from "../../test/support/cache/wire-builders.ts";
import { digestBody, type BodyDigest } from "./body-digest.ts";
import { flattenRequest } from "./flatten.ts";
import { fingerprintRequest } from "./fingerprints.ts";
import { createCharRatioEstimator } from "./token-estimator.ts";
import type { WireMessage, WireRequestBody } from "./wire-types.ts";

const estimate = createCharRatioEstimator();

/** The digest as plain data, compared with the full computation. */
function expectExact(d: BodyDigest, body: WireRequestBody): void {
  const blocks = flattenRequest(body);
  expect(d.blocks.map(({ block: _b, ...rest }) => rest)).toEqual(blocks.map(({ block: _b, ...rest }) => rest));
  // Each block is this body's block (a reused unmarked one may be the last body's, equal to it);
  // a marked one is this body's very block (string content is read as one new text block, as flattenRequest does).
  for (let i = 0; i < blocks.length; i++) {
    const m = blocks[i].messageIndex >= 0 ? body.messages[blocks[i].messageIndex] : undefined;
    expect(JSON.stringify(d.blocks[i].block)).toBe(JSON.stringify(blocks[i].block));
    if (blocks[i].mark && !(m && typeof m.content === "string")) expect(d.blocks[i].block).toBe(blocks[i].block);
  }
  expect(d.fingerprint).toEqual(fingerprintRequest(body, blocks));
  expect(d.tokens).toEqual(blocks.map(estimate));
}

/** Fresh JSON objects, as Pi builds every payload anew. */
const fresh = (body: WireRequestBody): WireRequestBody => JSON.parse(JSON.stringify(body));

const message = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 30 }), fc.string({ maxLength: 3 })).map(([n, tag]) => u(txt(n, tag))),
  fc.tuple(fc.integer({ min: 0, max: 30 }), fc.string({ maxLength: 3 })).map(([n, tag]) => a(txt(n, tag), use(`id${tag}`))),
  fc.tuple(fc.integer({ min: 0, max: 30 }), fc.string({ maxLength: 3 })).map(([n, tag]) => u(res(`id${tag}`, n))),
  fc.string({ maxLength: 5 }).map((text): WireMessage => ({ role: "user", content: text })),
);

type Step =
  | { kind: "append"; messages: WireMessage[] }
  | { kind: "edit"; at: number; message: WireMessage }
  | { kind: "drop"; count: number }
  | { kind: "system"; tag: string }
  | { kind: "mark"; hour: boolean }
  | { kind: "reorder-keys"; at: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }).map((messages): Step => ({ kind: "append", messages })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), message).map(([at, m]): Step => ({ kind: "edit", at, message: m })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((count): Step => ({ kind: "drop", count })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 2 }).map((tag): Step => ({ kind: "system", tag })) },
  { weight: 1, arbitrary: fc.boolean().map((hour): Step => ({ kind: "mark", hour })) },
  { weight: 1, arbitrary: fc.nat().map((at): Step => ({ kind: "reorder-keys", at })) },
);

describe("digestBody", () => {
  test("without a previous digest: flattenRequest + fingerprintRequest + the default estimate", () => {
    const body = piBody([u(txt(10, "p")), a(txt(5, "t"), use("c1")), u(res("c1", 40))]);
    expectExact(digestBody(body), body);
  });

  test("an appended request reuses the shared prefix's hashes and bytes, and still equals the full digest", () => {
    const history = [u(txt(10, "p")), a(txt(5, "t"), use("c1")), u(res("c1", 40))];
    const d1 = digestBody(piBody(history));
    const second = fresh(piBody([...history, a(txt(5, "u")), u(txt(3, "q"))]));
    const d2 = digestBody(second, d1);
    expectExact(d2, second);
    // The unchanged messages' prefix hashes are the very strings computed before (not hashed again).
    expect(d2.fingerprint.messages[1]).toBe(d1.fingerprint.messages[1]);
    // The previously last message lost its mark: reused bytes, current mark.
    expect(d2.blocks.find((b) => b.messageIndex === 2)?.mark).toBeUndefined();
  });

  test("a changed message early in the history re-chains every later prefix", () => {
    const first = piBody([u(txt(10, "p")), a(txt(5, "t")), u(txt(10, "q"))]);
    const d1 = digestBody(first);
    const edited = fresh(first);
    (edited.messages[1].content as Array<{ text: string }>)[0].text += "!";
    const d2 = digestBody(edited, d1);
    expectExact(d2, edited);
    expect(d2.fingerprint.messages[0]).toBe(d1.fingerprint.messages[0]);
    expect(d2.fingerprint.messages[1]).not.toBe(d1.fingerprint.messages[1]);
    expect(d2.fingerprint.messages[2]).not.toBe(d1.fingerprint.messages[2]);
  });

  test("property: over any sequence of requests (appends, edits, drops, system and mark changes, key order), the incremental digest is the full one", () => {
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 6 }), fc.array(step, { minLength: 1, maxLength: 12 }), (initial, steps) => {
        let messages = initial;
        let systemTag = "system";
        let mark = MARK;
        let body = piBody(messages, { systemTag, mark });
        let digest = digestBody(body);
        expectExact(digest, body);
        for (const s of steps) {
          if (s.kind === "append") messages = [...messages, ...s.messages];
          else if (s.kind === "edit" && messages.length) messages = messages.map((m, i) => (i === s.at % messages.length ? s.message : m));
          else if (s.kind === "drop") messages = messages.slice(0, Math.max(1, messages.length - s.count));
          else if (s.kind === "system") systemTag = `system${s.tag}`;
          else if (s.kind === "mark") mark = s.hour ? MARK_1H : MARK;
          body = fresh(piBody(messages, { systemTag, mark }));
          if (s.kind === "reorder-keys" && body.messages.length) {
            // Same fields, another order: other bytes, so not reusable.
            const m = body.messages[s.at % body.messages.length];
            if (Array.isArray(m.content)) m.content = m.content.map((b) => Object.fromEntries(Object.entries(b).reverse()) as typeof b);
          }
          digest = digestBody(body, digest);
          expectExact(digest, body);
        }
      }),
      { numRuns: 300 },
    );
  });

  test("a Chat Completions body (content null, tool_calls, tool messages) digests like the full computation, its calls in the bytes", () => {
    const chat = (args: string) =>
      ({
        messages: [
          { role: "system", content: "You are pi." },
          { role: "user", content: [{ type: "text", text: "go" }] },
          { role: "assistant", content: null, reasoning_content: "look", tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: args } }] },
          { role: "tool", content: "file text", tool_call_id: "call_1" },
        ],
      }) as unknown as WireRequestBody;
    const first = digestBody(chat('{"path":"a"}'));
    expectExact(first, chat('{"path":"a"}'));
    expect(first.blocks.map((b) => b.type)).toEqual(["text", "text", "message_fields", "text", "message_fields"]);
    const same = digestBody(chat('{"path":"a"}'), first);
    expectExact(same, chat('{"path":"a"}'));
    expect(same.unchanged).toBe(4);
    // Another call's arguments change the prefix from that message on.
    const other = digestBody(chat('{"path":"b"}'), first);
    expectExact(other, chat('{"path":"b"}'));
    expect(other.unchanged).toBe(2);
  });
});
