/**
 * The looking-back benchmark's figures (pure): per-task cost and how each need was met, one row
 * per seed, density and arm, ratios to the same seed and density's bare and pi-condense arms;
 * means per density and arm; issue #20's goals for the keeper arm.
 *
 * Task cost = the run's cost (`measure.ts`: billed-equivalent input of every request, summary
 * calls' output at 5) + the output of the recovery turns at 5. The scripted turns' own output is
 * the same in every arm and is left out, as in the per-request benchmark.
 */
import { OUTPUT_WEIGHT } from "./weights.ts";
import type { RunMeasure } from "./measure.ts";
import type { LookbackReport, NeedHow } from "./lookback-model.ts";
import { outcomeCounts } from "./lookback-model.ts";
import type { NeedDensity } from "../../test/support/lookback/scenario.ts";

export interface LookbackResult {
  seed: number;
  density: NeedDensity;
  arm: string;
  measure: RunMeasure;
  /** Output tokens of the turns that answered with a recovery step. */
  recoveryOutputTokens: number;
  report: LookbackReport;
  heldOut: boolean;
}

export const taskCost = (r: Pick<LookbackResult, "measure" | "recoveryOutputTokens">): number => r.measure.cost + OUTPUT_WEIGHT * r.recoveryOutputTokens;

export interface LookbackRow {
  r: LookbackResult;
  vsBare?: number;
  vsCondense?: number;
  /** The run's cost with no history carried into any prompt (`floor.ts`) ÷ bare's task cost: the least an arm that leaves tool loops untouched pays. */
  floorVsBare?: number;
  needs: Record<NeedHow, number>;
  extraRequests: number;
}

export function lookbackRows(results: readonly LookbackResult[]): LookbackRow[] {
  const find = (r: LookbackResult, arm: string) => results.find((x) => x.seed === r.seed && x.density === r.density && x.arm === arm);
  const ratio = (a: number, b: LookbackResult | undefined) => (b && taskCost(b) > 0 ? a / taskCost(b) : undefined);
  return results.map((r) => ({
    r,
    vsBare: ratio(taskCost(r), find(r, "bare")),
    vsCondense: ratio(taskCost(r), find(r, "pi-condense")),
    floorVsBare: ratio(taskCost(r) - r.measure.carriedHistoryCost, find(r, "bare")),
    needs: outcomeCounts(r.report),
    extraRequests: r.report.recoverySeqs.length,
  }));
}

const fx = (x: number | undefined) => (x === undefined ? "–" : x.toFixed(3));
const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export function formatLookbackTable(results: readonly LookbackResult[]): string {
  const header = ["seed", "needs", "arm", "task cost/bare", "task cost/condense", "floor/bare", "needs: in context / recalled / re-run / lost", "extra requests", "recalled chars", "re-recalls", "rewrites in loops", "max rewrites/prompt", "refused", "final ctx", "main req"];
  const lines = lookbackRows(results).map(({ r, vsBare, vsCondense, floorVsBare, needs, extraRequests }) => [
    `${r.seed}${r.heldOut ? "" : "*"}`,
    r.density,
    r.arm,
    fx(vsBare),
    fx(vsCondense),
    fx(floorVsBare),
    `${needs.context} / ${needs.recalled} / ${needs["re-run"]} / ${needs.lost}`,
    String(extraRequests),
    k(r.report.recallResultChars),
    String(r.report.rerecalls),
    String(r.measure.bustsInLoop),
    String(r.measure.maxBustsPerPrompt),
    String(r.measure.refused),
    k(r.measure.finalContextTokens),
    String(r.measure.mainRequests),
  ]);
  return [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...lines.map((l) => `| ${l.join(" | ")} |`)].join("\n") + "\n\n(* in-sample: a seed the defaults were tuned on; the others are held out. floor/bare: the arm's cost with no history carried into any prompt, ÷ bare's)";
}

/** Mean task cost ratios per density and arm over the held-out seeds (in-sample apart). */
export function formatLookbackMeans(results: readonly LookbackResult[]): string {
  const rows = lookbackRows(results);
  const out: string[] = ["| needs | arm | seeds | mean task cost/bare | range | mean /condense |", "|---|---|---|---|---|---|"];
  for (const heldOut of [true, false]) {
    const groups = new Map<string, LookbackRow[]>();
    for (const row of rows.filter((x) => x.r.heldOut === heldOut)) groups.set(`${row.r.density}\u0000${row.r.arm}`, [...(groups.get(`${row.r.density}\u0000${row.r.arm}`) ?? []), row]);
    for (const [key, g] of groups) {
      const [density, arm] = key.split("\u0000");
      const bare = g.map((x) => x.vsBare).filter((x): x is number => x !== undefined);
      const cond = g.map((x) => x.vsCondense).filter((x): x is number => x !== undefined);
      const mean = (xs: number[]) => (xs.length === 0 ? undefined : xs.reduce((a, b) => a + b, 0) / xs.length);
      out.push(`| ${density} | ${arm} | ${g.map((x) => x.r.seed).join(",")}${heldOut ? "" : " (in-sample)"} | ${fx(mean(bare))} | ${bare.length ? `${fx(Math.min(...bare))}–${fx(Math.max(...bare))}` : "–"} | ${fx(mean(cond))} |`);
    }
  }
  return out.join("\n");
}

/** Issue #20's goals, keeper arm, per seed and density; since issue #22 a rewrite inside a tool loop is allowed where it pays (checked against a `no-loop-flush` arm, when one ran). */
export function lookbackGoals(results: readonly LookbackResult[], arm = "keeper"): string[] {
  const limit: Record<NeedDensity, number> = { none: 0.36, some: 0.42, many: 0.48 };
  return lookbackRows(results)
    .filter((x) => x.r.arm === arm)
    .map(({ r, vsBare, vsCondense }) => {
      const noLoop = results.find((x) => x.seed === r.seed && x.density === r.density && x.arm === "no-loop-flush");
      const goals: Array<[string, boolean | undefined]> = [
        [`≤ ${limit[r.density]}× bare`, vsBare === undefined ? undefined : vsBare <= limit[r.density]],
        ["≤ 0.65× pi-condense", vsCondense === undefined ? undefined : vsCondense <= 0.65],
        ["rewrites in tool loops pay (cost ≤ no-loop-flush's)", noLoop ? r.measure.bustsInLoop === 0 || taskCost(r) <= taskCost(noLoop) : undefined],
        ["no refused request", r.measure.refused === 0],
        ["no need lost", r.report.outcomes.every((o) => o.how !== "lost")],
      ];
      const missed = goals.filter(([, ok]) => ok === false).map(([g]) => g);
      return `seed ${r.seed}${r.heldOut ? "" : " (in-sample)"} ${r.density}: ${missed.length === 0 ? "all goals met" : `missed: ${missed.join("; ")}`}`;
    });
}
