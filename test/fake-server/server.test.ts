/** The fake server over HTTP: stream shape, scripting, side routing, delays, the thinking rule end to end. */
import { afterEach, describe, expect, test } from "bun:test";
import {
  parseSseStream,
  PI_SUMMARIZATION_PROMPT_START,
  signThinking,
  startFakeAnthropic,
  type FakeAnthropic,
  type WireBlock,
} from "../support/fake-anthropic/index.ts";
import { assistantMsg, post, request, toolResult, userMsg, userText } from "./wire.ts";

let server: FakeAnthropic | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** Rebuild the assistant content blocks from a stream, the way a client would. */
function assemble(events: ReturnType<typeof parseSseStream>): WireBlock[] {
  const blocks: WireBlock[] = [];
  const json: string[] = [];
  for (const { data } of events) {
    const index = data.index as number;
    if (data.type === "content_block_start") {
      blocks[index] = { ...(data.content_block as WireBlock) };
      json[index] = "";
    } else if (data.type === "content_block_delta") {
      const d = data.delta as Record<string, string>;
      const b = blocks[index];
      if (d.type === "thinking_delta") b.thinking = String(b.thinking) + d.thinking;
      if (d.type === "signature_delta") b.signature = String(b.signature) + d.signature;
      if (d.type === "text_delta") b.text = String(b.text) + d.text;
      if (d.type === "input_json_delta") json[index] += d.partial_json;
    } else if (data.type === "content_block_stop" && blocks[index].type === "tool_use") {
      blocks[index].input = JSON.parse(json[index]);
    }
  }
  return blocks;
}

describe("stream shape", () => {
  test("thinking, text and parallel tool_use come back as Anthropic SSE", async () => {
    const thinking = "x".repeat(150); // 150 chars → 3 thinking_delta chunks of ≤64
    server = startFakeAnthropic({
      script: [{ thinking, text: "Looking.", toolCalls: [{ name: "read", input: { path: "a.txt" } }, { name: "bash", input: { command: "ls" } }] }],
    });
    const res = await post(server.baseUrl, request([userText("go")]));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = parseSseStream(await res.text());
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names.at(-2)).toBe("message_delta");
    expect(names.at(-1)).toBe("message_stop");
    const deltas = events.filter((e) => e.event === "content_block_delta").map((e) => (e.data.delta as { type: string }).type);
    expect(deltas.slice(0, 4)).toEqual(["thinking_delta", "thinking_delta", "thinking_delta", "signature_delta"]);
    const blocks = assemble(events);
    expect(blocks.map((b) => b.type)).toEqual(["thinking", "text", "tool_use", "tool_use"]);
    expect(blocks[0].thinking).toBe(thinking);
    expect(blocks[0].signature).toBe(signThinking(thinking));
    expect(blocks[2].input).toEqual({ path: "a.txt" });
    expect(blocks[2].id).not.toBe(blocks[3].id);
    const delta = events.at(-2)!.data as { delta: { stop_reason: string }; usage: Record<string, number> };
    expect(delta.delta.stop_reason).toBe("tool_use");
    const start = events[0].data as { message: { usage: Record<string, number> } };
    expect(Object.keys(start.message.usage).sort()).toEqual(
      ["cache_creation_input_tokens", "cache_read_input_tokens", "input_tokens", "output_tokens"].sort(),
    );
    // recorded with the raw text and the parsed body
    expect(server.requests).toHaveLength(1);
    expect(JSON.parse(server.requests[0].raw)).toEqual(server.requests[0].body);
    expect(server.requests[0].response?.toolCalls.map((c) => c.name)).toEqual(["read", "bash"]);
  });

  test("a text-only step ends the turn; no thinking when the request does not enable it", async () => {
    server = startFakeAnthropic({ script: [{ thinking: "hidden", text: "done" }] });
    const res = await post(server.baseUrl, request([userText("go")], { thinking: undefined }), "");
    const events = parseSseStream(await res.text());
    expect(assemble(events).map((b) => b.type)).toEqual(["text"]);
    expect((events.at(-2)!.data.delta as { stop_reason: string }).stop_reason).toBe("end_turn");
  });

  test("a list script that runs out answers a fallback and counts it", async () => {
    server = startFakeAnthropic({ script: [{ text: "one" }] });
    await (await post(server.baseUrl, request([userText("a")]))).text();
    expect(server.remainingSteps()).toBe(0);
    await (await post(server.baseUrl, request([userText("b")]))).text();
    expect(server.exhaustedCount()).toBe(1);
  });

  test("a scripted error is answered with its status and recorded", async () => {
    server = startFakeAnthropic({ script: [{ error: { status: 529, type: "overloaded_error", message: "busy" } }] });
    const res = await post(server.baseUrl, request([userText("a")]));
    expect(res.status).toBe(529);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe("overloaded_error");
    expect(server.rejected().map((r) => r.status)).toEqual([529]);
  });
});

describe("main vs side routing", () => {
  test("requests without Pi's tools or with Pi's summarization prompt go to the side router", async () => {
    const seen: string[] = [];
    server = startFakeAnthropic({
      script: [{ text: "main answer" }],
      sideRouter: ({ kindIndex }) => {
        seen.push(`side${kindIndex}`);
        return { text: `side answer ${kindIndex}` };
      },
    });
    await (await post(server.baseUrl, request([userText("summarize")], { tools: undefined }))).text();
    const summaryPrompt = [{ type: "text", text: `${PI_SUMMARIZATION_PROMPT_START}. Summarize.` }];
    await (await post(server.baseUrl, request([userText("summarize")], { system: summaryPrompt }))).text();
    await (await post(server.baseUrl, request([userText("work")]))).text();
    expect(server.requests.map((r) => r.kind)).toEqual(["side", "side", "main"]);
    expect(server.sideRequests().map((r) => r.kindIndex)).toEqual([0, 1]);
    expect(server.mainRequests()[0].response?.text).toBe("main answer");
    expect(seen).toEqual(["side0", "side1"]);
  });

  test("per-step and side delays hold the answer back; waitForRequest sees arrivals", async () => {
    server = startFakeAnthropic({ script: [{ text: "slow", delayMs: 300 }], sideRouter: () => ({ text: "s", delayMs: 200 }) });
    const t0 = Date.now();
    const pending = post(server.baseUrl, request([userText("go")]));
    const arrived = await server.waitForRequest((r) => r.kind === "main", 2000);
    expect(arrived.seq).toBe(0);
    await (await pending).text();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    const t1 = Date.now();
    await (await post(server.baseUrl, request([userText("x")], { tools: [] }))).text();
    expect(Date.now() - t1).toBeGreaterThanOrEqual(190);
  });
});

describe("thinking of the current tool loop, end to end", () => {
  async function firstTurn(s: FakeAnthropic) {
    const res = await post(s.baseUrl, request([userText("go")]));
    return assemble(parseSseStream(await res.text()));
  }

  test("sending the emitted turn back intact passes; dropping or editing its thinking is a 400", async () => {
    server = startFakeAnthropic({ script: () => ({ thinking: "I should list files.", toolCalls: [{ name: "bash", input: { command: "ls" } }] }) });
    const blocks = await firstTurn(server);
    const id = String(blocks[1].id);
    const intact = request([userText("go"), assistantMsg(...blocks), userMsg(toolResult(id))]);
    expect((await post(server.baseUrl, intact)).status).toBe(200);

    const dropped = request([userText("go"), assistantMsg(blocks[1]), userMsg(toolResult(id))]);
    const res = await post(server.baseUrl, dropped);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/Expected `thinking`/);

    const edited = request([userText("go"), assistantMsg({ ...blocks[0], thinking: "I should list files!" }, blocks[1]), userMsg(toolResult(id))]);
    expect((await post(server.baseUrl, edited)).status).toBe(400);

    // once a new human turn closes the loop, stripping that old thinking is allowed
    const closed = request([userText("go"), assistantMsg(blocks[1]), userMsg(toolResult(id)), assistantMsg({ type: "text", text: "ok" }), userText("next")]);
    expect((await post(server.baseUrl, closed)).status).toBe(200);
  });
});
