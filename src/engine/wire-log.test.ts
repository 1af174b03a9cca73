import { describe, expect, test } from "bun:test";
import { emptyWireLog, wireLogOnAnswer } from "./wire-log.ts";
import { initialEngineState, step } from "./index.ts";

const dropped = (n: number) => ({
  role: "assistant",
  content: [],
  diagnostics: [{ type: "anthropic_input_transformations", details: { transformations: Array.from({ length: n }, () => ({ type: "thinking_dropped", reason: "prefix_mismatch" })) } }],
});

describe("the wire log counts the reasoning the provider dropped", () => {
  test("at each answer (the engine's usage step), from Pi's diagnostics", () => {
    let state = initialEngineState();
    state = step(state, { type: "usage", message: dropped(2) as never }).state;
    state = step(state, { type: "usage", message: { role: "assistant", content: [] } as never }).state;
    expect(state.wire.reasoning).toMatchObject({ requests: 1, blocksLost: 2, afterKeeperRewrite: 0 });
  });

  test("counted against this extension when the last request's bust was its rewrite", () => {
    const log = { ...emptyWireLog(), attributions: [{ at: 50, cause: "keeper-rewrite" as const, layer: "tail" as const, rewrittenTokens: 10, estimatedCost: 10, detail: "" }] };
    expect(wireLogOnAnswer(log, dropped(3), 50).reasoning.afterKeeperRewrite).toBe(3);
    expect(wireLogOnAnswer(log, dropped(3), 60).reasoning.afterKeeperRewrite).toBe(0);
    const quiet = wireLogOnAnswer(log, { role: "assistant" }, 50);
    expect(quiet).toBe(log);
  });
});
