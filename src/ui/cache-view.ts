/**
 * `/keeper cache`: one plain sentence about the prompt cache (totals since the extension
 * started in this session), then how this extension's history changes (the count in `/keeper
 * stats`) ended up on the wire. `/keeper cache --detail` adds the internals: the last
 * request's cache layers (hashes, estimated tokens) and the recent cache rewrites with their
 * cause and cost. Every count comes from the one tally (`rewrite-tally.ts`); the list is the
 * newest of those same rewrites, so the two never disagree. Pure text.
 */
import type { ReasoningDropTally } from "../cache/reasoning-drops.ts";
import type { RewriteTally } from "../discipline/rewrite-tally.ts";
import type { BustAttribution, BustCause, RequestFingerprint } from "../discipline/schema.ts";

export interface CacheViewInput {
  fingerprints: readonly RequestFingerprint[];
  /** The newest cache rewrites (requests that wrote cached history again), oldest first: a short ring of the ones the tally counts. */
  busts: readonly BustAttribution[];
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
/** UTC clock time, so the text does not depend on the machine's zone. */
const clock = (ms: number): string => new Date(ms).toISOString().slice(11, 19);

export function cacheSummary(input: CacheViewInput): string {
  const t = input.tally;
  if (t.requests === 0) return "Prompt cache: no request sent yet in this session, nothing to report.";
  if (t.compared === 0) return "Prompt cache: one request sent so far, nothing to compare it with yet.";
  if (t.busts === 0) return `Prompt cache: each of the ${plural(t.requests, "request")} so far extended the one before (no cached history had to be written again).`;
  const others = t.busts - t.keeperBusts;
  const cost = t.keeperBusts > 0 ? ` (extra cost: the price of ≈ ${int(t.keeperBustCost)} uncached input tokens)` : "";
  return (
    `Prompt cache: ${t.busts} of ${plural(t.requests, "request")} had to write cached history again — ` +
    `${t.keeperBusts} because this extension changed history${cost}, ${others} for other reasons (the cache expired, or the model, thinking level, tools or system prompt changed).`
  );
}

/** Reconciles the count in `/keeper stats` with the wire: where each history change went. */
export function rewriteReconciliation(input: CacheViewInput): string | undefined {
  const t = input.tally;
  if (input.sessionRewrites === 0 && t.recorded === 0) return undefined;
  const before = Math.max(0, input.sessionRewrites - t.recorded);
  const parts: string[] = [];
  if (t.billed) parts.push(`${t.billed} made the provider write cached history again`);
  if (t.free) parts.push(`${t.free} landed on a request whose cache was lost anyway (free)`);
  if (t.uncached) parts.push(`${t.uncached} changed nothing the provider had cached`);
  if (t.unobserved) parts.push(`${t.unobserved} went out with the first request (nothing to compare with)`);
  if (t.pending) parts.push(`${t.pending} not sent yet (takes effect at the next request)`);
  if (before) parts.push(`${before} before Pi loaded this session (not tracked here)`);
  return `This extension changed history already sent ${times(input.sessionRewrites)} in this session (as /keeper stats counts): ${parts.join("; ")}.`;
}

/** What the provider reported dropping of the model's reasoning (managed-effort Claude, GPT-6.2+), or undefined when nothing was. */
export function reasoningDropLine(input: Pick<CacheViewInput, "reasoning">): string | undefined {
  const r = input.reasoning;
  if (!r || r.requests === 0) return undefined;
  return (
    `Reasoning: the provider dropped ${plural(r.blocksLost, "thinking block")} the model had written, reported on ${plural(r.requests, "request")} — ` +
    `${r.afterKeeperRewrite} after this extension changed earlier history (counted as a cost when it decided to), ${r.blocksLost - r.afterKeeperRewrite} for other reasons.`
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

const CAUSE_WORDS: Record<BustCause, string> = {
  none: "none",
  "keeper-rewrite": "this extension changed history",
  "model-switch": "the model changed",
  "thinking-change": "the thinking level changed",
  "tool-change": "the tools changed",
  "system-change": "the system prompt changed",
  "ttl-expiry": "the cache expired",
  unknown: "cause unknown",
};

/** The last request's layers (tools, system, frozen history up to the cache mark, the tail after it). */
function layerLines(last: RequestFingerprint): string[] {
  const seam = last.seamMessageIndex;
  const msgCount = last.tokens.messages.length;
  const frozenTokens = last.tokens.messages.slice(0, seam + 1).reduce((a, b) => a + b, 0);
  const tailTokens = last.tokens.messages.slice(seam + 1).reduce((a, b) => a + b, 0);
  return [
    `Last request ${clock(last.at)} UTC · ${last.model} · thinking ${last.thinkingLevel} (layer, hash, estimated tokens):`,
    `  tools   ${last.layers.tools}  ${int(last.tokens.tools)} tokens`,
    `  system  ${last.layers.system}  ${int(last.tokens.system)} tokens`,
    seam >= 0 ? `  frozen  ${last.layers.frozen}  ${int(frozenTokens)} tokens (messages 0–${seam}, up to the seam mark)` : `  frozen  (no seam mark)`,
    `  tail    ${last.layers.tail}  ${int(tailTokens)} tokens (messages ${seam + 1}–${msgCount - 1})`,
  ];
}

/** The newest cache rewrites, at most `show`, with the same total the summary counts. */
export function bustLines(input: Pick<CacheViewInput, "busts" | "tally">, show = 5): string[] {
  const total = input.tally.busts;
  if (total === 0) return ["No cache rewrites since this extension started in this session."];
  const shown = input.busts.slice(-show).reverse();
  const lines = [`Cache rewrites (the newest ${shown.length} of ${total}; cost in input-token units, 1 = one uncached input token):`];
  for (const b of shown) {
    lines.push(`  ${clock(b.at)} UTC  ${b.cause.padEnd(15)} ${int(b.rewrittenTokens)} tokens written again ≈ ${int(b.estimatedCost)} — ${CAUSE_WORDS[b.cause]}: ${b.detail}`);
  }
  lines.push(`All ${total}: this extension's ${input.tally.keeperBusts} cost ≈ ${int(input.tally.keeperBustCost)} (the figure in the first line).`);
  return lines;
}

export function formatCacheDetail(input: CacheViewInput): string {
  const last = input.fingerprints[input.fingerprints.length - 1];
  const reasons = input.reasoning && input.reasoning.reasons.length > 0 ? [`Reasoning dropped, as the provider gave the reason: ${input.reasoning.reasons.join(", ")}.`] : [];
  return [...(last === undefined ? ["No request seen yet."] : layerLines(last)), ...bustLines(input), ...reasons].join("\n");
}

export function formatCacheView(input: CacheViewInput, options: { detail?: boolean } = {}): string {
  const lines = [cacheSummary(input)];
  const reconciled = rewriteReconciliation(input);
  if (reconciled) lines.push(reconciled);
  const reasoning = reasoningDropLine(input);
  if (reasoning) lines.push(reasoning);
  const warming = warmingLine(input);
  if (warming) lines.push(warming);
  if (options.detail) lines.push("", formatCacheDetail(input));
  else if (input.tally.requests > 0) lines.push("/keeper cache --detail shows each rewrite with its cause and cost, and how the last request was built.");
  return lines.join("\n");
}
