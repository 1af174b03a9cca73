/**
 * The real recorded session: flush at the end of every request (extractive stand-in
 * summaries), render before every later request, and check the invariants hold on real
 * data — no orphans, current loop untouched, state restores from its entries.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { captureBatches } from "./capture.ts";
import { planFlush } from "./plan.ts";
import { DEFAULT_PRUNE_CONFIG } from "../prune/config.ts";
import { currentLoopStart, pairToolCalls } from "../prune/occurrence.ts";
import { renderContext } from "../prune/pipeline.ts";
import type { ContextMessage } from "../session/messages.ts";
import { type KeeperEntry, restoreState } from "../state/entries.ts";
import { emptyState } from "../state/schema.ts";

const CORPUS = join(import.meta.dir, "../../corpus/large-session.jsonl");

function corpusMessages(): ContextMessage[] {
  return readFileSync(CORPUS, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "message" && e.message)
    .map((e) => e.message as ContextMessage);
}

describe("large recorded session", () => {
  test("flush per request, render per request: invariants hold and savings are real", () => {
    const all = corpusMessages();
    const userIdx = all.flatMap((m, i) => (m.role === "user" ? [i] : []));
    expect(userIdx.length).toBeGreaterThan(5);
    let state = emptyState();
    const entries: KeeperEntry[] = [];
    let renders = 0;
    for (const u of userIdx.slice(1)) {
      const branch = all.slice(0, u); // the previous request just ended
      const { batches } = captureBatches({ branchMessages: branch, state, config: DEFAULT_PRUNE_CONFIG });
      const summaries = batches.map((b) => ({
        batchKey: b.batchKey,
        text: b.calls.map((c) => `${c.toolName}: ${c.resultText.slice(0, 80)}`).join(" | "),
        source: "extractive" as const,
        inputTokens: 0,
        outputTokens: 0,
        cost: 0,
      }));
      const plan = planFlush({ state, branchMessages: branch, summaries, config: DEFAULT_PRUNE_CONFIG, now: u });
      state = plan.nextState;
      entries.push(...plan.entriesToPersist);

      const messages = all.slice(0, u + 1);
      const out = renderContext({ messages, state, config: DEFAULT_PRUNE_CONFIG });
      renders++;
      const p = pairToolCalls(out);
      expect(p.orphanResults).toEqual([]);
      expect(p.unansweredCalls).toEqual([]);
      expect(out.slice(currentLoopStart(out))).toEqual(messages.slice(currentLoopStart(messages)));
    }
    expect(renders).toBe(userIdx.length - 1);
    expect(state.stats.stubbedResults).toBeGreaterThan(0);
    expect(state.stats.tokensSavedEstimate).toBeGreaterThan(0);
    const restored = restoreState(entries.map((e) => JSON.parse(JSON.stringify({ type: "custom", ...e }))));
    expect(restored.diagnostics).toEqual([]);
    expect(restored.state).toEqual(state);

    const full = JSON.stringify(all).length;
    const rendered = JSON.stringify(renderContext({ messages: all, state, config: DEFAULT_PRUNE_CONFIG })).length;
    expect(rendered).toBeLessThan(full);
    console.log(`corpus: ${all.length} messages, ${state.stats.flushes} flushes, stubbed ${state.stats.stubbedResults}, chains ${state.stats.compressedChains}, purged ${state.stats.purgedErrors}; rendered ${rendered} of ${full} chars`);
  });
});
