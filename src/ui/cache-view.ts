/**
 * `/keeper cache`: one plain sentence about the prompt cache first (totals since the
 * extension started in this session), then how this extension's history changes (the
 * stats' "rewrites caused") ended up on the wire, then the internals (layer hashes, the
 * recent cache rewrites). Pure text.
 */
import { formatCacheReport } from "../discipline/format.ts";
import type { ReasoningDropTally } from "../cache/reasoning-drops.ts";
import type { RewriteTally } from "../discipline/rewrite-tally.ts";
import type { BustAttribution, RequestFingerprint } from "../discipline/schema.ts";

export interface CacheViewInput {
  fingerprints: readonly RequestFingerprint[];
  /** The recent attributions (a ring), oldest first. */
  attributions: readonly BustAttribution[];
  tally: RewriteTally;
  /** `stats.rewritesCaused` of the session (persisted, so it spans restarts). */
  sessionRewrites: number;
  /** Reasoning the provider dropped (Pi's diagnostics), when the wire log counted it. */
  reasoning?: ReasoningDropTally;
  /** Pi's cache-warming decisions and this extension's vote on them. */
  warming?: { asked: number; stoppedForRewrite: number; stoppedForCompaction: number };
}

const int = (n: number): string => Math.round(n).toLocaleString("en-US");
const times = (n: number): string => `${n} time${n === 1 ? "" : "s"}`;
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

export function cacheSummary(input: CacheViewInput): string {
  const t = input.tally;
  if (t.requests === 0) return "Prompt cache: no request sent yet in this session, nothing to report.";
  if (t.compared === 0) return "Prompt cache: one request sent so far, nothing to compare it with yet.";
  if (t.busts === 0) return `Prompt cache: each of the ${plural(t.requests, "request")} so far extended the one before (no cached prefix had to be written again).`;
  const others = t.busts - t.keeperBusts;
  return (
    `Prompt cache: ${t.busts} of ${plural(t.requests, "request")} had to write cached history again — ` +
    `${t.keeperBusts} because this extension changed history (≈ ${int(t.keeperBustCost)} tok-eq), ${others} for other reasons (TTL, model, thinking level, tools, system prompt).`
  );
}

/** Reconciles the stats' "rewrites caused" with the wire: where each one went. */
export function rewriteReconciliation(input: CacheViewInput): string | undefined {
  const t = input.tally;
  if (input.sessionRewrites === 0 && t.recorded === 0) return undefined;
  const before = Math.max(0, input.sessionRewrites - t.recorded);
  const parts: string[] = [];
  if (t.billed) parts.push(`${t.billed} re-wrote cached history (the keeper-rewrite busts)`);
  if (t.free) parts.push(`${t.free} landed on a request whose cache was lost anyway (free)`);
  if (t.uncached) parts.push(`${t.uncached} changed nothing the provider had cached`);
  if (t.unobserved) parts.push(`${t.unobserved} went out with the first request (not compared)`);
  if (t.pending) parts.push(`${t.pending} not sent yet (takes effect at the next request)`);
  if (before) parts.push(`${before} before Pi loaded this session (not tracked here)`);
  return `This extension changed sent history ${times(input.sessionRewrites)} in this session ("rewrites caused" in /keeper stats): ${parts.join("; ")}.`;
}

/** What the provider reported dropping of the model's reasoning (managed-effort Claude, GPT-6.2+), or undefined when nothing was. */
export function reasoningDropLine(input: Pick<CacheViewInput, "reasoning">): string | undefined {
  const r = input.reasoning;
  if (!r || r.requests === 0) return undefined;
  const why = r.reasons.length > 0 ? ` (${r.reasons.join(", ")})` : "";
  return (
    `Reasoning: the provider dropped ${plural(r.blocksLost, "thinking block")} the model had written${why}, reported on ${plural(r.requests, "request")} — ` +
    `${r.afterKeeperRewrite} after this extension changed earlier history (priced by the gate as thinking to redo), ${r.blocksLost - r.afterKeeperRewrite} for other reasons.`
  );
}

/** Pi's own cache warming and this extension's vote, or undefined when Pi never offered to warm. */
export function warmingLine(input: Pick<CacheViewInput, "warming">): string | undefined {
  const w = input.warming;
  if (!w || w.asked === 0) return undefined;
  const stopped = Math.min(w.asked, w.stoppedForRewrite + w.stoppedForCompaction);
  if (stopped === 0) return `Cache warming: Pi was about to refresh the cached prefix ${times(w.asked)}; this extension let every refresh go.`;
  const why = [
    ...(w.stoppedForRewrite ? [`${w.stoppedForRewrite} because a rewrite of history it had decided would discard most of the warmed prefix`] : []),
    ...(w.stoppedForCompaction ? [`${w.stoppedForCompaction} because a compaction was about to apply`] : []),
  ];
  return `Cache warming: Pi was about to refresh the cached prefix ${times(w.asked)}; this extension stopped ${stopped} of them — ${why.join(", ")}.`;
}

export function formatCacheView(input: CacheViewInput): string {
  const lines = [cacheSummary(input)];
  const reconciled = rewriteReconciliation(input);
  if (reconciled) lines.push(reconciled);
  const reasoning = reasoningDropLine(input);
  if (reasoning) lines.push(reasoning);
  const warming = warmingLine(input);
  if (warming) lines.push(warming);
  lines.push("", `Details (the last ${plural(input.attributions.length + 1, "request")} at most):`);
  lines.push(formatCacheReport({ fingerprints: input.fingerprints, attributions: input.attributions }));
  return lines.join("\n");
}
