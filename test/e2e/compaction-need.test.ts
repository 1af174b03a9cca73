/**
 * Compaction that waits for need (issue #22's 110k case), on the wire: the real pi CLI with the
 * keeper's defaults against the fake Anthropic server, beside bare Pi on the same script
 * (`need-wire.ts`: a 110k window, Pi's default reserve and keep, fast answers, 100 ms summaries,
 * prompts of 12, 12, 12, 45 and 3 reads).
 *
 * The keeper's job starts at the adaptive floor (36,384 tokens) and is ready a few turns later,
 * far below Pi's threshold (93,616). It used to be applied at once (at 41–49k tokens, inside a
 * loop), and the steps of that loop kept after it never collapsed into their chain. Now a ready
 * summary waits until the context needs it: with the keeper's chains the plain script never
 * does; when the long loop thinks at length (thinking of the running loop goes back untouched,
 * so no flush shrinks it) the context reaches the threshold inside that loop, and the summary
 * applies there; at the next prompt the loop — the steps kept after the compaction and those
 * after it — collapses into its chain like any other.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createPiWorkspace, type PiRunResult, type PiWorkspace, runPi } from "../support/pi-runner.ts";
import { compactionsOf, errorRecords, markerJobId, readTrace, sandboxFiles, type TraceEvent } from "../support/compaction/e2e-wire.ts";
import { LONG_PROMPT, NEED_FILES, NEED_PROMPTS, NEED_SETUP, fastSummaryRouter, needScript, promptRequests, THRESHOLD_TOKENS, toolCallIds, toolResultIds } from "../support/compaction/need-wire.ts";
import { bustIndices, longestStall, mainUsage, wireCost } from "../support/compaction/threshold-wire.ts";

const workspaces: PiWorkspace[] = [];
afterAll(() => workspaces.forEach((w) => w.cleanup()));
const workspace = createPiWorkspace(sandboxFiles(NEED_FILES));
workspaces.push(workspace);

type Run = PiRunResult & { trace: TraceEvent[] };

async function run(arm: "keeper" | "bare", longThinkingChars: number): Promise<Run> {
  const traceFile = join(workspace.root, `need-${arm}-${longThinkingChars}.jsonl`);
  const result = await runPi({
    prompts: NEED_PROMPTS,
    mode: "rpc",
    workspace,
    extension: arm === "keeper",
    script: needScript({ longThinkingChars }),
    sideRouter: fastSummaryRouter,
    serverOptions: { idNonce: "same" },
    model: NEED_SETUP.model,
    settings: NEED_SETUP.settings,
    env: { PI_ASYNC_PREFIX_COMPACTION_TRACE: traceFile },
    timeoutMs: 200_000,
  });
  return { ...result, trace: readTrace(traceFile) };
}

/** The long loop's tool results the last request still carries (raw or stubbed), of all its calls. */
function longLoopLeft(r: Run): { left: number; calls: number } {
  const calls = new Set(toolCallIds(promptRequests(r.mainRequests, LONG_PROMPT)));
  return { left: toolResultIds(r.mainRequests[r.mainRequests.length - 1]).filter((id) => calls.has(id)).length, calls: calls.size };
}

/** Far below Pi's threshold: under 90% of it (the need margin is one turn of a few thousand tokens). */
const NEAR_THRESHOLD = Math.floor(0.9 * THRESHOLD_TOKENS);

describe("a ready summary waits for need (110k window, 100 ms summaries, keeper defaults)", () => {
  for (const longThinkingChars of [0, 8_000]) {
    const label = longThinkingChars === 0 ? "the keeper's chains keep every loop small: no compaction far below the threshold" : "a long loop that thinks at length needs one: applied near the threshold, and the loop still collapses";
    test(label, async () => {
      const keeper = await run("keeper", longThinkingChars);
      const bare = await run("bare", longThinkingChars);
      const describeRun = (name: string, r: Run) => {
        const loop = longLoopLeft(r);
        const stall = longestStall(promptRequests(r.mainRequests, LONG_PROMPT), 0);
        return `${name}: compactions at [${compactionsOf(r).map((c) => `${c.tokensBefore}${markerJobId(c) ? "" : " (Pi)"}`).join(", ")}] tokens; busts at main requests [${bustIndices(r.mainRequests).join(", ")}] of ${r.mainRequests.length}; long loop's results left at the end ${loop.left} of ${loop.calls}; longest stall in it ${stall.stallMs} ms; side requests ${r.sideRequests.length}; cost $${wireCost(r.requests).toFixed(4)} (main ${JSON.stringify(mainUsage(r.mainRequests))})`;
      };
      console.log(`[compaction-need] long-loop thinking ${longThinkingChars}: ${describeRun("keeper", keeper)}`);
      console.log(`[compaction-need] long-loop thinking ${longThinkingChars}: ${describeRun("bare", bare)}`);
      console.log(`[compaction-need] long-loop thinking ${longThinkingChars}: keeper/bare cost ${(wireCost(keeper.requests) / wireCost(bare.requests)).toFixed(3)}×`);

      for (const r of [keeper, bare]) {
        expect(r.timedOut).toBe(false);
        expect(r.requests.filter((q) => q.status !== 200).map((q) => q.errorMessage)).toEqual([]);
        expect(errorRecords(r.records)).toEqual([]);
      }
      expect(compactionsOf(bare).length).toBeGreaterThan(0);
      // No compaction far below Pi's threshold, and every one the extension's (no synchronous fallback).
      for (const c of compactionsOf(keeper)) {
        expect(markerJobId(c)).toBeDefined();
        expect(c.tokensBefore as number).toBeGreaterThanOrEqual(NEAR_THRESHOLD);
      }
      if (longThinkingChars > 0) {
        expect(compactionsOf(keeper).length).toBeGreaterThan(0);
        // The user never waits: the summary was ready when the context needed it.
        expect(longestStall(promptRequests(keeper.mainRequests, LONG_PROMPT), 0).stallMs).toBeLessThan(1_000);
      }
      // At the last prompt the long loop — before and after any compaction — is one chain: none of its results is left.
      expect(longLoopLeft(keeper).left).toBe(0);
      expect(wireCost(keeper.requests)).toBeLessThanOrEqual(wireCost(bare.requests));
    }, 400_000);
  }
});
