import { describe, expect, test } from "bun:test";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { createStatusRuntime, prunedTokens, STATUS_LINE_KEY } from "./status-runtime.ts";

const user = (text: string, timestamp: number) => ({ role: "user", content: text, timestamp }) as unknown as ContextMessage;

function fakeCtx(tokens: number | null) {
  const statuses: Array<string | undefined> = [];
  const ctx = {
    hasUI: true,
    ui: { setStatus: (key: string, text: string | undefined) => key === STATUS_LINE_KEY && statuses.push(text) },
    getContextUsage: () => ({ tokens, contextWindow: 200_000, percent: tokens === null ? null : tokens / 2000 }),
  } as unknown as ExtensionContext;
  return { ctx, statuses };
}

describe("status line runtime", () => {
  test("pruned tokens: what the render removed, shared messages not counted twice", () => {
    const kept = user("k".repeat(400), 1);
    const big = user("b".repeat(4000), 2);
    const stub = user("s".repeat(40), 2);
    expect(prunedTokens([kept, big], [kept, stub])).toBe(1000 - 10);
    const same = [kept, big];
    expect(prunedTokens(same, same)).toBe(0);
  });

  test("follows Pi's context figure at every render and refresh; progress shows and clears", () => {
    let tokens: number | null = 12_000;
    const statuses: Array<string | undefined> = [];
    const ctx = {
      hasUI: true,
      ui: { setStatus: (_key: string, text: string | undefined) => statuses.push(text) },
      getContextUsage: () => ({ tokens, contextWindow: 200_000, percent: null }),
    } as unknown as ExtensionContext;
    const rt = createStatusRuntime({ settings: () => DEFAULT_SETTINGS, summarizerCost: () => 0 });
    const big = user("b".repeat(40_040), 2);
    const stub = user("s".repeat(40), 2);
    rt.rendered(ctx, [big], [stub]);
    expect(statuses.at(-1)).toBe("keeper: 12k ctx · −10k pruned");
    tokens = 15_500;
    rt.refresh(ctx);
    expect(statuses.at(-1)).toBe("keeper: 16k ctx · −10k pruned");
    rt.progress(ctx, "summarizing 1/3 batches…");
    expect(statuses.at(-1)).toBe("keeper: 16k ctx · −10k pruned · summarizing 1/3 batches…");
    rt.progress(ctx, undefined);
    tokens = null; // after a compaction Pi has no figure until the next answer
    rt.rendered(ctx, [big], [big]);
    expect(statuses.at(-1)).toBe("keeper: ~10k ctx · nothing pruned yet");
  });

  test("statusLine off clears it", () => {
    const { ctx, statuses } = fakeCtx(100);
    const rt = createStatusRuntime({ settings: () => ({ ...DEFAULT_SETTINGS, statusLine: false }), summarizerCost: () => 0 });
    rt.refresh(ctx);
    expect(statuses).toEqual([undefined]);
  });
});
