/**
 * `npm run bench:wire -- --scenario long-loop`: the long-loop benchmark. Per seed and provider,
 * every arm runs the same scripted session (test/support/long-loop-scenario.ts: 3 prompts × 60–120
 * tool steps, large files read in each loop's first 6–10 steps, small outputs after, thinking on,
 * 200k window) against the fake Anthropic server and the fake OpenAI Responses server; one table
 * of cost ratios, with the rewrites inside tool loops and their cost beside the savings.
 *
 * Seeds 501–503 were used to tune (in-sample, marked *); 601–606 are held out (601–603 were run
 * once, on an earlier version, before the tuning; 604–606 never before the final run).
 */
import { writeFileSync } from "node:fs";
import { generateLongLoopScenario } from "../../test/support/long-loop-scenario.ts";
import { formatLongLoopMeans, formatLongLoopTable, longLoopGoals, type LongLoopResult } from "./long-loop-table.ts";
import { measureRun } from "./measure.ts";
import { runArmOn, type BenchProvider, type BenchRunOptions } from "./run-arm.ts";

export const LONG_LOOP_TUNING_SEEDS = [501, 502, 503];
export const LONG_LOOP_HELD_OUT_SEEDS = [601, 602, 603, 604, 605, 606];

export interface LongLoopBenchOptions extends BenchRunOptions {
  providers: BenchProvider[];
}

export async function runLongLoopBench(o: LongLoopBenchOptions): Promise<LongLoopResult[]> {
  const started = Date.now();
  const results: LongLoopResult[] = [];
  for (const seed of o.seeds) {
    const scenario = generateLongLoopScenario({ seed, prompts: o.prompts, stepsPerPrompt: o.steps });
    for (const provider of o.providers) {
      for (const arm of o.arms) {
        const t0 = Date.now();
        const out = await runArmOn(provider, arm, { prompts: scenario.prompts, script: scenario.steps, files: scenario.files }, o.keeperDir);
        if (out.run.timedOut) console.log(`  warning: ${arm.name} seed ${seed} ${provider} timed out`);
        if (out.exhausted > 0) console.log(`  warning: ${arm.name} seed ${seed} ${provider}: ${out.exhausted} main request(s) past the script`);
        const measure = measureRun(out.requests, out.weights);
        const compactions = out.run.sessionEntries.filter((e) => e.type === "compaction").length;
        results.push({ seed, provider, arm: arm.name, measure, compactions, heldOut: !LONG_LOOP_TUNING_SEEDS.includes(seed) });
        if (o.dump) writeFileSync(`${o.dump}/${seed}-${provider}-${arm.name}-usage.json`, JSON.stringify(out.requests.map((r) => ({ kind: r.kind, status: r.status, n: r.body.messages.length, usage: r.response?.usage, error: r.errorMessage })), null, 0));
        console.log(`seed ${seed} ${provider.padEnd(9)} ${arm.name.padEnd(12)} ${((Date.now() - t0) / 1000).toFixed(0)} s, ${measure.mainRequests} main + ${measure.summaryCalls} side, cost ${Math.round(measure.cost)}, ${measure.bustsInLoop} rewrites in loops, ${compactions} compactions`);
      }
    }
  }
  console.log(`\nlong loops: ${o.prompts} prompts × ${o.steps[0]}–${o.steps[1]} steps, 200k window, seeds ${o.seeds.join(", ")}, providers ${o.providers.join(", ")}; ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  console.log(formatLongLoopTable(results));
  console.log(`\n${formatLongLoopMeans(results)}\n\ngoals (issue #22), keeper arm:\n${longLoopGoals(results).join("\n")}`);
  if (o.json) writeFileSync(o.json, JSON.stringify({ seeds: o.seeds, providers: o.providers, prompts: o.prompts, steps: o.steps, arms: o.arms.map((a) => a.name), results }, null, 2));
  return results;
}
