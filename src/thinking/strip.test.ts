import { describe, expect, test } from "bun:test";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { stripOldThinking, withoutThinking } from "./strip.ts";
import type { ContextMessage } from "../session/messages.ts";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { Clock, assistantsOf, closedRequest, history, redactedThinking, stampsWithThinking, thinkingCount, toolLoop } from "../../test/support/thinking/conversation.ts";

const on = (keepLastTurns: number) => ({ enabled: true, keepLastTurns });

/** Six closed requests with no tools: u, a(thinking,text) x 6. Assistant stamps 1020..1120 step 20. */
function sixClosed(): ContextMessage[] {
  return history(new Clock(), 6, 0);
}

describe("stripOldThinking: live-count fallback (no boundary)", () => {
  test("disabled returns the same array, with or without a boundary", () => {
    const msgs = sixClosed();
    expect(stripOldThinking(msgs, { enabled: false, keepLastTurns: 1 })).toBe(msgs);
    expect(stripOldThinking(msgs, { enabled: false, keepLastTurns: 1 }, Number.MAX_SAFE_INTEGER)).toBe(msgs);
  });

  test("fewer than K assistant messages returns the same array", () => {
    const msgs = sixClosed();
    expect(stripOldThinking(msgs, on(6))).toBe(msgs);
    expect(stripOldThinking(msgs, on(16))).toBe(msgs);
  });

  test("strips older assistants and keeps thinking on the last K", () => {
    const msgs = sixClosed();
    const all = assistantsOf(msgs).map((m) => m.timestamp);
    const out = stripOldThinking(msgs, on(3));
    expect(out).not.toBe(msgs);
    // 6 assistants, K = 3: the last three keep thinking, the first three lose it.
    expect(stampsWithThinking(out)).toEqual(all.slice(3));
  });

  test("K = 1 keeps only the last assistant's thinking", () => {
    const msgs = sixClosed();
    const all = assistantsOf(msgs).map((m) => m.timestamp);
    expect(stampsWithThinking(stripOldThinking(msgs, on(1)))).toEqual(all.slice(5));
  });

  test("K = 0 (and negatives, NaN) are clamped to 1", () => {
    const msgs = sixClosed();
    const k1 = JSON.stringify(stripOldThinking(msgs, on(1)));
    expect(JSON.stringify(stripOldThinking(msgs, on(0)))).toBe(k1);
    expect(JSON.stringify(stripOldThinking(msgs, on(-3)))).toBe(k1);
    expect(JSON.stringify(stripOldThinking(msgs, on(Number.NaN)))).toBe(k1);
  });

  test("a trailing tool-use assistant keeps its thinking, and so does the whole current loop", () => {
    const clock = new Clock();
    const past = history(clock, 3, 0);
    const prompt = user("now fix the bug", clock.next());
    const loop = toolLoop(clock, "fix", 4); // 4 tool-use assistants, each followed by its result
    const msgs = [...past, prompt, ...loop];
    const out = stripOldThinking(msgs, on(1));
    // K = 1 would keep only the last assistant; the open loop keeps all four anyway.
    expect(stampsWithThinking(out)).toEqual(assistantsOf(loop).map((m) => m.timestamp));
    for (let i = past.length; i < msgs.length; i++) expect(out[i]).toBe(msgs[i]);
    // the three closed requests lost their thinking
    for (const m of assistantsOf(out.slice(0, past.length))) expect(thinkingCount(m)).toBe(0);
  });

  test("text and tool calls are kept, block objects untouched", () => {
    const clock = new Clock();
    const a = assistant([thinking("why"), text("I will read"), call("c1", "read", { path: "x" })], clock.next());
    const msgs: ContextMessage[] = [user("go", clock.next() - 20), a, result("c1", "read", "ok", clock.next()), user("next", clock.next()), assistant([thinking("t"), text("ok")], clock.next())];
    const out = stripOldThinking(msgs, on(1));
    const stripped = out[1] as AssistantMessage;
    expect(stripped.content).toHaveLength(2);
    expect(stripped.content[0]).toBe(a.content[1]!);
    expect(stripped.content[1]).toBe(a.content[2]!);
  });

  test("all-or-nothing: every thinking block goes, redacted ones and signatures included", () => {
    const clock = new Clock();
    const multi = assistant(
      [thinking("first", "sig-a"), text("partial"), redactedThinking("opaque-payload"), thinking("second", "sig-b"), call("c1", "bash")],
      clock.next(),
    );
    const msgs: ContextMessage[] = [multi, result("c1", "bash", "ok", clock.next()), user("more", clock.next()), assistant([text("fine")], clock.next())];
    const out = stripOldThinking(msgs, on(1));
    const stripped = out[0] as AssistantMessage;
    expect(stripped.content.map((b) => b.type)).toEqual(["text", "toolCall"]);
    expect(JSON.stringify(stripped)).not.toContain("sig-");
    expect(JSON.stringify(stripped)).not.toContain("opaque-payload");
  });

  test("no thinking anywhere returns the same array", () => {
    const clock = new Clock();
    const msgs: ContextMessage[] = [];
    for (let i = 0; i < 5; i++) msgs.push(user(`q${i}`, clock.next()), assistant([text(`a${i}`)], clock.next()));
    expect(stripOldThinking(msgs, on(1))).toBe(msgs);
    expect(stripOldThinking(msgs, on(1), Number.MAX_SAFE_INTEGER)).toBe(msgs);
  });

  test("idempotent: a second pass changes nothing and returns its input", () => {
    const clock = new Clock();
    const msgs = [...history(clock, 5, 2), user("again", clock.next()), ...toolLoop(clock, "x", 2)];
    const once = stripOldThinking(msgs, on(2));
    expect(once).not.toBe(msgs);
    expect(stripOldThinking(once, on(2))).toBe(once);
  });

  test("order, length, non-assistant references and message fields are preserved; input not mutated", () => {
    const clock = new Clock();
    const msgs = history(clock, 5, 2);
    const before = structuredClone(msgs);
    const out = stripOldThinking(msgs, on(2));
    expect(out).toHaveLength(msgs.length);
    expect(msgs).toEqual(before);
    for (let i = 0; i < msgs.length; i++) {
      const m = msgs[i]!;
      if (m.role !== "assistant") {
        expect(out[i]).toBe(m);
        continue;
      }
      const o = out[i] as AssistantMessage;
      if (o === m) continue;
      expect(o).toEqual(withoutThinking(m));
      const { content: _c, ...fields } = o;
      const { content: _d, ...originalFields } = m;
      expect(fields).toEqual(originalFields);
    }
  });

  test("a thinking-only assistant message keeps its place with empty content", () => {
    const clock = new Clock();
    const thinkingOnly = assistant([thinking("hmm, nothing to say")], clock.next(), { stopReason: "length" });
    const msgs: ContextMessage[] = [user("q", clock.next() - 20), thinkingOnly, user("q2", clock.next()), assistant([text("a")], clock.next())];
    const out = stripOldThinking(msgs, on(1));
    expect(out).toHaveLength(4);
    const stripped = out[1] as AssistantMessage;
    expect(stripped.content).toEqual([]);
    expect(stripped.stopReason).toBe("length");
    expect(stripped.timestamp).toBe(thinkingOnly.timestamp);
  });

  test("messages produced through the OpenAI Responses APIs are never stripped (id-paired reasoning)", () => {
    const clock = new Clock();
    const responses = { ...assistant([thinking("enc", '{"type":"reasoning","id":"rs_1"}'), call("c1|fc_1", "read")], clock.next()), api: "openai-responses" } as AssistantMessage;
    const msgs: ContextMessage[] = [responses, result("c1|fc_1", "read", "ok", clock.next()), ...closedRequest(clock, "later", 0)];
    expect(stripOldThinking(msgs, on(1))).toBe(msgs);
    expect(stripOldThinking(msgs, on(1), Number.MAX_SAFE_INTEGER)).toBe(msgs);
  });
});

describe("stripOldThinking: flush-gated boundary", () => {
  test("strips exactly the assistants with timestamp < boundary", () => {
    const msgs = sixClosed();
    const stamps = assistantsOf(msgs).map((m) => m.timestamp);
    const boundary = stamps[2]!; // equal timestamp is not older: kept
    const out = stripOldThinking(msgs, on(1), boundary);
    expect(stampsWithThinking(out)).toEqual(stamps.slice(2));
    // one below the boundary moves the cut by one message
    expect(stampsWithThinking(stripOldThinking(msgs, on(1), boundary + 1))).toEqual(stamps.slice(3));
  });

  test("the boundary replaces the live count: K does not matter", () => {
    const msgs = sixClosed();
    const stamps = assistantsOf(msgs).map((m) => m.timestamp);
    const a = JSON.stringify(stripOldThinking(msgs, on(1), stamps[1]!));
    expect(JSON.stringify(stripOldThinking(msgs, on(64), stamps[1]!))).toBe(a);
    expect(stampsWithThinking(JSON.parse(a))).toEqual(stamps.slice(1));
  });

  test("a boundary older than every assistant returns the same array", () => {
    const msgs = sixClosed();
    expect(stripOldThinking(msgs, on(1), 0)).toBe(msgs);
  });

  test("the current loop is untouched even when its timestamps are older than the boundary", () => {
    const clock = new Clock();
    const past = history(clock, 3, 1);
    const loop = [user("now this", clock.next()), ...toolLoop(clock, "now", 3)];
    const msgs = [...past, ...loop];
    const out = stripOldThinking(msgs, on(1), Number.MAX_SAFE_INTEGER);
    for (let i = past.length; i < msgs.length; i++) expect(out[i]).toBe(msgs[i]);
    for (const m of assistantsOf(out.slice(0, past.length))) expect(thinkingCount(m)).toBe(0);
  });

  test("the last assistant keeps its thinking even after a user message closes its cycle", () => {
    const clock = new Clock();
    const msgs = [...history(clock, 2, 0), user("and now?", clock.next())];
    const last = msgs[msgs.length - 2]!;
    const out = stripOldThinking(msgs, on(1), Number.MAX_SAFE_INTEGER);
    expect(out[out.length - 2]).toBe(last);
    expect(stampsWithThinking(out)).toEqual([(last as AssistantMessage).timestamp]);
  });

  test("an image-only or tool-result user turn does not close the loop", () => {
    const clock = new Clock();
    const a1 = assistant([thinking("look"), call("c1", "screenshot")], clock.next());
    const msgs: ContextMessage[] = [
      user("start", clock.next() - 20),
      a1,
      result("c1", "screenshot", "ok", clock.next()),
      { role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: clock.next() },
      assistant([thinking("next"), call("c2", "read")], clock.next()),
      result("c2", "read", "ok", clock.next()),
    ];
    expect(stripOldThinking(msgs, on(1), Number.MAX_SAFE_INTEGER)).toBe(msgs);
  });

  test("an assistant without a timestamp is left alone", () => {
    const clock = new Clock();
    const noStamp = { ...assistant([thinking("t"), text("x")], 0) } as Partial<AssistantMessage>;
    delete noStamp.timestamp;
    const msgs = [noStamp as ContextMessage, ...closedRequest(clock, "later", 0)];
    expect(stripOldThinking(msgs, on(1), Number.MAX_SAFE_INTEGER)).toBe(msgs);
  });

  test("null and NaN boundaries fall back to the live count", () => {
    const msgs = sixClosed();
    const live = JSON.stringify(stripOldThinking(msgs, on(2)));
    expect(JSON.stringify(stripOldThinking(msgs, on(2), null))).toBe(live);
    expect(JSON.stringify(stripOldThinking(msgs, on(2), Number.NaN))).toBe(live);
  });
});
