/**
 * The bug the flush-gated boundary fixes: a keep-window recomputed from the live count on
 * every render slides one turn per render and rewrites a message deep in history, so the
 * cached prefix is lost on every call of a tool loop. With a boundary fixed between flushes,
 * each render of a growing tool loop must extend the previous one: the previous render is a
 * byte-identical prefix of the next, both as messages and as pi-ai's Anthropic wire body.
 */
import { describe, expect, test } from "bun:test";
import { stripOldThinking } from "./strip.ts";
import { computeThinkingBoundary } from "./boundary.ts";
import type { ContextMessage } from "../session/messages.ts";
import { user } from "../../test/support/message-factory.ts";
import { anthropicPayload, type WireMessage } from "../../test/support/thinking/anthropic-wire.ts";
import { Clock, assistantsOf, history, thinkingCount, toolLoop } from "../../test/support/thinking/conversation.ts";

const KEEP = 2;
const RENDERS = 8;

/** History of 6 closed requests (2 tool steps each), a new prompt, and an 8-step tool loop. */
function scenario() {
  const clock = new Clock();
  const past = history(clock, 6, 2);
  const prompt = user("next task", clock.next());
  const loop = toolLoop(clock, "task", RENDERS);
  // The flush at the end of the previous request computed the boundary over the raw branch.
  const boundary = computeThinkingBoundary(assistantsOf(past).map((m) => m.timestamp), KEEP);
  /** Render i: the context sent after the i-th tool result of the loop (i = 0: just the prompt). */
  const render = (i: number): ContextMessage[] => [...past, prompt, ...loop.slice(0, 2 * i)];
  return { past, render, boundary };
}

function withoutCacheMarks(messages: WireMessage[]): WireMessage[] {
  return JSON.parse(JSON.stringify(messages, (key, value) => (key === "cache_control" ? undefined : value)));
}

describe("prefix stability across a growing tool loop", () => {
  test("with a fixed boundary each render's messages are a byte-identical prefix of the next", () => {
    const { past, render, boundary } = scenario();
    expect(boundary).toBeDefined();
    const outputs = Array.from({ length: RENDERS + 1 }, (_, i) => stripOldThinking(render(i), { enabled: true, keepLastTurns: KEEP }, boundary));
    const historicalPrefix = JSON.stringify(outputs[0]!.slice(0, past.length + 1));
    for (let i = 1; i < outputs.length; i++) {
      const prev = outputs[i - 1]!;
      expect(JSON.stringify(outputs[i]!.slice(0, past.length + 1))).toBe(historicalPrefix);
      expect(JSON.stringify(outputs[i]!.slice(0, prev.length))).toBe(JSON.stringify(prev));
    }
    // and the strip did act on history: 18 past assistants, K = 2, so 16 lost their thinking
    const strippedPast = assistantsOf(outputs[0]!.slice(0, past.length)).filter((m) => thinkingCount(m) === 0);
    expect(strippedPast).toHaveLength(16);
  });

  test("the live-count fallback on the same loop rewrites history (the bug this design removes)", () => {
    const { past, render } = scenario();
    const outputs = Array.from({ length: RENDERS + 1 }, (_, i) => stripOldThinking(render(i), { enabled: true, keepLastTurns: KEEP }));
    const prefixes = new Set(outputs.map((o) => JSON.stringify(o.slice(0, past.length))));
    expect(prefixes.size).toBeGreaterThan(1);
  });

  test("on the wire (pi-ai's Anthropic serializer) the previous render is a prefix of the next, marks aside", async () => {
    const { render, boundary } = scenario();
    let previous: WireMessage[] | undefined;
    for (let i = 1; i <= RENDERS; i++) {
      const sent = stripOldThinking(render(i), { enabled: true, keepLastTurns: KEEP }, boundary);
      const wire = withoutCacheMarks((await anthropicPayload(sent)).messages);
      if (previous) expect(JSON.stringify(wire.slice(0, previous.length))).toBe(JSON.stringify(previous));
      previous = wire;
    }
  });

  test("the current loop goes out on the wire unchanged, signatures included", async () => {
    const { render, boundary } = scenario();
    const messages = render(3);
    const sent = stripOldThinking(messages, { enabled: true, keepLastTurns: KEEP }, boundary);
    const [rawWire, strippedWire] = [await anthropicPayload(messages), await anthropicPayload(sent)];
    // The last 7 wire messages are the prompt and 3 x (tool_use, tool_result): identical.
    expect(JSON.stringify(strippedWire.messages.slice(-7))).toBe(JSON.stringify(rawWire.messages.slice(-7)));
    const loopSignatures = strippedWire.messages
      .slice(-7)
      .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .filter((b) => b.type === "thinking")
      .map((b) => b.signature);
    expect(loopSignatures).toHaveLength(3);
    // no assistant message goes out empty
    for (const m of strippedWire.messages) if (m.role === "assistant") expect((m.content as unknown[]).length).toBeGreaterThan(0);
  });
});
