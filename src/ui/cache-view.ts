/**
 * `/keeper cache`: one plain sentence about the prompt cache first, then how this
 * extension's history changes (the stats' "rewrites") ended up on the wire, then the
 * internals (layer hashes, the bust list). Pure text.
 */
import { formatCacheReport } from "../discipline/format.ts";
import type { RewriteTally } from "../discipline/rewrite-tally.ts";
import type { BustAttribution, RequestFingerprint } from "../discipline/schema.ts";

export interface CacheViewInput {
  fingerprints: readonly RequestFingerprint[];
  attributions: readonly BustAttribution[];
  /** Requests seen since Pi started (warm-up pings excluded). */
  requests: number;
  tally: RewriteTally;
  /** `stats.rewritesCaused` of the session (persisted, so it spans restarts). */
  sessionRewrites: number;
}

const int = (n: number): string => Math.round(n).toLocaleString("en-US");
const times = (n: number): string => `${n} time${n === 1 ? "" : "s"}`;

export function cacheSummary(input: CacheViewInput): string {
  if (input.requests === 0) return "Prompt cache: no request sent since Pi started, nothing to report yet.";
  const busts = input.attributions.filter((a) => a.cause !== "none");
  const ours = busts.filter((a) => a.cause === "keeper-rewrite");
  const oursCost = ours.reduce((s, b) => s + b.estimatedCost, 0);
  const window = Math.min(input.requests, input.attributions.length + 1);
  if (window <= 1) return "Prompt cache: one request sent since Pi started, nothing to compare it with yet.";
  if (busts.length === 0) return `Prompt cache: each of the last ${window} requests extended the one before (no cached prefix had to be written again).`;
  const others = busts.length - ours.length;
  return (
    `Prompt cache: ${busts.length} of the last ${window} requests had to write cached history again — ` +
    `${ours.length} because this extension changed history (≈ ${int(oursCost)} tok-eq), ${others} for other reasons (TTL, model, thinking level, tools, system prompt).`
  );
}

/** Reconciles the stats' "rewrites caused" with the bust list: where each one went. */
export function rewriteReconciliation(input: CacheViewInput): string | undefined {
  const t = input.tally;
  if (input.sessionRewrites === 0 && t.recorded === 0) return undefined;
  const before = Math.max(0, input.sessionRewrites - t.recorded);
  const parts: string[] = [];
  if (t.billed) parts.push(`${t.billed} re-wrote cached history (listed below as keeper-rewrite)`);
  if (t.free) parts.push(`${t.free} landed on a request whose cache was lost anyway (free)`);
  if (t.uncached) parts.push(`${t.uncached} changed nothing the provider had cached`);
  if (t.unobserved) parts.push(`${t.unobserved} went out with the first request after Pi started (not compared)`);
  if (t.pending) parts.push(`${t.pending} not sent yet (takes effect at the next request)`);
  if (before) parts.push(`${before} before this session was loaded in this Pi run (not tracked here)`);
  return `This extension changed sent history ${times(input.sessionRewrites)} in this session ("rewrites caused" in /keeper stats): ${parts.join("; ")}.`;
}

export function formatCacheView(input: CacheViewInput): string {
  const lines = [cacheSummary(input)];
  const reconciled = rewriteReconciliation(input);
  if (reconciled) lines.push(reconciled);
  lines.push("", "Details:");
  lines.push(formatCacheReport({ fingerprints: input.fingerprints, attributions: input.attributions }));
  return lines.join("\n");
}
