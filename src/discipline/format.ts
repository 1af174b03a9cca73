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
    lines.push(`Last request ${clock(last.at)} UTC · ${last.model} · thinking ${last.thinkingLevel} (layer hash, estimated tokens):`);
    lines.push(`  tools   ${last.layers.tools}  ${int(last.tokens.tools)} tokens`);
    lines.push(`  system  ${last.layers.system}  ${int(last.tokens.system)} tokens`);
    lines.push(
      seam >= 0
        ? `  frozen  ${last.layers.frozen}  ${int(frozenTokens)} tokens (messages 0–${seam})`
        : `  frozen  (no seam)`,
    );
    lines.push(`  tail    ${last.layers.tail}  ${int(tailTokens)} tokens (messages ${seam + 1}–${msgCount - 1})`);
  }
  const busts = input.attributions.filter((a) => a.cause !== "none");
  if (busts.length === 0) lines.push("No cache rewrites seen since Pi started.");
  else {
    const shown = busts.slice(-(input.showBusts ?? 5)).reverse();
    lines.push(`Cache busts (${shown.length} of ${busts.length}, newest first):`);
    for (const b of shown) {
      lines.push(`  ${clock(b.at)} UTC  ${b.cause.padEnd(15)} ${int(b.rewrittenTokens)} tokens re-written ≈ ${int(b.estimatedCost)} tok-eq — ${b.detail}`);
    }
    const total = busts.reduce((s, b) => s + b.estimatedCost, 0);
    const ours = busts.filter((b) => b.cause === "keeper-rewrite").reduce((s, b) => s + b.estimatedCost, 0);
    lines.push(`Estimated bust cost: ${int(total)} tok-eq (of which this extension: ${int(ours)} tok-eq); tok-eq = the price of one uncached input token.`);
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
        ? d.apply
          ? `applied: the cache was cold, so the rewrite was free; saves ≈ ${int(n.saving)} tok-eq`
          : `waited: the cache was cold, but the saving ≈ ${int(n.saving)} tok-eq does not cover the reasoning it drops ≈ ${int(n.reasoningCost ?? 0)} tok-eq`
        : d.reason === "forced"
          ? `applied: history is re-written from here anyway; ${e.mutationIds.length} change(s) ride along`
          : d.apply
          ? `applied: saves ≈ ${int(n.saving)} tok-eq > rewrite ≈ ${int(n.rewriteCost + (n.reasoningCost ?? 0))} tok-eq`
          : `waited: saves ≈ ${int(n.saving)} tok-eq ≤ rewrite ≈ ${int(n.rewriteCost + (n.reasoningCost ?? 0))} tok-eq`;
  const breakEven = n.breakEvenRequests === null ? "" : `; pays back after ${dec(n.breakEvenRequests, 1)} requests`;
  const reasoning =
    n.reasoningDropped === undefined
      ? ""
      : `\n    drops ${int(n.reasoningDropped)} tokens of the model's later thinking (reasoning bound to its prefix) ≈ ${int(n.reasoningCost ?? 0)} tok-eq at the output price`;
  return (
    `${clock(e.at)} UTC  ${e.label}: ${e.mutationIds.length} change(s) from message ${e.position} — ${verdict}${breakEven}\n` +
    `    removes ${int(n.tokensRemoved)} tokens; re-writes ${int(n.rewrittenTokens)} cached tokens × (write ${dec(n.writePrice)} − read ${dec(n.readPrice)} tok-eq per token); ` +
    `expected further requests ${dec(n.expectedRequests, 1)}; context ${dec(n.usage * 100, 0)}% full; pressure relief ${int(n.relief)} tok-eq` +
    reasoning +
    (n.cacheRule ? `\n    priced as ${n.cacheRule}${n.writePremium === false ? " (re-written tokens cost plain input)" : ""}` : "")
  );
}

export function formatWhyReport(log: GateDecisionLog, count = 5): string {
  const entries = latestGateDecisions(log, count);
  if (entries.length === 0) return "No gate decisions yet.";
  return [`Last ${entries.length} gate decision(s), newest first (tok-eq: the price of one uncached input token):`, ...entries.map(whyLine)].join("\n");
}
