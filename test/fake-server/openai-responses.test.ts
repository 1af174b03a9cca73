/**
 * The fake OpenAI Responses server: pi-ai's own client reads its stream and replays its turns;
 * each refusal rule trips on a request that breaks it and passes its control, on the pure
 * validator and over HTTP with OpenAI's error body.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { encryptReasoning, startFakeResponses, validateResponsesInput, type JsonObject } from "../support/fake-openai/index.ts";
import { callsOf, toolResultFor, transcript, turn, user } from "./pi-ai-client.ts";

const server = startFakeResponses({
  idNonce: "t",
  script: [
    { thinking: "I should read a.", text: "Reading.", toolCalls: [{ name: "read", input: { path: "a" } }, { name: "bash", input: { command: "ls" } }] },
    { thinking: "Done.", text: "All read." },
    { thinking: "Again.", toolCalls: [{ name: "read", input: { path: "b" } }] },
  ],
});
afterAll(() => server.stop());

const big = "x".repeat(6_000); // ~1,500 tokens: above the 1,024-token cache minimum

describe("stream and replay through pi-ai's openai-responses client", () => {
  let first: AssistantMessage;

  test("reasoning item, text with its item id, function calls with call and item ids, usage", async () => {
    first = await turn("openai-responses", server.baseUrl, transcript([user(`go ${big}`)]));
    expect(first.stopReason).toBe("toolUse");
    const [thinking, text, ...calls] = first.content;
    expect(thinking).toMatchObject({ type: "thinking", thinking: "I should read a." });
    const item = JSON.parse(String((thinking as { thinkingSignature?: string }).thinkingSignature)) as JsonObject;
    expect(item).toEqual({ type: "reasoning", id: "rs_t_1", summary: [{ type: "summary_text", text: "I should read a." }], encrypted_content: encryptReasoning("rs_t_1") });
    expect(text).toMatchObject({ type: "text", text: "Reading.", textSignature: JSON.stringify({ v: 1, id: "msg_t_1" }) });
    expect(calls.map((c) => (c as { id: string }).id)).toEqual(["call_t_1_0|fc_t_1_0", "call_t_1_1|fc_t_1_1"]);
    expect(first.usage.cacheRead).toBe(0);
    expect(first.usage.input).toBe(server.requests[0]!.response!.usage.promptTokens);
  });

  test("pi-ai's replay of the turn is accepted and reads the cached prefix in 128-token steps", async () => {
    const replay = transcript([user(`go ${big}`), first, ...callsOf(first).map((c) => toolResultFor(c))]);
    const second = await turn("openai-responses", server.baseUrl, replay);
    expect(second.stopReason).toBe("stop");
    const sent = server.requests[1]!.body.input.map((i) => String(i.type ?? i.role));
    expect(sent).toEqual(["developer", "user", "reasoning", "message", "function_call", "function_call", "function_call_output", "function_call_output"]);
    const usage = server.requests[1]!.response!.usage;
    expect(usage.cachedTokens).toBeGreaterThanOrEqual(1024);
    expect((usage.cachedTokens - 1024) % 128).toBe(0);
    expect(second.usage.cacheRead).toBe(usage.cachedTokens);
    expect(second.usage.input).toBe(usage.promptTokens - usage.cachedTokens);
  });

  test("the turn replayed without its reasoning is refused, and pi-ai reports OpenAI's message", async () => {
    const stripped = { ...first, content: first.content.filter((b) => b.type !== "thinking") };
    const replay = transcript([user(`go ${big}`), stripped, ...callsOf(first).map((c) => toolResultFor(c))]);
    const refused = await turn("openai-responses", server.baseUrl, replay);
    expect(refused.stopReason).toBe("error");
    expect(refused.errorMessage).toContain("Item 'msg_t_1' of type 'message' was provided without its required 'reasoning' item: 'rs_t_1'.");
    expect(server.rejected().at(-1)!.status).toBe(400);
  });
});

/** A reasoning item; `null` leaves its encrypted content out. */
const rs = (id: string, encrypted: string | null = encryptReasoning(id)): JsonObject => ({
  type: "reasoning",
  id,
  summary: [],
  ...(encrypted !== null ? { encrypted_content: encrypted } : {}),
});
const call = (callId: string, id?: string): JsonObject => ({ type: "function_call", ...(id ? { id } : {}), call_id: callId, name: "read", arguments: "{}" });
const output = (callId: string): JsonObject => ({ type: "function_call_output", call_id: callId, output: "ok" });
const said = (id: string): JsonObject => ({ type: "message", role: "assistant", id, content: [{ type: "output_text", text: "hi", annotations: [] }], status: "completed" });
const ask: JsonObject = { role: "user", content: [{ type: "input_text", text: "go" }] };

const paired = new Map([
  ["fc_1", "rs_1"],
  ["msg_1", "rs_1"],
]);

type Case = { rule: string; bad: JsonObject[]; good: JsonObject[]; message: RegExp; code?: string };

const cases: Case[] = [
  { rule: "duplicate item ids", bad: [ask, said("msg_9"), said("msg_9")], good: [ask, said("msg_9"), said("msg_8")], message: /Duplicate item found with id msg_9/ },
  { rule: "duplicate call ids", bad: [ask, call("c1"), call("c1"), output("c1")], good: [ask, call("c1"), call("c2"), output("c1"), output("c2")], message: /Duplicate value for 'call_id' of function_call: c1/ },
  { rule: "a call answered twice", bad: [ask, call("c1"), output("c1"), output("c1")], good: [ask, call("c1"), output("c1")], message: /function_call_output: c1/ },
  { rule: "a function call output without its call", bad: [ask, output("c1")], good: [ask, call("c1"), output("c1")], message: /No tool call found for function call output with call_id c1\./ },
  { rule: "an output before its call", bad: [ask, output("c1"), call("c1")], good: [ask, call("c1"), output("c1")], message: /No tool call found for function call output with call_id c1/ },
  { rule: "a function call without its output", bad: [ask, call("c1"), call("c2"), output("c1")], good: [ask, call("c1"), call("c2"), output("c1"), output("c2")], message: /No tool output found for function call c2\./ },
  { rule: "altered encrypted reasoning", bad: [ask, rs("rs_1", encryptReasoning("rs_1") + "x"), call("c1", "fc_1"), output("c1")], good: [ask, rs("rs_1"), call("c1", "fc_1"), output("c1")], message: /The encrypted content for item rs_1 could not be verified\./, code: "invalid_encrypted_content" },
  { rule: "encrypted content of another item", bad: [ask, rs("rs_1", encryptReasoning("rs_2")), call("c1", "fc_1"), output("c1")], good: [ask, rs("rs_1"), call("c1", "fc_1"), output("c1")], message: /could not be verified/, code: "invalid_encrypted_content" },
  { rule: "reasoning without encrypted content (store: false)", bad: [ask, rs("rs_1", null), call("c1", "fc_1"), output("c1")], good: [ask, rs("rs_1"), call("c1", "fc_1"), output("c1")], message: /Item with id 'rs_1' not found\. Items are not persisted when `store` is set to false/ },
  { rule: "reasoning without its following item", bad: [ask, rs("rs_1"), ask], good: [ask, rs("rs_1"), said("msg_1"), ask], message: /Item 'rs_1' of type 'reasoning' was provided without its required following item\./ },
  { rule: "a function call sent without the reasoning it came with", bad: [ask, call("c1", "fc_1"), output("c1")], good: [ask, rs("rs_1"), call("c1", "fc_1"), output("c1")], message: /Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_1'\./ },
  { rule: "an assistant message sent without the reasoning it came with", bad: [ask, said("msg_1"), ask], good: [ask, rs("rs_1"), said("msg_1"), ask], message: /Item 'msg_1' of type 'message' was provided without its required 'reasoning' item: 'rs_1'/ },
  // Without its id (pi-ai drops ids of another model's calls) the item is not paired.
  { rule: "a call without an item id is not paired", bad: [ask, call("c1", "fc_1"), output("c1")], good: [ask, call("c1"), output("c1")], message: /without its required 'reasoning' item/ },
];

describe("validateResponsesInput (pure)", () => {
  test.each(cases.map((c) => [c.rule, c] as const))("%s: trips and control passes", (_n, c) => {
    const opts = { pairedReasoningOf: (id: string) => paired.get(id) };
    const v = validateResponsesInput(c.bad, opts);
    expect(v?.message).toMatch(c.message);
    expect(v?.code).toBe(c.code);
    expect(validateResponsesInput(c.good, opts)).toBeUndefined();
  });
});

describe("refusals over HTTP", () => {
  const s = startFakeResponses({ script: () => ({ text: "fine" }) });
  afterAll(() => s.stop());
  const post = (input: JsonObject[]) =>
    fetch(`${s.baseUrl}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-5.2", input, stream: true, store: false }) });

  test("a 400 with OpenAI's error body (message, type, param, code), recorded; the control streams", async () => {
    const bad = await post([ask, output("c1")]);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: { message: "No tool call found for function call output with call_id c1.", type: "invalid_request_error", param: "input", code: null } });
    const enc = await post([ask, rs("rs_x", "forged"), said("msg_x")]);
    expect(((await enc.json()) as { error: { code: string } }).error.code).toBe("invalid_encrypted_content");
    expect(s.rejected().map((r) => r.errorCode ?? null)).toEqual([null, "invalid_encrypted_content"]);
    const good = await post([ask, call("c1"), output("c1")]);
    expect(good.status).toBe(200);
    expect(good.headers.get("content-type")).toContain("text/event-stream");
    expect(await good.text()).toContain("event: response.completed");
  });

  test("no reasoning when the request asks for none (effort 'none')", async () => {
    const quiet = startFakeResponses({ script: [{ thinking: "hidden", text: "hi" }] });
    const res = await fetch(`${quiet.baseUrl}/v1/responses`, { method: "POST", body: JSON.stringify({ model: "m", input: [ask], reasoning: { effort: "none" } }) });
    expect(await res.text()).not.toContain('"type":"reasoning"');
    expect(quiet.requests[0]!.response!.reasoning).toBeUndefined();
    await quiet.stop();
  });
});
