/**
 * `npm run bench:wire`: the side-by-side wire benchmark. Real pi, the fake Anthropic server, the
 * scenario generator; every arm runs the same scripted session per seed; one table of ratios to
 * the bare arm of the same seed.
 *
 * The session per seed: 6 prompts × 10–15 tool steps (reads, greps, cats of 2–12 KB sandbox
 * files, some failing, some parallel), thinking on (Sonnet 4.6 id: a model that bills old
 * thinking, as the fake server does), 200k window. The fake server's usage is a function of the
 * requests, so a rerun gives the same figures — except in arms whose flushes race the next
 * prompt (model summaries: `auto`, `model`), where a rewrite lands can vary. pi-condense runs from `--condense <dir>`,
 * `PI_CONDENSE_DIR`, or `<repo>/../shared/anchors/pi-condense`; its arm is skipped with a
 * notice when none is there. Defaults were tuned on seeds 101 and 102; 201–203 are held out.
 *
 *   bun run bench/wire/run.ts [--scenario default|long-loop] [--providers anthropic,openai] [--seeds 201,202,203] [--arms bare,pi-condense,keeper,auto,no-strip,no-chains,no-discipline]
 *                             [--prompts 6] [--steps 10-15] [--condense <dir>] [--json <file>] [--dump <dir>]
 *                             [--keeper <dir>]   (load another checkout of this extension in the keeper arms, for A/B)
 *
 * With `--needs none,some,many` it runs the looking-back benchmark instead (lookback-bench.ts):
 * later prompts need exact facts from earlier outputs and the fake model recovers what the
 * context lost; default seeds 401–405 (held out; 301 and 302 were tuned on), arms bare,
 * pi-condense, keeper, 7 prompts.
 *
 * With `--scenario long-loop` it runs the long-loop benchmark (long-loop-bench.ts): 3 prompts ×
 * 60–120 tool steps, large reads early in each loop, on the fake Anthropic server and the fake
 * OpenAI Responses server (`--providers anthropic,openai`); default seeds 601–606 (held out;
 * 501–503 were tuned on), arms bare, pi-condense, keeper.
 */
import { writeFileSync } from "node:fs";
import { REPO_ROOT } from "../../test/support/pi-runner.ts";
import { generateScenario } from "../../test/support/scenario.ts";
import { formatHeadlineFidelity, measureFidelity } from "../../test/analysis/fidelity.ts";
import { DEFAULT_ARM_NAMES, findCondense, selectArms, type Arm } from "./arms.ts";
import { measureRun, type RunMeasure } from "./measure.ts";
import { LOOKBACK_HELD_OUT_SEEDS, parseDensities, runLookbackBench } from "./lookback-bench.ts";
import { LONG_LOOP_HELD_OUT_SEEDS, runLongLoopBench } from "./long-loop-bench.ts";
import { parseProviders, runArmSession } from "./run-arm.ts";
import { checkGoals, formatGoals, formatTable, type ArmResult } from "./table.ts";

/** Held out: the defaults were tuned on seeds 101 and 102 only. */
const DEFAULT_SEEDS = [201, 202, 203];

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const needs = arg("needs");
const scenarioName = arg("scenario") ?? "default";
if (scenarioName !== "default" && scenarioName !== "long-loop") throw new Error(`unknown scenario "${scenarioName}" (known: default, long-loop)`);
const longLoop = scenarioName === "long-loop";
const seeds = (arg("seeds") ?? (needs ? LOOKBACK_HELD_OUT_SEEDS : longLoop ? LONG_LOOP_HELD_OUT_SEEDS : DEFAULT_SEEDS).join(",")).split(",").map(Number);
const prompts = Number(arg("prompts") ?? (needs ? 7 : longLoop ? 3 : 6));
const [minSteps, maxSteps] = (arg("steps") ?? (longLoop ? "60-120" : "10-15")).split("-").map(Number);
const condenseDir = findCondense(REPO_ROOT, arg("condense"));
const keeperDir = arg("keeper");
const armNames = arg("arms") ?? (needs || longLoop ? "bare,pi-condense,keeper" : DEFAULT_ARM_NAMES.join(","));
const arms = selectArms(armNames.split(","), condenseDir, (s) => console.log(`notice: ${s}`));

/** Output-path fidelity of this extension's defaults, replayed over the bare arm's session (a generated session). */
const fidelityBySeed = new Map<number, string>();

async function runArm(arm: Arm, seed: number): Promise<RunMeasure & { seconds: number }> {
  const scenario = generateScenario({ seed, prompts, stepsPerPrompt: [minSteps, maxSteps], files: 12, fileBytes: [2048, 12288], thinkingChars: [200, 1200] });
  const run = await runArmSession(arm, { prompts: scenario.prompts, script: scenario.steps, files: scenario.files }, keeperDir);
  const dump = arg("dump");
  if (dump) {
    const last = run.mainRequests[run.mainRequests.length - 1];
    writeFileSync(`${dump}/${seed}-${arm.name}-last.json`, JSON.stringify(last?.body ?? null, null, 1));
    writeFileSync(`${dump}/${seed}-${arm.name}-usage.json`, JSON.stringify(run.requests.map((r) => ({ kind: r.kind, status: r.status, n: r.body.messages.length, last: JSON.stringify(r.body.messages[r.body.messages.length - 1]).slice(0, 300), usage: r.response?.usage, error: r.errorMessage })), null, 0));
  }
  if (arm.name === "bare" && run.sessionEntries.length > 0) {
    const report = measureFidelity({ sessionText: run.sessionEntries.map((e) => JSON.stringify(e)).join("\n"), file: `seed-${seed}` });
    fidelityBySeed.set(seed, `${formatHeadlineFidelity(report)} (${report.prunedBatches} pruned batches, replayed with extractive summaries)`);
  }
  if (run.timedOut) console.log(`  warning: ${arm.name} seed ${seed} timed out`);
  const exhausted = run.server.exhaustedCount();
  if (exhausted > 0) console.log(`  warning: ${arm.name} seed ${seed}: ${exhausted} main request(s) past the script`);
  return { ...measureRun(run.requests), seconds: run.durationMs / 1000 };
}

async function runDefaultBench(): Promise<void> {
  const results: ArmResult[] = [];
  const started = Date.now();
  for (const seed of seeds) {
    for (const arm of arms) {
      const m = await runArm(arm, seed);
      results.push({ seed, arm: arm.name, measure: m });
      console.log(`seed ${seed} ${arm.name.padEnd(12)} ${m.seconds.toFixed(0)} s, ${m.mainRequests} main + ${m.summaryCalls} side requests, cost ${Math.round(m.cost)}`);
    }
  }
  console.log(`\n${prompts} prompts × ${minSteps}–${maxSteps} steps, 200k window, seeds ${seeds.join(", ")}; ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  console.log(formatTable(results));
  console.log(`\ngoals (issues #11, #22), keeper arm:\n${formatGoals(checkGoals(results))}\n`);
  for (const [seed, line] of fidelityBySeed) console.log(`seed ${seed}: ${line}`);
  const json = arg("json");
  if (json) writeFileSync(json, JSON.stringify({ seeds, prompts, steps: [minSteps, maxSteps], arms: arms.map((a) => ({ name: a.name, description: a.description })), results }, null, 2));
}

if (longLoop) await runLongLoopBench({ seeds, providers: parseProviders(arg("providers") ?? "anthropic,openai"), arms, prompts, steps: [minSteps, maxSteps], keeperDir, json: arg("json"), dump: arg("dump") });
else if (needs) await runLookbackBench({ seeds, densities: parseDensities(needs), arms, prompts, steps: [minSteps, maxSteps], keeperDir, json: arg("json"), dump: arg("dump") });
else await runDefaultBench();
