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
      contextVsBare: ratio(m.finalContextTokens, bare?.finalContextTokens),
      contextVsCondense: ratio(m.finalContextTokens, condense?.finalContextTokens),
    };
  });
}

const fx = (x: number | undefined, d = 3) => (x === undefined ? "–" : x.toFixed(d));
const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export function formatTable(results: readonly ArmResult[]): string {
  const header = ["seed", "arm", "cost/bare", "cost/condense", "busts loop", "busts start", "max/prompt", "final ctx/bare", "ctx/condense", "final ctx", "tool results", "thinking", "user text", "summary calls", "refused", "main req"];
  const lines = rowsOf(results).map((r) => [
    String(r.seed),
    r.arm,
    fx(r.costVsBare),
    fx(r.costVsCondense),
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
  return out.join("\n") + "\n\n(final ctx in tokens; tool results / thinking / user text in characters of the last request)";
}
