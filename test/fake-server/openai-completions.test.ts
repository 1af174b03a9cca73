/**
 * The fake Chat Completions server: pi-ai's own client reads its chunks (reasoning_content,
 * text, parallel tool calls, usage with cached tokens) and replays its turns; each refusal rule
 * trips and passes its control; and the automatic prefix cache's arithmetic.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { planAutoCache, reportedCached, startFakeCompletions, validateChatMessages, type AutoCacheEntry, type ChatMessage } from "../support/fake-openai/index.ts";
import { callsOf, toolResultFor, transcript, turn, user } from "./pi-ai-client.ts";

const server = startFakeCompletions({
  idNonce: "c",
  script: [
    { thinking: "Look at a and b.", text: "Reading.", toolCalls: [{ name: "read", input: { path: "a" } }, { name: "bash", input: { command: "ls" } }] },
    { text: "Both read." },
  ],
});
afterAll(() => server.stop());

describe("stream and replay through pi-ai's openai-completions client", () => {
  test("reasoning_content, text and parallel calls are read; the replay sends them back and is accepted, cached", async () => {
    const ask = user(`go ${"y".repeat(6_000)}`);
    const first = await turn("openai-completions", server.baseUrl, transcript([ask]));
    expect(first.stopReason).toBe("toolUse");
    expect(first.content.map((b) => b.type)).toEqual(["thinking", "text", "toolCall", "toolCall"]);
    expect(first.content[0]).toMatchObject({ thinking: "Look at a and b.", thinkingSignature: "reasoning_content" });
    expect(callsOf(first).map((c) => c.id)).toEqual(["call_c_1_0", "call_c_1_1"]);
    expect(first.usage.input).toBe(server.requests[0]!.response!.usage.promptTokens);

    const second = await turn("openai-completions", server.baseUrl, transcript([ask, first, ...callsOf(first).map((c) => toolResultFor(c))]));
    expect(second.stopReason).toBe("stop");
    const sent = server.requests[1]!.body.messages;
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "tool"]);
    expect(sent[2]).toMatchObject({ content: "Reading.", reasoning_content: "Look at a and b." });
    const usage = server.requests[1]!.response!.usage;
    expect(usage.cachedTokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.cacheRead).toBe(usage.cachedTokens);
  });

  test("a tool result without its call is refused; pi-ai reports OpenAI's message", async () => {
    const orphan = transcript([user("go"), toolResultFor({ id: "call_zz", name: "read" })]);
    const refused = await turn("openai-completions", server.baseUrl, orphan);
    expect(refused.stopReason).toBe("error");
    expect(refused.errorMessage).toContain("messages with role 'tool' must be a response to a preceeding message with 'tool_calls'");
  });
});

const asked: ChatMessage = { role: "user", content: "go" };
const calls = (...ids: string[]): ChatMessage => ({ role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "read", arguments: "{}" } })) });
const answer = (id: string): ChatMessage => ({ role: "tool", content: "ok", tool_call_id: id });

type Case = { rule: string; bad: ChatMessage[]; good: ChatMessage[]; message: RegExp; param?: string };

const cases: Case[] = [
  { rule: "a tool message without its assistant tool_calls", bad: [asked, answer("a")], good: [asked, calls("a"), answer("a")], message: /messages with role 'tool' must be a response to a preceeding message with 'tool_calls'/, param: "messages.[1].role" },
  { rule: "a tool message answering another turn's call", bad: [asked, calls("a"), answer("a"), { role: "assistant", content: "x" }, answer("a2")], good: [asked, calls("a"), answer("a"), { role: "assistant", content: "x" }], message: /must be a response to a preceeding message/ },
  { rule: "assistant tool_calls without their tool messages", bad: [asked, calls("a", "b"), answer("a"), asked], good: [asked, calls("a", "b"), answer("a"), answer("b"), asked], message: /The following tool_call_ids did not have response messages: b/, param: "messages.[1].role" },
  { rule: "a user message between a call and its answer", bad: [asked, calls("a"), asked, answer("a")], good: [asked, calls("a"), answer("a"), asked], message: /did not have response messages: a/ },
  { rule: "duplicate tool call ids", bad: [asked, calls("a", "a"), answer("a")], good: [asked, calls("a", "b"), answer("a"), answer("b")], message: /duplicate tool_call id 'a'/ },
  { rule: "duplicate ids across turns", bad: [asked, calls("a"), answer("a"), calls("a"), answer("a")], good: [asked, calls("a"), answer("a"), calls("b"), answer("b")], message: /duplicate tool_call id 'a'/ },
  { rule: "a call answered twice", bad: [asked, calls("a", "b"), answer("a"), answer("a"), answer("b")], good: [asked, calls("a", "b"), answer("a"), answer("b")], message: /more than one 'tool' message responds to tool_call_id 'a'/ },
];

describe("validateChatMessages (pure)", () => {
  test.each(cases.map((c) => [c.rule, c] as const))("%s: trips and control passes", (_n, c) => {
    const v = validateChatMessages(c.bad);
    expect(v?.message).toMatch(c.message);
    if (c.param) expect(v?.param).toBe(c.param);
    expect(validateChatMessages(c.good)).toBeUndefined();
  });

  test("over HTTP: a 400 with OpenAI's error body", async () => {
    const res = await fetch(`${server.baseUrl}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: [asked, answer("q")] }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", type: "invalid_request_error", param: "messages.[1].role", code: null },
    });
  });
});

describe("automatic prefix cache", () => {
  const units = (n: number, tag = "") => Array.from({ length: n }, (_, i) => `${tag}${String(i).padStart(3, "0")}`.padEnd(400, "z")); // 100 tokens each

  test("nothing below 1,024 tokens; then 1,024 + whole 128-token steps of the matched prefix", () => {
    expect(reportedCached(1023)).toBe(0);
    expect(reportedCached(1024)).toBe(1024);
    expect(reportedCached(1151)).toBe(1024);
    expect(reportedCached(1152)).toBe(1152);
  });

  test("a longer request reads the earlier one; a changed early unit reads only up to it; an idle cache expires", () => {
    const cache = new Map<string, AutoCacheEntry>();
    expect(planAutoCache("m", units(15), cache, 0)).toEqual({ promptTokens: 1500, cachedTokens: 0 });
    // 15 of 20 units match: 1,500 tokens → 1,024 + 3·128
    expect(planAutoCache("m", units(20), cache, 1)).toEqual({ promptTokens: 2000, cachedTokens: 1408 });
    const edited = units(20);
    edited[12] = "changed".padEnd(400, "q");
    expect(planAutoCache("m", edited, cache, 2).cachedTokens).toBe(1152); // 12 units = 1,200 tokens
    expect(planAutoCache("other-model", units(20), cache, 3).cachedTokens).toBe(0);
    expect(planAutoCache("m", units(20), cache, 3 + 10 * 60_000).cachedTokens).toBe(0);
    // a request below the minimum stores nothing
    const small = new Map<string, AutoCacheEntry>();
    planAutoCache("m", units(5), small, 0);
    expect(small.size).toBe(0);
  });
});
