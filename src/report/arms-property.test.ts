/** Invariants of the keeper arm over generated sessions. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { applySettingsOverride, keeperReplayConfig } from "./keeper-config.ts";
import { createKeeperReplayEngine } from "./keeper-engine.ts";
import { replaySession } from "./replay.ts";
import { sizeModelSummarizer } from "./replay-summaries.ts";
import { currentLoopStart } from "../prune/occurrence.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { syntheticSession } from "../../test/support/report/arms-fixtures.ts";

describe("keeper arm over generated sessions", () => {
  test("the wire pairs every call with its result, the current loop keeps its assistant turns (results may become stubs), one request-end flush per later prompt", () => {
    fc.assert(
      fc.property(
        fc.record({
          prompts: fc.integer({ min: 1, max: 6 }),
          callsPerPrompt: fc.integer({ min: 1, max: 4 }),
          outputChars: fc.integer({ min: 50, max: 7000 }),
          thinking: fc.boolean(),
          model: fc.constantFrom("claude-sonnet-4-5", "claude-opus-4-5"),
          budget: fc.constantFrom(500, 2000, 60000),
          mode: fc.constantFrom("auto", "off", "flush-gated") as fc.Arbitrary<"auto" | "off" | "flush-gated">,
        }),
        (o) => {
          const config = keeperReplayConfig(
            applySettingsOverride(DEFAULT_SETTINGS, { pruning: { budgetTrigger: { maxTokens: o.budget } }, thinkingStrip: { mode: o.mode, keepLastTurns: 2 } }),
          );
          const engine = createKeeperReplayEngine({ config, summarize: sizeModelSummarizer() });
          let loopIntact = true;
          const r = replaySession({
            file: "gen.jsonl",
            text: syntheticSession(o),
            ttlOnlyAnalysis: false,
            transformContext: (messages, i, info) => {
              const out = engine.transformContext(messages, i, info);
              // The loop's assistant turns go out unchanged; its results may only become stubs
              // (a budget flush inside the loop stubs the loop's earlier, already-seen results).
              const before = messages.slice(currentLoopStart(messages));
              const after = out.slice(currentLoopStart(out));
              if (after.length !== before.length) loopIntact = false;
              after.forEach((m, j) => {
                const same = JSON.stringify(m) === JSON.stringify(before[j]);
                const stub = m.role === "toolResult" && JSON.stringify(m.content).includes("[context-keeper] output pruned");
                if (!same && !stub) loopIntact = false;
              });
              return out;
            },
          });
          expect(r.requests).toHaveLength(o.prompts * (o.callsPerPrompt + 1));
          expect(r.summary.pairingViolations).toBe(0);
          expect(loopIntact).toBe(true);
          const flushes = engine.state().flushes;
          expect(flushes.filter((f) => f.reason === "request-end")).toHaveLength(o.prompts - 1);
          if (o.budget >= 60000) expect(flushes.filter((f) => f.reason === "budget")).toHaveLength(0);
        },
      ),
      { numRuns: 25 },
    );
  });
});
