/** The benchmark table: one row per seed and arm, ratios to the same seed's bare arm (pure). */
import type { RunMeasure } from "./measure.ts";

export interface ArmResult {
  seed: number;
  arm: string;
  measure: RunMeasure;
}

export interface Row {
  seed: number;
  arm: string;
  costVsBare?: number;
  costVsCondense?: number;
  /** The run's floor with no tool loop touched (cost − carried history, `floor.ts`) ÷ bare's cost. */
  floorVsBare?: number;
  contextVsBare?: number;
  contextVsCondense?: number;
  m: RunMeasure;
}

export function rowsOf(results: readonly ArmResult[]): Row[] {
  const find = (seed: number, arm: string) => results.find((r) => r.seed === seed && r.arm === arm)?.measure;
  return results.map(({ seed, arm, measure: m }) => {
    const bare = find(seed, "bare");
    const condense = find(seed, "pi-condense");
    const ratio = (a: number, b: number | undefined) => (b && b > 0 ? a / b : undefined);
    return {
      seed,
      arm,
      m,
      costVsBare: ratio(m.cost, bare?.cost),
      costVsCondense: ratio(m.cost, condense?.cost),
      floorVsBare: ratio(m.cost - m.carriedHistoryCost, bare?.cost),
      contextVsBare: ratio(m.finalContextTokens, bare?.finalContextTokens),
      contextVsCondense: ratio(m.finalContextTokens, condense?.finalContextTokens),
    };
  });
}

const fx = (x: number | undefined, d = 3) => (x === undefined ? "–" : x.toFixed(d));
const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export function formatTable(results: readonly ArmResult[]): string {
  const header = ["seed", "arm", "cost/bare", "cost/condense", "floor/bare", "busts loop", "busts start", "max/prompt", "final ctx/bare", "ctx/condense", "final ctx", "tool results", "thinking", "user text", "summary calls", "refused", "main req"];
  const lines = rowsOf(results).map((r) => [
    String(r.seed),
    r.arm,
    fx(r.costVsBare),
    fx(r.costVsCondense),
    fx(r.floorVsBare),
    String(r.m.bustsInLoop),
    String(r.m.bustsAtPromptStart),
    String(r.m.maxBustsPerPrompt),
    fx(r.contextVsBare),
    fx(r.contextVsCondense),
    k(r.m.finalContextTokens),
    k(r.m.finalMix.toolResultChars),
    k(r.m.finalMix.thinkingChars),
    k(r.m.finalMix.userTextChars),
    String(r.m.summaryCalls),
    String(r.m.refused),
    String(r.m.mainRequests),
  ]);
  const out = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`, ...lines.map((l) => `| ${l.join(" | ")} |`)];
  return out.join("\n") + "\n\n(final ctx in tokens; tool results / thinking / user text in characters of the last request; floor/bare: the arm's cost with no history carried into any prompt, the least any arm that leaves tool loops untouched can pay, ÷ bare's cost)";
}

/** Issue #11's goals for the keeper arm against the same seed's bare and pi-condense arms; issue #22's for its rewrites inside tool loops (it replaced "none in a loop, at most one per prompt"). */
export interface GoalCheck {
  seed: number;
  met: string[];
  missed: string[];
}

export function checkGoals(results: readonly ArmResult[], arm = "keeper"): GoalCheck[] {
  const rows = rowsOf(results);
  return rows
    .filter((r) => r.arm === arm)
    .map((r) => {
      const condense = rows.find((c) => c.seed === r.seed && c.arm === "pi-condense");
      const noLoop = rows.find((c) => c.seed === r.seed && c.arm === "no-loop-flush");
      const goals: Array<[string, boolean | undefined]> = [
        ["cost ≤ 0.80× pi-condense", r.costVsCondense === undefined ? undefined : r.costVsCondense <= 0.8],
        ["cost ≤ 0.40× bare", r.costVsBare === undefined ? undefined : r.costVsBare <= 0.4],
        ["final context ≤ pi-condense's", condense ? r.m.finalContextTokens <= condense.m.finalContextTokens : undefined],
        // Issue #22: rewrites inside a tool loop only where they pay — checked against the arm without the in-loop trigger, when it ran.
        ["rewrites in tool loops pay (cost ≤ no-loop-flush's)", noLoop ? r.m.bustsInLoop === 0 || r.m.cost <= noLoop.m.cost : undefined],
        ["no refused request", r.m.refused === 0],
      ];
      return {
        seed: r.seed,
        met: goals.filter(([, ok]) => ok === true).map(([g]) => g),
        missed: goals.filter(([, ok]) => ok === false).map(([g]) => g),
      };
    });
}

export function formatGoals(checks: readonly GoalCheck[]): string {
  return checks.map((c) => `seed ${c.seed}: ${c.missed.length === 0 ? "all goals met" : `missed: ${c.missed.join("; ")}`} (met: ${c.met.join("; ")})`).join("\n");
}
