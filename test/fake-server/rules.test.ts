/**
 * Each 400 rule of the fake server: a request that trips it and a control that passes,
 * checked both on the pure validator and over HTTP.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { countCacheControlMarks, startFakeAnthropic, validateRequest, type WireRequest } from "../support/fake-anthropic/index.ts";
import { assistantMsg, post, request, thinkingBlock, toolResult, toolUse, userMsg, userText } from "./wire.ts";

const EPH = { cache_control: { type: "ephemeral" } };

type RuleCase = { rule: string; bad: WireRequest; good: WireRequest; message: RegExp };

const cases: RuleCase[] = [
  {
    rule: "tool_use without tool_result in the next user message",
    bad: request([userText("go"), assistantMsg(toolUse("a"), toolUse("b")), userMsg(toolResult("a"))]),
    good: request([userText("go"), assistantMsg(toolUse("a"), toolUse("b")), userMsg(toolResult("a"), toolResult("b"))]),
    message: /tool_use.*without.*tool_result.*: b\b/,
  },
  {
    rule: "tool_use as the last message (no next message at all)",
    bad: request([userText("go"), assistantMsg(toolUse("a"))]),
    good: request([userText("go"), assistantMsg({ type: "text", text: "prefill" })]),
    message: /without.*tool_result.*: a\b/,
  },
  {
    rule: "tool_result without matching tool_use in the previous assistant message",
    bad: request([userText("go"), assistantMsg(toolUse("a")), userMsg(toolResult("a"), toolResult("zz"))]),
    good: request([userText("go"), assistantMsg(toolUse("a")), userMsg(toolResult("a"))]),
    message: /unexpected `tool_use_id`.*zz/,
  },
  {
    rule: "tool_result whose tool_use sits two messages back",
    bad: request([
      userText("go"),
      assistantMsg(toolUse("a")),
      userMsg(toolResult("a")),
      assistantMsg(toolUse("b")),
      userMsg(toolResult("b"), toolResult("a")),
    ]),
    good: request([userText("go"), assistantMsg(toolUse("a")), userMsg(toolResult("a")), assistantMsg(toolUse("b")), userMsg(toolResult("b"))]),
    message: /unexpected `tool_use_id`.*: a\b/,
  },
  {
    rule: "duplicate tool_use ids in one message",
    bad: request([userText("go"), assistantMsg(toolUse("a"), toolUse("a")), userMsg(toolResult("a"))]),
    good: request([userText("go"), assistantMsg(toolUse("a"), toolUse("b")), userMsg(toolResult("a"), toolResult("b"))]),
    message: /duplicate id a/,
  },
  {
    rule: "duplicate tool_result ids in one message",
    bad: request([userText("go"), assistantMsg(toolUse("a")), userMsg(toolResult("a"), toolResult("a"))]),
    good: request([userText("go"), assistantMsg(toolUse("a")), userMsg(toolResult("a"))]),
    message: /duplicate a/,
  },
  {
    // marks: 1 tool + 1 system + 3 messages = 5 > 4 (bad); good drops the one on the first message → 4.
    rule: "more than 4 cache_control marks",
    bad: request(
      [userText("one", EPH), assistantMsg({ type: "text", text: "two", ...EPH }), userText("three", EPH)],
      { system: [{ type: "text", text: "sys", ...EPH }], tools: [{ name: "read", ...EPH }] },
    ),
    good: request([userText("one"), assistantMsg({ type: "text", text: "two", ...EPH }), userText("three", EPH)], {
      system: [{ type: "text", text: "sys", ...EPH }],
      tools: [{ name: "read", ...EPH }],
    }),
    message: /maximum of 4 .*Found 5/,
  },
  {
    rule: "altered thinking text in the current tool loop",
    bad: request([
      userText("go"),
      assistantMsg({ ...thinkingBlock("plan A"), thinking: "plan B" }, toolUse("a")),
      userMsg(toolResult("a")),
    ]),
    good: request([userText("go"), assistantMsg(thinkingBlock("plan A"), toolUse("a")), userMsg(toolResult("a"))]),
    message: /Invalid `signature`/,
  },
  {
    // Outside the current loop (a human turn follows) an altered block is not checked.
    rule: "altered thinking only matters in the current tool loop",
    bad: request([userText("go"), assistantMsg({ ...thinkingBlock("x"), signature: "forged" }, toolUse("a")), userMsg(toolResult("a"))]),
    good: request([
      userText("go"),
      assistantMsg({ ...thinkingBlock("x"), signature: "forged" }, toolUse("a")),
      userMsg(toolResult("a")),
      assistantMsg({ type: "text", text: "done" }),
      userText("next"),
    ]),
    message: /Invalid `signature`/,
  },
];

describe("validateRequest (pure)", () => {
  test.each(cases.map((c) => [c.rule, c] as const))("%s: trips and control passes", (_name, c) => {
    expect(validateRequest(c.bad)).toMatch(c.message);
    expect(validateRequest(c.good)).toBeUndefined();
  });

  test("cache marks are counted over tools, system and messages", () => {
    // 1 tool + 1 system + 2 message blocks = 4
    const body = request([userText("a", EPH), userText("b", EPH)], {
      system: [{ type: "text", text: "s", ...EPH }],
      tools: [{ name: "read", ...EPH }, { name: "bash" }],
    });
    expect(countCacheControlMarks(body)).toBe(4);
  });

  test("removed thinking of an emitted turn in the current loop is caught through its tool ids", () => {
    const emitted = {
      messageId: "m",
      thinking: { text: "why", signature: thinkingBlock("why").signature as string },
      toolCalls: [{ id: "a", name: "bash", input: {} }],
      stopReason: "tool_use",
      usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    };
    const lookup = (id: string) => (id === "a" ? emitted : undefined);
    const stripped = request([userText("go"), assistantMsg(toolUse("a")), userMsg(toolResult("a"))]);
    expect(validateRequest(stripped, { emittedByToolId: lookup })).toMatch(/Expected `thinking`/);
    const intact = request([userText("go"), assistantMsg(thinkingBlock("why"), toolUse("a")), userMsg(toolResult("a"))]);
    expect(validateRequest(intact, { emittedByToolId: lookup })).toBeUndefined();
    // The same stripped history is fine once a human turn has closed the loop …
    const closed = request([...stripped.messages, assistantMsg({ type: "text", text: "ok" }), userText("more")]);
    expect(validateRequest(closed, { emittedByToolId: lookup })).toBeUndefined();
    // … or when the request does not enable thinking.
    expect(validateRequest({ ...stripped, thinking: undefined }, { emittedByToolId: lookup })).toBeUndefined();
  });
});

describe("400 answers over HTTP", () => {
  const server = startFakeAnthropic({ script: () => ({ text: "fine" }) });
  afterAll(() => server.stop());

  test.each(cases.map((c) => [c.rule, c] as const))("%s", async (_name, c) => {
    const bad = await post(server.baseUrl, c.bad);
    expect(bad.status).toBe(400);
    const err = (await bad.json()) as { type: string; error: { type: string; message: string } };
    expect(err.type).toBe("error");
    expect(err.error.type).toBe("invalid_request_error");
    expect(err.error.message).toMatch(c.message);
    const good = await post(server.baseUrl, c.good);
    expect(good.status).toBe(200);
    await good.text();
  });

  test("malformed JSON is a 400 too, and is not recorded as a request", async () => {
    const before = server.requests.length;
    const res = await post(server.baseUrl, "{nope");
    expect(res.status).toBe(400);
    expect(server.requests.length).toBe(before);
  });
});
