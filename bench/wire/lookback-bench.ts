/**
 * `npm run bench:wire -- --needs none,some,many`: the looking-back benchmark. Per seed and need
 * density, every arm runs the same looking-back session (test/support/lookback/scenario.ts:
 * 7 prompts × 10–15 tool steps over a generated TypeScript service, 200k window, thinking on)
 * under the looking-back fake model (lookback-model.ts), which recovers a missing fact by recall
 * or by re-running the call; one table of per-task cost ratios and how each need was met.
 *
 * Seeds 301 and 302 were used to tune the defaults (in-sample, marked *); 401–405 are held out.
 */
import { writeFileSync } from "node:fs";
import { generateLookbackScenario, NEED_DENSITIES, type NeedDensity } from "../../test/support/lookback/scenario.ts";
import type { Arm } from "./arms.ts";
import { createLookbackModel, outcomeCounts } from "./lookback-model.ts";
import { formatLookbackMeans, formatLookbackTable, lookbackGoals, type LookbackResult } from "./lookback-table.ts";
import { measureRun } from "./measure.ts";
import { runArmSession, type BenchRunOptions } from "./run-arm.ts";

export const LOOKBACK_TUNING_SEEDS = [301, 302];
export const LOOKBACK_HELD_OUT_SEEDS = [401, 402, 403, 404, 405];

export interface LookbackBenchOptions extends BenchRunOptions {
  densities: NeedDensity[];
}

export function parseDensities(text: string): NeedDensity[] {
  const out = text.split(",").map((s) => s.trim()).filter(Boolean);
  for (const d of out) if (!(NEED_DENSITIES as readonly string[]).includes(d)) throw new Error(`unknown need density "${d}" (known: ${NEED_DENSITIES.join(", ")})`);
  return out as NeedDensity[];
}

async function runOne(o: LookbackBenchOptions, arm: Arm, seed: number, density: NeedDensity): Promise<LookbackResult> {
  const scenario = generateLookbackScenario({ seed, density, prompts: o.prompts, stepsPerPrompt: o.steps });
  const model = createLookbackModel(scenario);
  const run = await runArmSession(arm, { prompts: scenario.prompts, script: model.script, files: scenario.files }, o.keeperDir);
  const report = model.report();
  if (run.timedOut) console.log(`  warning: ${arm.name} seed ${seed} ${density} timed out`);
  if (report.exhausted > 0) console.log(`  warning: ${arm.name} seed ${seed} ${density}: ${report.exhausted} request(s) past the script`);
  if (report.misaligned > 0) console.log(`  warning: ${arm.name} seed ${seed} ${density}: ${report.misaligned} prompt start(s) out of step with the script`);
  if (report.factNotInOrigin.length > 0) console.log(`  warning: ${arm.name} seed ${seed} ${density}: facts not in their output: ${report.factNotInOrigin.join(" | ")}`);
  const recovery = new Set(report.recoverySeqs);
  const recoveryOutputTokens = run.requests.filter((r) => recovery.has(r.seq)).reduce((n, r) => n + (r.response?.usage.output_tokens ?? 0), 0);
  if (o.dump) {
    writeFileSync(`${o.dump}/${seed}-${density}-${arm.name}-requests.json`, JSON.stringify(run.requests.map((r) => ({ seq: r.seq, kind: r.kind, status: r.status, usage: r.response?.usage, calls: r.response?.toolCalls.map((c) => ({ name: c.name, input: c.input })) })), null, 0));
    const last = run.mainRequests[run.mainRequests.length - 1];
    writeFileSync(`${o.dump}/${seed}-${density}-${arm.name}-last.json`, JSON.stringify(last?.body ?? null, null, 1));
    writeFileSync(`${o.dump}/${seed}-${density}-${arm.name}-needs.json`, JSON.stringify(report.outcomes.map((x) => ({ id: x.need.id, kind: x.need.fact.kind, how: x.how, recalls: x.recalls, reruns: x.reruns, fact: x.need.fact.text, origin: x.need.origin.target, from: x.need.originPrompt, at: x.need.prompt })), null, 1));
  }
  return { seed, density, arm: arm.name, measure: measureRun(run.requests), recoveryOutputTokens, report, heldOut: !LOOKBACK_TUNING_SEEDS.includes(seed) };
}

export async function runLookbackBench(o: LookbackBenchOptions): Promise<LookbackResult[]> {
  const started = Date.now();
  const results: LookbackResult[] = [];
  for (const seed of o.seeds) {
    for (const density of o.densities) {
      for (const arm of o.arms) {
        const t0 = Date.now();
        const r = await runOne(o, arm, seed, density);
        results.push(r);
        const c = outcomeCounts(r.report);
        console.log(`seed ${seed} ${density.padEnd(4)} ${arm.name.padEnd(12)} ${((Date.now() - t0) / 1000).toFixed(0)} s, ${r.measure.mainRequests} main + ${r.measure.summaryCalls} side, needs ${c.context}/${c.recalled}/${c["re-run"]}/${c.lost}`);
      }
    }
  }
  console.log(`\nlooking back: ${o.prompts} prompts × ${o.steps[0]}–${o.steps[1]} steps, 200k window, seeds ${o.seeds.join(", ")}, needs ${o.densities.join(", ")}; ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  console.log(formatLookbackTable(results));
  console.log(`\n${formatLookbackMeans(results)}\n\ngoals (issues #20, #22), keeper arm:\n${lookbackGoals(results).join("\n")}`);
  if (o.json) writeFileSync(o.json, JSON.stringify({ seeds: o.seeds, densities: o.densities, arms: o.arms.map((a) => a.name), results: results.map((r) => ({ ...r, report: { ...r.report, outcomes: r.report.outcomes.map((x) => ({ id: x.need.id, how: x.how, recalls: x.recalls, reruns: x.reruns })) } })) }, null, 2));
  return results;
}
