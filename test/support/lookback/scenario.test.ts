import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeSandbox } from "../scenario-sandbox.ts";
import { NEEDS_PER_PROMPT, generateLookbackScenario } from "./scenario.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("looking-back scenario", () => {
  test("same seed, same scenario; every density shares the prompts and calls", () => {
    const a = generateLookbackScenario({ seed: 5, density: "some" });
    const b = generateLookbackScenario({ seed: 5, density: "some" });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    const none = generateLookbackScenario({ seed: 5, density: "none" });
    const many = generateLookbackScenario({ seed: 5, density: "many" });
    expect(none.prompts).toEqual(many.prompts);
    expect(none.calls.map((c) => c.call)).toEqual(many.calls.map((c) => c.call));
    expect(none.needs).toEqual([]);
  });

  test("needs per prompt stay in the density's range; none in the first prompt; each from an earlier prompt", () => {
    for (const seed of [1, 2, 3]) {
      for (const density of ["some", "many"] as const) {
        const s = generateLookbackScenario({ seed, density });
        const [min, max] = NEEDS_PER_PROMPT[density];
        for (let p = 0; p < s.prompts.length; p++) {
          const n = s.needs.filter((x) => x.prompt === p).length;
          if (p === 0) expect(n).toBe(0);
          else {
            expect(n).toBeLessThanOrEqual(max);
            expect(n).toBeGreaterThanOrEqual(Math.min(min, 1));
          }
        }
        for (const need of s.needs) {
          expect(need.originPrompt).toBeLessThan(need.prompt);
          expect(need.fact.text).toContain(need.fact.cue);
          expect(s.stepsByPrompt[need.prompt]![need.step]!.needs).toContain(need);
        }
        const kinds = new Set(s.needs.map((x) => x.fact.kind));
        expect(kinds.size).toBeGreaterThanOrEqual(3);
      }
    }
  });

  test("each call's facts are in what the real command prints in the sandbox", async () => {
    const s = generateLookbackScenario({ seed: 7, density: "many" });
    const dir = mkdtempSync(join(tmpdir(), "lookback-"));
    dirs.push(dir);
    writeSandbox(dir, s.files);
    let checked = 0;
    const failed: string[] = [];
    for (const spec of s.calls) {
      let out: string;
      let code = 0;
      if (spec.call.name === "read") {
        try {
          out = readFileSync(join(dir, String(spec.call.input.path)), "utf8");
        } catch {
          out = "";
          code = 1;
        }
      } else {
        const proc = Bun.spawnSync(["sh", "-c", String(spec.call.input.command)], { cwd: dir });
        out = proc.stdout.toString();
        code = proc.exitCode ?? 0;
      }
      expect({ target: spec.target, fails: code !== 0 }).toEqual({ target: spec.target, fails: spec.fails });
      for (const f of spec.facts) {
        checked++;
        if (!out.includes(f.text)) failed.push(`${spec.target}: ${f.text}`);
      }
    }
    expect(failed).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });
});
