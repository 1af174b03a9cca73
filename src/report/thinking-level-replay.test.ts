/** The thinking level in the replay: carried per request, a cold-cache moment for the keeper arm, an invalidation for the analyzer when thinking switches on or off. */
import { describe, expect, test } from "bun:test";
import { keeperReplayConfig } from "./keeper-config.ts";
import { createKeeperReplayEngine, replayCacheFacts } from "./keeper-engine.ts";
import { sizeModelSummarizer } from "./replay-summaries.ts";
import { replaySession, thinkingToggles } from "./replay.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { ContextMessage } from "../session/messages.ts";
import { syntheticSession } from "../../test/support/report/arms-fixtures.ts";

/** Inserts a `thinking_level_change` entry just before the n-th user prompt (0-based) of a session text. */
function withThinkingChange(text: string, changes: ReadonlyArray<{ beforePrompt: number; level: string }>): string {
  const lines = text.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
  const out: Array<Record<string, unknown>> = [];
  let prompt = 0;
  for (const line of lines) {
    const isPrompt = line.type === "message" && (line.message as { role: string }).role === "user";
    const change = isPrompt ? changes.find((c) => c.beforePrompt === prompt) : undefined;
    if (isPrompt) prompt++;
    if (change) {
      const id = `tl${change.beforePrompt}`;
      out.push({ type: "thinking_level_change", id, parentId: line.parentId, timestamp: line.timestamp, thinkingLevel: change.level });
      out.push({ ...line, parentId: id });
    } else out.push(line);
  }
  return `${out.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

const base = syntheticSession({ prompts: 3, callsPerPrompt: 2, outputChars: 6000 });
// Prompt 1 turns thinking on ("high"), prompt 2 changes only its budget ("minimal").
const text = withThinkingChange(base, [
  { beforePrompt: 1, level: "high" },
  { beforePrompt: 2, level: "minimal" },
]);
// Each prompt makes 3 requests (2 tool calls + the final answer): prompt 1 starts at request 3, prompt 2 at 6.

describe("thinking level per request", () => {
  test("ReplayRequestInfo and the requests carry the level in force (default off)", () => {
    const seen: string[] = [];
    const r = replaySession({
      file: "thinking.jsonl",
      text,
      transformContext: (m, _i, info) => {
        seen.push(info.thinkingLevel);
        return m;
      },
    });
    expect(r.diagnostics).toEqual([]);
    expect(seen).toEqual(["off", "off", "off", "high", "high", "high", "minimal", "minimal", "minimal"]);
    expect(r.requests.map((q) => q.thinkingLevel)).toEqual(seen);
  });

  test("the analyzer drops the cache where thinking switches on or off, not on a budget change", () => {
    expect(thinkingToggles([{ thinkingLevel: "off" }, { thinkingLevel: "high" }, { thinkingLevel: "minimal" }, { thinkingLevel: "off" }])).toEqual([1, 3]);
    const r = replaySession({ file: "thinking.jsonl", text });
    expect(r.thinkingChanges).toEqual([3]);
    expect(r.analysis.map((a) => a.invalidated)).toEqual([false, false, false, true, false, false, false, false, false]);
    expect(r.analysis[3].read).toBe(0);
    expect(r.analysis[6].read).toBeGreaterThan(0);
    // The same session without the changes reads at request 3.
    expect(replaySession({ file: "plain.jsonl", text: base }).analysis[3].read).toBeGreaterThan(0);
  });

  test("the keeper arm's discipline sees a cold cache where thinking switches on or off (as the live shell does)", () => {
    const engine = createKeeperReplayEngine({ config: keeperReplayConfig(DEFAULT_SETTINGS), summarize: sizeModelSummarizer(), discipline: DEFAULT_SETTINGS.cache });
    const cold: boolean[] = [];
    replaySession({
      file: "thinking.jsonl",
      text,
      transformContext: (messages, requestIndex, info) => {
        // The facts the engine's flush sees for this request (computed before it renders it).
        const request = { messages: messages as ContextMessage[], requestIndex, info };
        cold.push(replayCacheFacts(engine.state(), request, 200_000).cold);
        return engine.transformContext(messages as ContextMessage[], requestIndex, info) as never;
      },
      // The engine records each request when it is sent (as the live host does at before_provider_request).
      transformBody: (body, requestIndex, info) => engine.transformBody(body, requestIndex, info),
    });
    // Request 0: no previous request. 3 ("off" → "high"): thinking switched on, cold. 6
    // ("high" → "minimal"): thinking stays on, and the recorded corpus shows such a change
    // keeps the cache, so it is warm. The requests are 10 s apart, inside the 5-minute TTL.
    expect(cold).toEqual([true, false, false, true, false, false, false, false, false]);
    expect(engine.state().previousThinkingLevel).toBe("minimal");
  });
});
