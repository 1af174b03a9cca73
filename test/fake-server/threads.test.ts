/**
 * Message threads on the fake Anthropic server, driven by pi-ai's own anthropic-messages client
 * with `compat.supportsMessageThreads` (its create / continue / fallback logic), and the refusal
 * codes over HTTP.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { AssistantMessage, Message } from "@earendil-works/pi-ai";
import { MESSAGE_THREADS_BETA, startFakeAnthropic, type FakeAnthropic, type MainStep, type WireRequest } from "../support/fake-anthropic/index.ts";
import { withoutCacheControl } from "../e2e/support/wire-checks.ts";
import { callsOf, toolResultFor, transcript, turn, user } from "./pi-ai-client.ts";
import { assistantMsg, request, toolResult, toolUse, userMsg, userText } from "./wire.ts";

const THREADS = { supportsMessageThreads: true };
const servers: FakeAnthropic[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

function serve(script: MainStep[], threads?: { unsupported?: boolean }): FakeAnthropic {
  const s = startFakeAnthropic({ script, idNonce: "th", ...(threads ? { threads } : {}) });
  servers.push(s);
  return s;
}

const loop: MainStep[] = [
  { thinking: "read a", toolCalls: [{ name: "read", input: { path: "a" } }] },
  { thinking: "read b", toolCalls: [{ name: "read", input: { path: "b" } }] },
  { thinking: "done", text: "Both read." },
];

/** Runs the loop through pi-ai (each request the whole transcript so far, as Pi sends it). */
async function runLoop(s: FakeAnthropic, compat?: Record<string, unknown>, between?: (i: number) => void): Promise<AssistantMessage[]> {
  const messages: Message[] = [user(`read both ${"q".repeat(5_000)}`)];
  const replies: AssistantMessage[] = [];
  for (let i = 0; i < loop.length; i++) {
    between?.(i);
    const reply = await turn("anthropic-messages", s.baseUrl, transcript(messages), { compat, sessionId: `session-${s.port}` });
    replies.push(reply);
    messages.push(reply, ...callsOf(reply).map((c) => toolResultFor(c, `contents ${i} ${"r".repeat(3_000)}`)));
  }
  return replies;
}

describe("pi-ai's thread requests", () => {
  test("create, then continue with only the new messages and no system/tools; the same full requests, usage and figures as without threads", async () => {
    const threaded = serve(loop);
    const plain = serve(loop);
    const a = await runLoop(threaded, THREADS);
    const b = await runLoop(plain);
    expect(threaded.rejected()).toEqual([]);
    const [first, ...rest] = threaded.requests;
    expect(first!.body.thread).toEqual({ type: "create" });
    expect(first!.headers["anthropic-beta"]).toContain(MESSAGE_THREADS_BETA);
    for (const r of rest) {
      expect(r.body.thread).toMatchObject({ type: "continue" });
      expect(r.body.system).toBeUndefined();
      expect(r.body.tools).toBeUndefined();
      expect(r.body.messages.map((m) => m.role)).toEqual(["user"]); // the tool result only
      expect(r.thread).toMatchObject({ type: "continue", carried: 1 });
    }
    expect(rest.map((r) => (r.body.thread as { previous_message_id: string }).previous_message_id)).toEqual(threaded.requests.slice(0, -1).map((r) => r.response!.messageId));
    // The server stands each continue for the full request Pi would have sent.
    // (String content and one text block mean the same: Pi sends the newest user message as a block, to mark it.)
    const full = (r: (typeof plain.requests)[number]) =>
      withoutCacheControl(r.effectiveBody!.messages.map((m) => (typeof m.content === "string" ? { ...m, content: [{ type: "text", text: m.content }] } : m)));
    expect(threaded.requests.map(full)).toEqual(plain.requests.map(full));
    expect(threaded.requests.map((r) => r.response!.usage)).toEqual(plain.requests.map((r) => r.response!.usage));
    expect(a.map((m) => m.usage)).toEqual(b.map((m) => m.usage));
    expect(threaded.threads.openCount()).toBe(1);
  });

  test("thread_not_found (expired): pi-ai resends the request in full as a new thread", async () => {
    const s = serve(loop);
    const replies = await runLoop(s, THREADS, (i) => i === 2 && s.threads.expireAll());
    expect(s.requests.map((r) => r.status)).toEqual([200, 200, 400, 200]);
    expect(s.rejected()[0]!.errorCode).toBe("thread_not_found");
    expect(s.requests[3]!.body.thread).toEqual({ type: "create" });
    expect(s.requests[3]!.body.system).toBeDefined();
    expect(replies[2]!.stopReason).toBe("stop");
    expect(JSON.stringify(replies[2])).toContain("anthropic_thread_fallback");
  });

  test("thread_unsupported_request: pi-ai resends without `thread` and sends none afterwards", async () => {
    const s = serve(loop, { unsupported: true });
    await runLoop(s, THREADS);
    expect(s.requests.map((r) => [r.status, (r.body.thread as { type?: string } | undefined)?.type ?? "none"])).toEqual([
      [400, "create"],
      [200, "none"],
      [200, "none"],
      [200, "none"],
    ]);
    expect(s.rejected()[0]!.errorCode).toBe("thread_unsupported_request");
  });
});

describe("thread refusals over HTTP", () => {
  const beta = { "anthropic-beta": MESSAGE_THREADS_BETA };
  const post = (s: FakeAnthropic, body: WireRequest, headers: Record<string, string> = beta) =>
    fetch(`${s.baseUrl}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const errorOf = async (res: Response) => ((await res.json()) as { error: { type: string; message: string; details?: { error_code?: string } } }).error;
  const opening = request([userText("go")], { thread: { type: "create" } });
  const cont = (id: string, extra: Partial<WireRequest> = {}) => {
    const { system: _s, tools: _t, ...rest } = request([userMsg(toolResult(`toolu_th_1_0`))], { thread: { type: "continue", previous_message_id: id }, ...extra });
    return rest as WireRequest;
  };

  test("already continued, fingerprint mismatch, unknown id, system on a continue, no beta header", async () => {
    const s = serve([{ toolCalls: [{ name: "read", input: {} }] }, { text: "a" }, { text: "b" }]);
    await (await post(s, opening)).text();
    const id = s.requests[0]!.response!.messageId;
    const mismatch = await post(s, cont(id, { thinking: { type: "enabled", budget_tokens: 2048 } }));
    expect((await errorOf(mismatch)).details?.error_code).toBe("thread_fingerprint_mismatch");
    const withSystem = await errorOf(await post(s, { ...cont(id), system: "x" }));
    expect(withSystem.message).toContain("thread");
    expect(withSystem.details).toBeUndefined();
    expect((await post(s, cont(id))).status).toBe(200);
    const again = await post(s, cont(id));
    expect(again.status).toBe(400);
    expect(await errorOf(again)).toMatchObject({ type: "invalid_request_error", details: { error_code: "thread_already_continued" } });
    expect((await errorOf(await post(s, cont("msg_unknown")))).details?.error_code).toBe("thread_not_found");
    const noBeta = await errorOf(await post(s, opening, {}));
    expect(noBeta).toEqual({ type: "invalid_request_error", message: "thread: Extra inputs are not permitted" });
  });

  test("a continue while another continue of the same reply is being answered: thread_continue_in_flight", async () => {
    // The first continue's answer waits until the test releases it (no timing involved).
    let release = () => {};
    const held = new Promise<MainStep>((resolve) => (release = () => resolve({ text: "slow" })));
    const s = startFakeAnthropic({ idNonce: "th", script: ({ kindIndex }) => (kindIndex === 0 ? { toolCalls: [{ name: "read", input: {} }] } : kindIndex === 1 ? held : { text: "c" }) });
    servers.push(s);
    await (await post(s, opening)).text();
    const id = s.requests[0]!.response!.messageId;
    const slow = post(s, cont(id));
    await s.waitForRequest((r) => r.seq === 1);
    const racing = await post(s, cont(id));
    expect((await errorOf(racing)).details?.error_code).toBe("thread_continue_in_flight");
    release();
    expect((await slow).status).toBe(200);
    expect((await errorOf(await post(s, cont(id)))).details?.error_code).toBe("thread_already_continued");
  });

  test("a continue is validated as the full request it stands for", async () => {
    const s = serve([{ toolCalls: [{ name: "read", input: {} }] }, { text: "x" }]);
    await (await post(s, opening)).text();
    const id = s.requests[0]!.response!.messageId;
    const { system: _s, tools: _t, ...orphan } = request([userMsg(toolResult("toolu_other"))], { thread: { type: "continue", previous_message_id: id } });
    const res = await post(s, orphan as WireRequest);
    expect(res.status).toBe(400);
    expect((await errorOf(res)).message).toMatch(/without `tool_result` blocks immediately after: toolu_th_1_0/);
    // refused, the reply can still be continued
    expect((await post(s, cont(id))).status).toBe(200);
    expect(s.requests.at(-1)!.effectiveBody!.messages).toEqual([userText("go"), assistantMsg(toolUse("toolu_th_1_0", "read", {})), userMsg(toolResult("toolu_th_1_0"))]);
  });

  test("a reply expires after the thread TTL on the provider's clock; `forget` loses a reply's thread at once", async () => {
    let t = 0;
    const s = startFakeAnthropic({ idNonce: "th", clock: () => t, threads: { forget: (id) => id.endsWith("_2") }, script: () => ({ toolCalls: [{ name: "read", input: {} }] }) });
    servers.push(s);
    await (await post(s, opening)).text();
    t += 5 * 60_000;
    expect((await errorOf(await post(s, cont(s.requests[0]!.response!.messageId)))).details?.error_code).toBe("thread_not_found");
    await (await post(s, opening)).text(); // reply msg_th_2: forgotten
    expect(s.threads.openCount()).toBe(0);
    const forgotten = s.requests.at(-1)!.response!.messageId;
    expect((await errorOf(await post(s, cont(forgotten)))).details?.error_code).toBe("thread_not_found");
  });
});
