/** Plain-text reports for `/keeper cache` and `/keeper why`. Pure: data in, string out. */
import { latestGateDecisions } from "./gate-log.ts";
import type { BustAttribution, GateDecisionLog, GateLogEntry, RequestFingerprint } from "./schema.ts";

const int = (n: number): string => Math.round(n).toLocaleString("en-US");
const dec = (n: number, digits = 2): string => n.toFixed(digits);
/** UTC clock time, so the text does not depend on the machine's zone. */
const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

export interface CacheReportInput {
  /** Oldest first; the last one is the latest request. */
  fingerprints: readonly RequestFingerprint[];
  /** Oldest first. */
  attributions: readonly BustAttribution[];
  /** How many busts to list; default 5. */
  showBusts?: number;
}

export function formatCacheReport(input: CacheReportInput): string {
  const lines: string[] = [];
  const last = input.fingerprints[input.fingerprints.length - 1];
  if (last === undefined) lines.push("No request seen yet.");
  else {
    const seam = last.seamMessageIndex;
    const msgCount = last.tokens.messages.length;
    const frozenTokens = last.tokens.messages.slice(0, seam + 1).reduce((a, b) => a + b, 0);
    const tailTokens = last.tokens.messages.slice(seam + 1).reduce((a, b) => a + b, 0);
    lines.push(`Last request ${clock(last.at)} UTC · ${last.model} · thinking ${last.thinkingLevel}`);
    lines.push(`  tools   ${last.layers.tools}  ${int(last.tokens.tools)} tok`);
    lines.push(`  system  ${last.layers.system}  ${int(last.tokens.system)} tok`);
    lines.push(
      seam >= 0
        ? `  frozen  ${last.layers.frozen}  ${int(frozenTokens)} tok (messages 0–${seam})`
        : `  frozen  (no seam)`,
    );
    lines.push(`  tail    ${last.layers.tail}  ${int(tailTokens)} tok (messages ${seam + 1}–${msgCount - 1})`);
  }
  const busts = input.attributions.filter((a) => a.cause !== "none");
  if (busts.length === 0) lines.push("No cache busts recorded.");
  else {
    const shown = busts.slice(-(input.showBusts ?? 5)).reverse();
    lines.push(`Cache busts (${shown.length} of ${busts.length}, newest first):`);
    for (const b of shown) {
      lines.push(`  ${clock(b.at)}  ${b.cause.padEnd(15)} ${int(b.rewrittenTokens)} tok re-written ≈ ${int(b.estimatedCost)} — ${b.detail}`);
    }
    const total = busts.reduce((s, b) => s + b.estimatedCost, 0);
    const ours = busts.filter((b) => b.cause === "keeper-rewrite").reduce((s, b) => s + b.estimatedCost, 0);
    lines.push(`Estimated bust cost: ${int(total)} (of which this extension: ${int(ours)}), in uncached-input-token units.`);
  }
  return lines.join("\n");
}

function whyLine(e: GateLogEntry): string {
  const d = e.decision;
  const n = d.numbers;
  const verdict =
    d.reason === "nothing-removed"
      ? "nothing to remove"
      : d.reason === "cold-cache"
        ? `applied: cache cold, rewrite free; saves ${int(n.saving)}`
        : d.reason === "forced"
          ? `applied: history is re-written from here anyway; ${e.mutationIds.length} ride along`
          : d.apply
          ? `applied: saving ${int(n.saving)} > rewrite ${int(n.rewriteCost)}`
          : `deferred: saving ${int(n.saving)} ≤ rewrite ${int(n.rewriteCost)}`;
  const breakEven = n.breakEvenRequests === null ? "" : `; breaks even after ${dec(n.breakEvenRequests, 1)} requests`;
  return (
    `${clock(e.at)}  ${e.label}: ${e.mutationIds.length} mutation(s) from position ${e.position} — ${verdict}\n` +
    `    removed ${int(n.tokensRemoved)} tok, re-written ${int(n.rewrittenTokens)} tok × (${dec(n.writePrice)} − ${dec(n.readPrice)}), ` +
    `N ${dec(n.expectedRequests)}, usage ${dec(n.usage * 100, 0)}%, relief ${int(n.relief)}${breakEven}` +
    (n.cacheRule ? `\n    priced as ${n.cacheRule}${n.writePremium === false ? " (re-written tokens cost plain input)" : ""}` : "")
  );
}

export function formatWhyReport(log: GateDecisionLog, count = 5): string {
  const entries = latestGateDecisions(log, count);
  if (entries.length === 0) return "No gate decisions yet.";
  return [`Last ${entries.length} gate decision(s), newest first:`, ...entries.map(whyLine)].join("\n");
}
