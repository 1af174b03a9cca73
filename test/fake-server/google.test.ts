/**
 * The fake Google Generative AI server: pi-ai's own google-generative-ai client (through
 * @google/genai) reads its stream and replays its turns; each refusal rule trips on a request
 * that breaks it and passes its control, on the pure validator and over HTTP with Google's
 * error body; implicit caching reads exact prefixes from the minimum on, with no write.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { signPart, startFakeGoogle, validateGeminiContents, type GeminiContent, type GeminiPart } from "../support/fake-google/index.ts";
import { callsOf, toolResultFor, transcript, turn, user } from "./pi-ai-client.ts";

const big = "x".repeat(6_000); // ~1,500 tokens: above the 1,024-token implicit-cache minimum
const G = "google-generative-ai" as const;

describe("stream and replay through pi-ai's google-generative-ai client (Gemini 3)", () => {
  const server = startFakeGoogle({
    idNonce: "t",
    script: [
      { thinking: "I should read a.", text: "Reading.", toolCalls: [{ name: "read", input: { path: "a" } }, { name: "bash", input: { command: "ls" } }] },
      { thinking: "Done.", text: "All read." },
      { text: "again" },
      { text: "and again" },
    ],
  });
  afterAll(() => server.stop());
  let first: AssistantMessage;
  const answered = () => [user(`go ${big}`), first, ...callsOf(first).map((c) => toolResultFor(c))];

  test("thought, text, function calls with ids, the signature on the first call, usage", async () => {
    first = await turn(G, server.baseUrl, transcript([user(`go ${big}`)]));
    expect(server.requests[0]!.url).toContain("/v1beta/models/gemini-3-flash-preview:streamGenerateContent?alt=sse");
    expect(server.requests[0]!.headers["x-goog-api-key"]).toBe("fake-key");
    expect(first.stopReason).toBe("toolUse");
    const [thinking, text, call1, call2] = first.content as unknown as Array<Record<string, unknown>>;
    expect(thinking).toMatchObject({ type: "thinking", thinking: "I should read a." });
    expect(text).toMatchObject({ type: "text", text: "Reading." });
    expect(call1).toMatchObject({ type: "toolCall", id: "call_t_1_0", name: "read", arguments: { path: "a" } });
    expect(call1!.thoughtSignature).toBe(signPart({ functionCall: { name: "read", args: { path: "a" }, id: "call_t_1_0" } }));
    expect(call2).toMatchObject({ type: "toolCall", id: "call_t_1_1" });
    expect(call2!.thoughtSignature).toBeUndefined();
    const usage = server.requests[0]!.response!.usage;
    expect(first.usage).toMatchObject({ input: usage.promptTokens, cacheRead: 0, cacheWrite: 0, reasoning: usage.thoughtsTokens });
  });

  test("pi-ai's replay is accepted: one user content holds both responses, with the call ids; the whole previous prompt is read back, exactly", async () => {
    const second = await turn(G, server.baseUrl, transcript(answered()));
    expect(second.stopReason).toBe("stop");
    const contents = server.requests[1]!.body.contents;
    expect(contents.map((c) => c.role)).toEqual(["user", "model", "user"]);
    expect(contents[1]!.parts.map((p) => Object.keys(p).sort().join("+"))).toEqual(["text+thought", "text", "functionCall+thoughtSignature", "functionCall"]);
    expect(contents[2]!.parts.map((p) => p.functionResponse?.id)).toEqual(["call_t_1_0", "call_t_1_1"]);
    const usage = server.requests[1]!.response!.usage;
    expect(usage.cachedTokens).toBe(server.requests[0]!.response!.usage.promptTokens);
    expect(second.usage).toMatchObject({ cacheRead: usage.cachedTokens, input: usage.promptTokens - usage.cachedTokens, cacheWrite: 0 });
  });

  test("the current turn's call without its signature is refused, and pi-ai reports Google's message", async () => {
    const unsigned = { ...first, content: first.content.map((b) => (b.type === "toolCall" ? { ...b, thoughtSignature: undefined } : b)) };
    const refused = await turn(G, server.baseUrl, transcript([user(`go ${big}`), unsigned, ...callsOf(first).map((c) => toolResultFor(c))]));
    expect(refused.stopReason).toBe("error");
    expect(refused.errorMessage).toContain("Function call is missing a thought_signature in functionCall parts.");
    expect(server.rejected().at(-1)!.status).toBe(400);
  });

  test("the same turn without its thought parts (the strip) is accepted; so is an unsigned call in an earlier turn", async () => {
    const thoughtless = { ...first, content: first.content.filter((b) => b.type !== "thinking") };
    const stripped = await turn(G, server.baseUrl, transcript([user(`go ${big}`), thoughtless, ...callsOf(first).map((c) => toolResultFor(c))]));
    expect(stripped.stopReason).toBe("stop");
    const unsigned = { ...first, content: first.content.map((b) => (b.type === "toolCall" ? { ...b, thoughtSignature: undefined } : b)) };
    const later = await turn(G, server.baseUrl, transcript([user(`go ${big}`), unsigned, ...callsOf(first).map((c) => toolResultFor(c)), user("next")]));
    expect(later.stopReason).toBe("stop");
  });
});

describe("Gemini 2.5: no call ids, signatures not checked", () => {
  const server = startFakeGoogle({ idNonce: "f", script: [{ thinking: "t", toolCalls: [{ name: "read", input: { path: "a" } }] }, { text: "ok" }] });
  afterAll(() => server.stop());

  test("pi-ai names its own ids; a replay without the signature is accepted", async () => {
    const first = await turn(G, server.baseUrl, transcript([user(`go ${big}`)]), { modelId: "gemini-2.5-flash" });
    expect(server.requests[0]!.response!.parts.find((p) => p.functionCall)!.functionCall!.id).toBeUndefined();
    const unsigned = { ...first, content: first.content.map((b) => (b.type === "toolCall" ? { ...b, thoughtSignature: undefined } : b)) };
    const second = await turn(G, server.baseUrl, transcript([user(`go ${big}`), unsigned, ...callsOf(first).map((c) => toolResultFor(c))]), { modelId: "gemini-2.5-flash" });
    expect(second.stopReason).toBe("stop");
    expect(server.requests[1]!.body.contents[2]!.parts[0]!.functionResponse).toEqual({ name: "read", response: { output: "ok" } });
  });
});

const ask: GeminiContent = { role: "user", parts: [{ text: "go" }] };
const fc = (name: string, id?: string, signed = true): GeminiPart => {
  const part: GeminiPart = { functionCall: { name, args: {}, ...(id ? { id } : {}) } };
  return signed ? { ...part, thoughtSignature: signPart(part) } : part;
};
const calls = (...parts: GeminiPart[]): GeminiContent => ({ role: "model", parts });
const fr = (name: string, id?: string): GeminiPart => ({ functionResponse: { name, response: { output: "ok" }, ...(id ? { id } : {}) } });
const answers = (...parts: GeminiPart[]): GeminiContent => ({ role: "user", parts });
const said = (text: string): GeminiContent => ({ role: "model", parts: [{ text }] });

type Case = { rule: string; bad: GeminiContent[]; good: GeminiContent[]; message: RegExp };

const cases: Case[] = [
  { rule: "a signature that is not base64", bad: [ask, { role: "model", parts: [{ text: "hi", thoughtSignature: "not base64!" }] }, ask], good: [ask, { role: "model", parts: [{ text: "hi", thoughtSignature: "AAAA" }] }, ask], message: /Invalid value at 'contents\[1\]\.parts\[0\]\.thought_signature' \(TYPE_BYTES\), Base64 decoding failed/ },
  { rule: "a function call turn after a model turn", bad: [ask, said("hm"), calls(fc("read", "c1")), answers(fr("read", "c1"))], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1"))], message: /function call turn comes immediately after a user turn or after a function response turn/ },
  { rule: "a call without its response", bad: [ask, calls(fc("read", "c1")), ask], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1")), ask], message: /number of function response parts is equal to the number of function call parts/ },
  { rule: "a call left open at the end", bad: [ask, calls(fc("read", "c1"))], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1"))], message: /number of function response parts is equal/ },
  { rule: "one of two calls answered", bad: [ask, calls(fc("read", "c1"), fc("bash", "c2", false)), answers(fr("read", "c1"))], good: [ask, calls(fc("read", "c1"), fc("bash", "c2", false)), answers(fr("read", "c1"), fr("bash", "c2"))], message: /number of function response parts is equal/ },
  { rule: "a response without its call", bad: [ask, said("hm"), answers(fr("read", "c1"))], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1"))], message: /function response turn comes immediately after a function call turn/ },
  { rule: "a response for another call id", bad: [ask, calls(fc("read", "c1")), answers(fr("read", "c9"))], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1"))], message: /Function response 'c9' does not answer a function call/ },
  { rule: "a response for another function (no ids)", bad: [ask, calls(fc("read")), answers(fr("bash"))], good: [ask, calls(fc("read")), answers(fr("read"))], message: /Function response 'bash' does not answer/ },
  { rule: "the current turn's call without its signature", bad: [ask, calls(fc("read", "c1", false)), answers(fr("read", "c1"))], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1"))], message: /Function call is missing a thought_signature in functionCall parts\..*`default_api:read` , position 2/ },
  { rule: "a later step of the current turn without its signature", bad: [ask, calls(fc("read", "c1")), answers(fr("read", "c1")), calls(fc("bash", "c2", false)), answers(fr("bash", "c2"))], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1")), calls(fc("bash", "c2")), answers(fr("bash", "c2"))], message: /missing a thought_signature/ },
  { rule: "a signature moved to another call", bad: [ask, calls({ ...fc("read", "c1", false), thoughtSignature: signPart({ functionCall: { name: "bash", args: {}, id: "c2" } }) }), answers(fr("read", "c1"))], good: [ask, calls(fc("read", "c1")), answers(fr("read", "c1"))], message: /^Corrupted thought signature\.$/ },
  { rule: "an unsigned call in an earlier turn is not checked", bad: [ask, calls(fc("read", "c1", false)), answers(fr("read", "c1"))], good: [ask, calls(fc("read", "c1", false)), answers(fr("read", "c1")), said("done"), ask], message: /missing a thought_signature/ },
];

describe("validateGeminiContents (pure)", () => {
  const opts = { requireSignatures: true, issuedFor: (part: GeminiPart, s: string) => s === signPart(part) };
  test.each(cases.map((c) => [c.rule, c] as const))("%s: trips and control passes", (_n, c) => {
    expect(validateGeminiContents(c.bad, opts)?.message).toMatch(c.message);
    expect(validateGeminiContents(c.good, opts)).toBeUndefined();
  });

  test("signatures are not checked on a model that does not validate them", () => {
    expect(validateGeminiContents([ask, calls(fc("read", "c1", false)), answers(fr("read", "c1"))], { ...opts, requireSignatures: false })).toBeUndefined();
  });
});

describe("over HTTP", () => {
  const s = startFakeGoogle({ script: () => ({ text: "fine" }) });
  afterAll(() => s.stop());
  const post = (contents: GeminiContent[], model = "gemini-3-flash-preview") =>
    fetch(`${s.baseUrl}/v1beta/models/${model}:streamGenerateContent?alt=sse`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ contents }) });

  test("a 400 with Google's error body, recorded; the control streams; an unknown path is a 404", async () => {
    const bad = await post([ask, said("hm"), answers(fr("read", "c1"))]);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: { code: 400, message: "Please ensure that function response turn comes immediately after a function call turn.", status: "INVALID_ARGUMENT" } });
    expect(s.rejected()).toHaveLength(1);
    const good = await post([ask]);
    expect(good.status).toBe(200);
    expect(good.headers.get("content-type")).toContain("text/event-stream");
    expect(await good.text()).toMatch(/^data: \{"candidates":.*"finishReason":"STOP".*"usageMetadata":\{"promptTokenCount":\d+,"candidatesTokenCount":\d+,"totalTokenCount":\d+\}/);
    expect((await fetch(`${s.baseUrl}/v1beta/models/m:generateContent`, { method: "POST", body: "{}" })).status).toBe(404);
  });

  test("implicit cache: nothing below the minimum, exact prefixes above it, up to the first change; 4096 on a Pro model", async () => {
    const long = (n: number): GeminiContent => ({ role: "user", parts: [{ text: "y".repeat(n) }] });
    const usage = () => s.requests.at(-1)!.response!.usage;
    await post([long(2_000), said("a"), ask]);
    await post([long(2_000), said("a"), ask]);
    expect(usage().cachedTokens).toBe(0); // ~520 tokens: below 1024
    await post([long(6_000), said("a"), ask]);
    const whole = usage().promptTokens;
    await post([long(6_000), said("a"), ask, said("b"), ask]);
    expect(usage().cachedTokens).toBe(whole);
    await post([long(6_000), said("CHANGED"), ask]);
    expect(usage().cachedTokens).toBeGreaterThan(1024);
    expect(usage().cachedTokens).toBeLessThan(whole);
    await post([long(6_000), said("a"), ask], "gemini-3.1-pro-preview");
    await post([long(6_000), said("a"), ask], "gemini-3.1-pro-preview");
    expect(usage().cachedTokens).toBe(0); // ~1,500 tokens: below Pro's 4096
  });
});
