/**
 * `/keeper why`: one plain sentence about the newest cache-gate decision first (did the last
 * flush change history, and was it worth it), then the numbers behind the recent decisions.
 * Pure text.
 */
import { formatWhyReport } from "../discipline/format.ts";
import { latestGateDecisions } from "../discipline/gate-log.ts";
import type { GateDecisionLog, GateLogEntry } from "../discipline/schema.ts";

const int = (n: number): string => Math.round(n).toLocaleString("en-US");

function sentence(e: GateLogEntry): string {
  const n = e.decision.numbers;
  const what = `${e.label}`;
  switch (e.decision.reason) {
    case "nothing-removed":
      return `Last decision (${what}): nothing to remove, so history was left as it was.`;
    case "cold-cache":
      if (!e.decision.apply && n.reasoningCost)
        return `Last decision (${what}): history left as it is — the cache was cold, but the change would make the provider drop ≈ ${int(n.reasoningDropped ?? 0)} tokens of the model's later thinking (≈ ${int(n.reasoningCost)} tok-eq), more than removing ≈ ${int(n.tokensRemoved)} tokens saves.`;
      if (!e.decision.apply) return `Last decision (${what}): history left as it is — the cache was cold, but removing ≈ ${int(n.tokensRemoved)} tokens would not pay.`;
      return `Last decision (${what}): history changed, for free — the prompt cache was already cold; it removes ≈ ${int(n.tokensRemoved)} tokens from every later request.`;
    case "forced":
      return `Last decision (${what}): history was being re-written from there anyway, so ${e.mutationIds.length} more change(s) rode along at no extra cost.`;
    case "pays":
      if (n.reasoningDropped)
        return `Last decision (${what}): history changed — removing ≈ ${int(n.tokensRemoved)} tokens saves more (≈ ${int(n.saving)} tok-eq) than re-writing ${int(n.rewrittenTokens)} cached tokens (≈ ${int(n.rewriteCost)} tok-eq) and the ≈ ${int(n.reasoningDropped)} tokens of later thinking the provider drops (≈ ${int(n.reasoningCost ?? 0)} tok-eq) cost.`;
      return `Last decision (${what}): history changed — removing ≈ ${int(n.tokensRemoved)} tokens saves more (≈ ${int(n.saving)} tok-eq) than re-writing ${int(n.rewrittenTokens)} cached tokens costs (≈ ${int(n.rewriteCost)} tok-eq).`;
    case "defers":
      if (n.reasoningCost)
        return `Last decision (${what}): history left as it is for now — removing ≈ ${int(n.tokensRemoved)} tokens would save ≈ ${int(n.saving)} tok-eq, less than re-writing ${int(n.rewrittenTokens)} cached tokens (≈ ${int(n.rewriteCost)} tok-eq) and the ≈ ${int(n.reasoningDropped ?? 0)} tokens of later thinking the provider would drop (≈ ${int(n.reasoningCost)} tok-eq) cost.`;
      return `Last decision (${what}): history left as it is for now — removing ≈ ${int(n.tokensRemoved)} tokens would save ≈ ${int(n.saving)} tok-eq, less than re-writing ${int(n.rewrittenTokens)} cached tokens costs (≈ ${int(n.rewriteCost)} tok-eq); it applies once the cache goes cold or the saving grows.`;
  }
}

export function whySummary(log: GateDecisionLog): string {
  const latest = latestGateDecisions(log, log.capacity);
  const newest = latest[0];
  if (newest === undefined) return "No flush has asked the cache gate yet: history is changed only at a flush (the end of a request, a long tool loop, or /keeper now).";
  const applied = latest.filter((e) => e.decision.apply && e.decision.reason !== "nothing-removed").length;
  const waited = latest.filter((e) => !e.decision.apply && e.decision.reason !== "nothing-removed").length;
  return `${sentence(newest)} Of the last ${latest.length} decisions: ${applied} changed history, ${waited} waited.`;
}

export function formatWhyView(log: GateDecisionLog): string {
  return [whySummary(log), "", "Details:", formatWhyReport(log)].join("\n");
}
