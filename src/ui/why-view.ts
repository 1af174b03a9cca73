/**
 * `/keeper why`: one plain sentence about the newest cache-gate decision (did the last flush
 * change history, and was it worth it), then a count of the recent ones. `/keeper why
 * --detail` prints, for each recent decision, the arithmetic the gate did — every factor of
 * `priceFlush` (src/discipline/gate.ts), the chance the cache is lost anyway included — so the
 * sums on screen give the figures on screen. Pure text.
 *
 * Every figure is priced in "input-token units": 1 = the price of one uncached input token of
 * the session model (a cache read costs 0.1 of it on Anthropic, a cache write 1.25).
 */
import { latestGateDecisions } from "../discipline/gate-log.ts";
import type { GateDecisionLog, GateLogEntry, GateNumbers } from "../discipline/schema.ts";

const int = (n: number): string => Math.round(n).toLocaleString("en-US");
const dec = (n: number, digits: number): string => n.toFixed(digits);
const pct = (p: number): string => `${(p * 100).toFixed(1)}%`;
/** UTC clock time, so the text does not depend on the machine's zone. */
const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

const TRIGGER_WORDS: Record<string, string> = {
  "request-end": "at the end of a request",
  budget: "inside a long tool loop",
  manual: "asked by /keeper now",
  cold: "the cache had gone cold",
};

/** "flush 3 (request-end)" → "flush 3, at the end of a request". */
export function plainFlushLabel(label: string): string {
  const m = label.match(/^(.*) \(([a-z-]+)\)$/);
  const words = m ? TRIGGER_WORDS[m[2]!] : undefined;
  return m && words ? `${m[1]}, ${words}` : label;
}

/** ", counting a 50.0% chance the cache is lost anyway" when the gate priced one. */
function chanceNote(n: GateNumbers): string {
  const p = n.coldChance ?? 0;
  return p >= 0.0005 && p < 1 ? `, counting a ${pct(p)} chance the cache is lost anyway` : "";
}

/** " and the ≈ N tokens of later thinking the provider drops (≈ C)" on models whose reasoning is bound to its prefix. */
function reasoningNote(n: GateNumbers): string {
  return n.reasoningDropped ? ` plus the ≈ ${int(n.reasoningDropped)} tokens of the model's later thinking the provider drops (≈ ${int(n.reasoningCost ?? 0)})` : "";
}

function sentence(e: GateLogEntry): string {
  const n = e.decision.numbers;
  const what = plainFlushLabel(e.label);
  switch (e.decision.reason) {
    case "nothing-removed":
      return `Last decision (${what}): nothing to remove, so history was left as it was.`;
    case "cold-cache":
      if (!e.decision.apply && n.reasoningCost)
        return `Last decision (${what}): history left as it is — the cache was cold, but the change would make the provider drop ≈ ${int(n.reasoningDropped ?? 0)} tokens of the model's later thinking (the price of ≈ ${int(n.reasoningCost)} input tokens), more than removing ≈ ${int(n.tokensRemoved)} tokens saves.`;
      if (!e.decision.apply) return `Last decision (${what}): history left as it is — the cache was cold, but removing ≈ ${int(n.tokensRemoved)} tokens would not pay.`;
      return `Last decision (${what}): history changed, for free — the prompt cache had already expired; it removes ≈ ${int(n.tokensRemoved)} tokens from every later request.`;
    case "forced":
      return `Last decision (${what}): history was being re-written from there anyway, so ${e.mutationIds.length} more change(s) rode along at no extra cost.`;
    case "pays":
      return (
        `Last decision (${what}): history changed — removing ≈ ${int(n.tokensRemoved)} tokens saves the price of ≈ ${int(n.saving)} input tokens, ` +
        `more than re-writing ${int(n.rewrittenTokens)} cached tokens costs (≈ ${int(n.rewriteCost)}${chanceNote(n)})${reasoningNote(n)}.`
      );
    case "defers":
      return (
        `Last decision (${what}): history left as it is for now — removing ≈ ${int(n.tokensRemoved)} tokens would save the price of ≈ ${int(n.saving)} input tokens, ` +
        `less than re-writing ${int(n.rewrittenTokens)} cached tokens costs (≈ ${int(n.rewriteCost)}${chanceNote(n)})${reasoningNote(n)}; it applies once the cache expires or the saving grows.`
      );
  }
}

export function whySummary(log: GateDecisionLog): string {
  const latest = latestGateDecisions(log, log.capacity);
  const newest = latest[0];
  if (newest === undefined) return "No flush has weighed a change to history yet: history is changed only at a flush (the end of a request, a long tool loop, or /keeper now).";
  const applied = latest.filter((e) => e.decision.apply && e.decision.reason !== "nothing-removed").length;
  const waited = latest.filter((e) => !e.decision.apply && e.decision.reason !== "nothing-removed").length;
  return `${sentence(newest)} Of the last ${latest.length} decisions: ${applied} changed history, ${waited} waited.`;
}

/** Price of one token that this request (chance `p` of a lost cache) writes or reads. */
const unitOf = (p: number, n: GateNumbers): number => p * n.writePrice + (1 - p) * n.readPrice;

/**
 * The gate's sums, one per line, with the figure each gives (src/discipline/gate.ts):
 *   rewrite = rewritten × (write − read) × (1 − p)
 *   saving  = removed × (unit(p) + (N − 1) × unit(p')) + relief,  unit(x) = x × write + (1 − x) × read
 */
export function arithmeticLines(n: GateNumbers): string[] {
  const p = n.coldChance ?? 0;
  const later = n.futureColdChance ?? 0;
  const rewrite =
    `rewrite = ${int(n.rewrittenTokens)} re-written tokens × (write ${dec(n.writePrice, 3)} − read ${dec(n.readPrice, 3)}) ` +
    `× (1 − ${pct(p)} chance the cache is lost anyway) = ${int(n.rewriteCost)}`;
  const saving =
    `saving = ${int(n.tokensRemoved)} removed tokens × (this request ${dec(unitOf(p, n), 4)} + ${dec(n.expectedRequests - 1, 3)} later requests × ${dec(unitOf(later, n), 4)}) ` +
    `+ relief ${int(n.relief)} = ${int(n.saving)}`;
  const units =
    `per token: this request ${pct(p)} × write + ${pct(1 - p)} × read; each later one ${pct(later)} × write + ${pct(1 - later)} × read ` +
    `(${dec(n.expectedRequests, 2)} requests expected to read it, this one included)`;
  const relief = `relief: context ${dec(n.usage * 100, 0)}% full, pressure ${dec(n.pressure, 2)} (a compaction put off by what is removed)`;
  const reasoning =
    n.reasoningDropped === undefined
      ? []
      : [`thinking dropped = ${int(n.reasoningDropped)} tokens of the model's later thinking (reasoning bound to its prefix) × output ${dec((n.reasoningCost ?? 0) / Math.max(1, n.reasoningDropped), 3)} = ${int(n.reasoningCost ?? 0)}`];
  return [rewrite, saving, units, relief, ...reasoning];
}

function verdictOf(e: GateLogEntry): string {
  const d = e.decision;
  const n = d.numbers;
  switch (d.reason) {
    case "nothing-removed":
      return "nothing to remove";
    case "forced":
      return `applied: history is re-written from here anyway; ${e.mutationIds.length} change(s) ride along`;
    case "cold-cache":
      if (d.apply) return `applied: the cache was cold, so the rewrite was free; saves ≈ ${int(n.saving)}`;
      return n.reasoningCost ? `waited: the cache was cold, but the saving ≈ ${int(n.saving)} does not cover the thinking it drops ≈ ${int(n.reasoningCost)}` : `waited: the cache was cold, but the saving ≈ ${int(n.saving)} is too small`;
    default: {
      const cost = n.reasoningCost ? `rewrite ≈ ${int(n.rewriteCost)} + thinking dropped ≈ ${int(n.reasoningCost)}` : `rewrite ≈ ${int(n.rewriteCost)}`;
      return d.apply ? `applied: saving ≈ ${int(n.saving)} > ${cost}` : `waited: saving ≈ ${int(n.saving)} ≤ ${cost}`;
    }
  }
}

function detailOf(e: GateLogEntry): string {
  const n = e.decision.numbers;
  const lines = [`${clock(e.at)} UTC  ${e.label}: ${e.mutationIds.length} change(s) from message ${e.position} — ${verdictOf(e)}`];
  if (e.decision.reason !== "nothing-removed" && e.decision.reason !== "forced") {
    lines.push(...arithmeticLines(n).map((l) => `    ${l}`));
    if (n.breakEvenRequests !== null && n.rewriteCost > 0) lines.push(`    the read saving alone pays the rewrite back after ${dec(n.breakEvenRequests, 1)} requests`);
  }
  if (n.cacheRule) lines.push(`    priced as ${n.cacheRule}${n.writePremium === false ? " (re-written tokens cost plain input)" : ""}`);
  return lines.join("\n");
}

/** The arithmetic of the last `count` decisions, newest first. */
export function formatWhyDetail(log: GateDecisionLog, count = 5): string {
  const entries = latestGateDecisions(log, count);
  if (entries.length === 0) return "No gate decisions yet.";
  return [
    `Last ${entries.length} gate decision(s), newest first. Figures are in input-token units (1 = the price of one uncached input token; a rewrite happens when saving > rewrite):`,
    ...entries.map(detailOf),
  ].join("\n");
}

export function formatWhyView(log: GateDecisionLog, options: { detail?: boolean } = {}): string {
  if (options.detail) return [whySummary(log), "", formatWhyDetail(log)].join("\n");
  const more = latestGateDecisions(log, 1).length > 0 ? " /keeper why --detail shows the arithmetic." : "";
  return `${whySummary(log)}${more}`;
}
