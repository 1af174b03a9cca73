import { describe, expect, test } from "bun:test";
import { assistant, call, result, text, thinking, user } from "../../test/support/message-factory.ts";
import { slotsByRawIndex } from "./history-view.ts";
import { reasoningDropCost, thinkingDroppedAfter, thinkingTokensOf } from "./reasoning-cost.ts";

const history = [
  user("go", 1),
  assistant([thinking("x".repeat(400)), call("a", "read")], 2),
  result("a", "read", "out", 3),
  assistant([thinking("y".repeat(800)), call("b", "read")], 4),
  result("b", "read", "out", 5),
  assistant([thinking("z".repeat(40)), text("done")], 6),
];

describe("reasoning a rewrite drops", () => {
  test("thinking tokens: the thinking text / 4, assistants only", () => {
    expect(thinkingTokensOf(history[1]!)).toBe(100);
    expect(thinkingTokensOf(history[0]!)).toBe(0);
  });

  test("a change at p drops the thinking after p, not p's own", () => {
    const after = thinkingDroppedAfter(slotsByRawIndex(history, history));
    expect(after(0)).toBe(100 + 200 + 10);
    expect(after(1)).toBe(200 + 10); // the changed message keeps its own thinking
    expect(after(2)).toBe(200 + 10);
    expect(after(4)).toBe(10);
    expect(after(5)).toBe(0);
    expect(after(99)).toBe(0);
    expect(after(-1)).toBe(310);
  });

  test("counted in history as it will be sent: a slot whose thinking the strip removed drops nothing", () => {
    const stripped = history.map((m, i) => (i === 1 ? { ...m, content: (m as { content: unknown[] }).content.filter((b) => (b as { type: string }).type !== "thinking") } : m)) as typeof history;
    expect(thinkingDroppedAfter(slotsByRawIndex(history, stripped))(0)).toBe(210);
  });

  test("priced at the output price", () => {
    expect(reasoningDropCost(210, { output: 5 })).toBe(1050);
    expect(reasoningDropCost(-3, { output: 5 })).toBe(0);
  });
});
