/**
 * The cache analyzer on real request bodies: a bare-pi run has no busts and no pairing
 * violations; a copy with one old tool result changed is flagged at exactly the request
 * where the change first appears.
 */
import { describe, expect, test } from "bun:test";
import { analyzeRun } from "../../src/cache/analyzer.ts";
import { summarizeRun } from "../../src/cache/summary.ts";
import type { TimedRequest, WireRequestBody } from "../../src/cache/wire-types.ts";
import { runPi } from "../support/pi-runner.ts";
import { generateScenario } from "../support/scenario.ts";

describe("cache analyzer on the wire", () => {
  const scenario = generateScenario({ seed: 11, prompts: 3, stepsPerPrompt: [13, 15], files: 8, fileBytes: [2048, 8192] });

  test("bare pi: 0 busts, 0 pairing violations; a mutated old tool result is a bust at the right request", async () => {
    const run = await runPi({ prompts: scenario.prompts, script: scenario.steps, files: scenario.files, extension: false });
    expect(run.mainRequests.length).toBeGreaterThanOrEqual(40);
    const timed: TimedRequest[] = run.mainRequests.map((r) => ({ body: r.body as unknown as WireRequestBody, timestamp: r.arrivedAtMs }));

    const analyses = analyzeRun(timed);
    const summary = summarizeRun(analyses, { userPrompts: scenario.prompts.length });
    expect(summary.busts).toBe(0);
    expect(summary.pairingViolations).toBe(0);
    // every request after the first reads at least what the previous one wrote
    for (let i = 1; i < analyses.length; i++) expect(analyses[i]!.read).toBeGreaterThan(0);

    // Mutate the first tool result of request `at` and every later request (history is append-only).
    const at = 20;
    const target = JSON.stringify(timed[at]!.body.messages).length; // just to be sure the body is non-trivial
    expect(target).toBeGreaterThan(1000);
    const mutated = timed.map((t, i) => {
      if (i < at) return t;
      const body = structuredClone(t.body) as WireRequestBody & { messages: Array<{ role: string; content: unknown }> };
      const firstResultMessage = body.messages.find((m) => Array.isArray(m.content) && (m.content as Array<{ type: string }>).some((b) => b.type === "tool_result"));
      const block = (firstResultMessage!.content as Array<{ type: string; content: unknown }>).find((b) => b.type === "tool_result")!;
      block.content = "mutated output";
      return { ...t, body };
    });
    const mutatedAnalyses = analyzeRun(mutated);
    const bustAt = mutatedAnalyses.map((a, i) => (a.bust ? i : -1)).filter((i) => i >= 0);
    expect(bustAt).toEqual([at]);
    expect(mutatedAnalyses[at]!.read).toBeLessThan(analyses[at]!.read);
  }, 120_000);
});
