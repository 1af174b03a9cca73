/**
 * The long-loop benchmark's figures (pure): one row per seed, provider and arm, cost ratios to the
 * same seed and provider's bare and pi-condense arms, and beside them what the rewrites inside
 * tool loops cost (the busts in loops: tokens written again instead of read, at write − read)
 * against what the arm saved (bare's cost − its own); means per provider and arm over the
 * held-out seeds; the goal (issue #22): ≤ 0.50× bare on every held-out seed, no refused request.
 */
import type { RunMeasure } from "./measure.ts";
import type { BenchProvider } from "./run-arm.ts";

export interface LongLoopResult {
  seed: number;
  provider: BenchProvider;
  arm: string;
  measure: RunMeasure;
  /** Pi compactions in the run's session file. */
  compactions: number;
  heldOut: boolean;
}

export interface LongLoopRow {
  r: LongLoopResult;
  vsBare?: number;
  vsCondense?: number;
  /** (bare's cost − this arm's) ÷ bare's cost. */
  savedVsBare?: number;
  /** What the rewrites inside tool loops cost ÷ bare's cost. */
  loopRewritesVsBare?: number;
}

export function longLoopRows(results: readonly LongLoopResult[]): LongLoopRow[] {
  const find = (r: LongLoopResult, arm: string) => results.find((x) => x.seed === r.seed && x.provider === r.provider && x.arm === arm)?.measure;
  return results.map((r) => {
    const bare = find(r, "bare");
    const condense = find(r, "pi-condense");
    const of = (x: number, base: RunMeasure | undefined) => (base && base.cost > 0 ? x / base.cost : undefined);
    return {
      r,
      vsBare: of(r.measure.cost, bare),
      vsCondense: of(r.measure.cost, condense),
      savedVsBare: bare ? of(bare.cost - r.measure.cost, bare) : undefined,
      loopRewritesVsBare: of(r.measure.loopRewriteCost, bare),
    };
  });
}

const fx = (x: number | undefined) => (x === undefined ? "–" : x.toFixed(3));
const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export function formatLongLoopTable(results: readonly LongLoopResult[]): string {
  const header = ["seed", "provider", "arm", "cost/bare", "cost/condense", "saved/bare", "rewrites in loops", "their cost/bare", "rewrites at prompt starts", "compactions", "final ctx", "summary calls", "refused", "main req"];
  const lines = longLoopRows(results).map(({ r, vsBare, vsCondense, savedVsBare, loopRewritesVsBare }) => [
    `${r.seed}${r.heldOut ? "" : "*"}`,
    r.provider,
    r.arm,
    fx(vsBare),
    fx(vsCondense),
    fx(savedVsBare),
    String(r.measure.bustsInLoop),
    fx(loopRewritesVsBare),
    String(r.measure.bustsAtPromptStart),
    String(r.compactions),
    k(r.measure.finalContextTokens),
    String(r.measure.summaryCalls),
    String(r.measure.refused),
    String(r.measure.mainRequests),
  ]);
  const out = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...lines.map((l) => `| ${l.join(" | ")} |`)];
  return `${out.join("\n")}\n\n(* a seed the defaults were tuned on; rewrites in loops: requests inside a tool loop that read back less than the one before cached; their cost: the tokens they wrote again × (write − read), ÷ bare's cost; saved/bare: (bare's cost − the arm's) ÷ bare's cost)`;
}

/** Mean cost/bare per provider and arm over the held-out seeds. */
export function formatLongLoopMeans(results: readonly LongLoopResult[]): string {
  const rows = longLoopRows(results).filter((x) => x.r.heldOut && x.vsBare !== undefined);
  const keys = [...new Set(rows.map((x) => `${x.r.provider} ${x.r.arm}`))];
  return keys
    .map((key) => {
      const of = rows.filter((x) => `${x.r.provider} ${x.r.arm}` === key);
      const mean = of.reduce((n, x) => n + x.vsBare!, 0) / of.length;
      return `${key}: mean cost/bare ${mean.toFixed(3)} over ${of.length} held-out seed(s)`;
    })
    .join("\n");
}

/** Issue #22's goal for the keeper arm: ≤ 0.50× bare on each held-out seed and provider, no refused request. */
export function longLoopGoals(results: readonly LongLoopResult[], arm = "keeper"): string[] {
  return longLoopRows(results)
    .filter((x) => x.r.arm === arm)
    .map((x) => {
      const missed = [
        ...(x.vsBare === undefined || x.vsBare > 0.5 ? ["cost ≤ 0.50× bare"] : []),
        ...(x.r.measure.refused > 0 ? ["no refused request"] : []),
      ];
      return `seed ${x.r.seed}${x.r.heldOut ? "" : "*"} ${x.r.provider}: ${missed.length === 0 ? "goal met" : `missed: ${missed.join("; ")}`}`;
    });
}
