/** The scripted-session generator: shape invariants over many seeds, and determinism. */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { generateScenario } from "../support/scenario.ts";

describe("generateScenario", () => {
  test("same seed, same scenario; another seed, another one", () => {
    const a = generateScenario({ seed: 9, prompts: 2 });
    expect(generateScenario({ seed: 9, prompts: 2 })).toEqual(a);
    expect(generateScenario({ seed: 10, prompts: 2 }).steps).not.toEqual(a.steps);
  });

  test("every prompt: tool steps in range with thinking, then one text-only answer; files exist and are sized", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 4 }), (seed, prompts) => {
        const s = generateScenario({ seed, prompts, stepsPerPrompt: [5, 30], fileBytes: [2048, 40960] });
        expect(s.prompts).toHaveLength(prompts);
        expect(s.stepsByPrompt).toHaveLength(prompts);
        expect(s.steps).toEqual(s.stepsByPrompt.flat());
        expect(s.stats.mainRequests).toBe(s.steps.length);
        for (const steps of s.stepsByPrompt) {
          const tools = steps.slice(0, -1);
          const final = steps.at(-1)!;
          expect(tools.length).toBeGreaterThanOrEqual(5);
          expect(tools.length).toBeLessThanOrEqual(30);
          for (const step of tools) {
            expect(step.thinking?.length ?? 0).toBeGreaterThan(0);
            expect(step.toolCalls?.length ?? 0).toBeGreaterThan(0);
          }
          expect(final.toolCalls ?? []).toHaveLength(0);
          expect(final.thinking?.length ?? 0).toBeGreaterThan(0);
          expect(final.text?.length ?? 0).toBeGreaterThan(0);
        }
        const calls = s.steps.flatMap((st) => st.toolCalls ?? []);
        expect(calls).toHaveLength(s.stats.toolCalls);
        expect(s.steps.filter((st) => (st.toolCalls?.length ?? 0) > 1)).toHaveLength(s.stats.parallelSteps);
        // successful reads name real sandbox files, and those files are 2–40 KB
        for (const c of calls) {
          if (c.name !== "read") continue;
          const path = String(c.input.path);
          if (path.startsWith("missing/")) continue;
          const size = s.files[path]?.length ?? -1;
          expect(size).toBeGreaterThanOrEqual(2048);
          expect(size).toBeLessThanOrEqual(40960 + 200); // the last line may run past the target
        }
      }),
      { numRuns: 30 },
    );
  });

  test("with default rates a long session has failing and parallel calls", () => {
    const s = generateScenario({ seed: 1, prompts: 4, stepsPerPrompt: [20, 30] });
    expect(s.stats.failingCalls).toBeGreaterThan(0);
    expect(s.stats.parallelSteps).toBeGreaterThan(0);
  });
});
