/**
 * The fake Codex backend through pi-ai's own openai-codex-responses client: the SSE path (zstd
 * bodies, Codex headers, the account from the token, cache writes reported), the WebSocket path
 * Pi prefers (continuations with `previous_response_id` and only the new items, acted on as the
 * full request they stand for; a full request after a changed history), and the refusals Codex
 * adds (token, `store: true`, an unknown previous response) over HTTP and WebSocket.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { closeOpenAICodexWebSocketSessions, getOpenAICodexWebSocketDebugStats } from "@earendil-works/pi-ai/api/openai-codex-responses";
import { codexAccessToken, reportedCached, startFakeCodex, type JsonObject } from "../support/fake-openai/index.ts";
import { callsOf, toolResultFor, transcript, turn, user } from "./pi-ai-client.ts";

const C = "openai-codex-responses" as const;
/** The registry's compat for the GPT-5.6 Codex models. */
const COMPAT = { supportsAdditionalTools: true, supportsMidConvoSystemMessages: true, supportsOpenAIGrammarTools: true, supportsToolSearch: true };
const big = "x".repeat(6_000);
const steps = () => [
  { thinking: "I should read a.", text: "Reading.", toolCalls: [{ name: "read", input: { path: "a" } }] },
  { thinking: "Done.", text: "All read." },
  { text: "again" },
];

const server = startFakeCodex({ idNonce: "c", script: () => steps()[0]! });
afterAll(async () => {
  closeOpenAICodexWebSocketSessions();
  await server.stop();
});
const opts = (sessionId: string, transport: "sse" | "auto") => ({ apiKey: codexAccessToken(), sessionId, compat: COMPAT, transport });

describe("the SSE path", () => {
  test("a zstd body at /codex/responses with Codex's headers, store false, the tools in an additional_tools item; writes reported and read by pi-ai", async () => {
    server.setScript(steps());
    const first = await turn(C, server.baseUrl, transcript([user(`go ${big}`)]), opts("sse-1", "sse"));
    expect(first.stopReason).toBe("toolUse");
    const r = server.requests.at(-1)!;
    expect(r.transport).toBe("http");
    expect(new URL(r.url).pathname).toBe("/codex/responses");
    expect(r.headers).toMatchObject({ "content-encoding": "zstd", "chatgpt-account-id": "acct_fake", "openai-beta": "responses=experimental", originator: "pi", "session-id": "sse-1" });
    expect(r.body).toMatchObject({ store: false, prompt_cache_key: "sse-1", include: ["reasoning.encrypted_content"] });
    expect(r.body.tools).toBeUndefined();
    expect(r.body.input[0]).toMatchObject({ type: "additional_tools", role: "developer" });
    expect(r.kind).toBe("main");
    const usage = r.response!.usage;
    expect(usage.cacheWriteTokens).toBe(usage.promptTokens);
    expect(first.usage).toMatchObject({ cacheWrite: usage.promptTokens, cacheRead: 0, input: 0 });

    const second = await turn(C, server.baseUrl, transcript([user(`go ${big}`), first, ...callsOf(first).map((c) => toolResultFor(c))]), opts("sse-1", "sse"));
    const u2 = server.requests.at(-1)!.response!.usage;
    expect(second.stopReason).toBe("stop");
    expect(u2.cachedTokens).toBeGreaterThanOrEqual(1024);
    expect(u2.cacheWriteTokens).toBe(u2.promptTokens - u2.cachedTokens);
    expect(second.usage).toMatchObject({ cacheRead: u2.cachedTokens, cacheWrite: u2.cacheWriteTokens, input: 0 });
  });
});

describe("the WebSocket path (transport auto)", () => {
  let first: AssistantMessage;
  const replay = () => [user(`go ${big}`), first, ...callsOf(first).map((c) => toolResultFor(c))];

  test("the first request is a full response.create on the socket", async () => {
    server.setScript(steps());
    first = await turn(C, server.baseUrl, transcript([user(`go ${big}`)]), opts("ws-1", "auto"));
    expect(first.stopReason).toBe("toolUse");
    const r = server.requests.at(-1)!;
    expect(r.transport).toBe("websocket");
    expect(r.headers["openai-beta"]).toBe("responses_websockets=2026-02-06");
    expect(r.body.previous_response_id).toBeUndefined();
    expect(first.diagnostics ?? []).toEqual([]);
  });

  test("the next one continues it: previous_response_id and only the new items; the server acts on what a full request sends, and reads its whole prefix", async () => {
    const second = await turn(C, server.baseUrl, transcript(replay()), opts("ws-1", "auto"));
    expect(second.stopReason).toBe("stop");
    const r = server.requests.at(-1)!;
    expect(r.body.previous_response_id).toBe(server.requests.at(-2)!.response!.responseId);
    expect(r.body.input.map((i) => i.type)).toEqual(["function_call_output"]);
    expect(getOpenAICodexWebSocketDebugStats("ws-1")).toMatchObject({ deltaRequests: 1, fullContextRequests: 1, connectionsReused: 1 });
    // The same transcript sent in full over SSE: the same input the continuation stood for.
    server.setScript(steps().slice(1));
    await turn(C, server.baseUrl, transcript(replay()), opts("ws-1", "sse"));
    const full = server.requests.at(-1)!;
    expect(full.body.previous_response_id).toBeUndefined();
    expect(r.effectiveBody!.input).toEqual(full.body.input);
    // It read all of the first request back, and the full request all of the continuation (the same units).
    expect(r.response!.usage.cachedTokens).toBe(reportedCached(server.requests.at(-3)!.response!.usage.promptTokens));
    expect(full.response!.usage.cachedTokens).toBe(reportedCached(r.response!.usage.promptTokens));
  });

  test("a changed history goes out in full on the socket, and is accepted", async () => {
    server.setScript([{ text: "ok" }]);
    const edited = replay().map((m) => (m.role === "toolResult" ? { ...m, content: [{ type: "text" as const, text: "[pruned]" }] } : m));
    const third = await turn(C, server.baseUrl, transcript([...edited, second(), user("next")]), opts("ws-1", "auto"));
    expect(third.stopReason).toBe("stop");
    const r = server.requests.at(-1)!;
    expect(r.transport).toBe("websocket");
    expect(r.body.previous_response_id).toBeUndefined();
    expect(r.status).toBe(200);
  });

  const second = (): AssistantMessage => ({ ...first, content: [{ type: "text", text: "All read." }], stopReason: "stop" });
});

describe("refusals Codex adds", () => {
  const post = (body: JsonObject, headers: Record<string, string> = {}) =>
    fetch(`${server.baseUrl}/codex/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${codexAccessToken()}`, "chatgpt-account-id": "acct_fake", ...headers },
      body: JSON.stringify({ model: "gpt-5.6-terra", stream: true, store: false, input: [{ role: "user", content: [{ type: "input_text", text: "go" }] }], ...body }),
    });

  test("a token without the account, or another account, is a 401; pi-ai reports it", async () => {
    expect((await post({}, { "chatgpt-account-id": "acct_other" })).status).toBe(401);
    expect((await post({}, { authorization: "Bearer not-a-jwt" })).status).toBe(401);
    const refused = await turn(C, server.baseUrl, transcript([user("go")]), { ...opts("auth-1", "sse"), apiKey: codexAccessToken("acct_other") });
    expect(refused.stopReason).toBe("error");
    expect(refused.errorMessage).toContain("Missing or invalid ChatGPT access token");
    expect((await post({})).status).toBe(200);
  });

  test("store: true is refused; a continuation over HTTP finds nothing (store: false)", async () => {
    const stored = await post({ store: true });
    expect(stored.status).toBe(400);
    expect(((await stored.json()) as { error: { message: string } }).error.message).toBe("Store must be set to false");
    const continued = await post({ previous_response_id: "resp_x" });
    expect(((await continued.json()) as { error: { code: string } }).error.code).toBe("previous_response_not_found");
  });

  test("on the socket, an unknown previous response is an error event with its code", async () => {
    const ws = new WebSocket(`${server.baseUrl.replace("http", "ws")}/codex/responses`, { headers: { authorization: `Bearer ${codexAccessToken()}`, "chatgpt-account-id": "acct_fake" } } as never);
    await new Promise((resolve) => ws.addEventListener("open", resolve, { once: true }));
    const reply = new Promise<JsonObject>((resolve) => ws.addEventListener("message", (e) => resolve(JSON.parse(String(e.data)) as JsonObject), { once: true }));
    ws.send(JSON.stringify({ type: "response.create", model: "gpt-5.6-terra", store: false, previous_response_id: "resp_gone", input: [] }));
    expect(await reply).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
    ws.close();
    expect(server.rejected().at(-1)).toMatchObject({ transport: "websocket", errorCode: "previous_response_not_found" });
  });
});
