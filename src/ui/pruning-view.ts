/** Pure text for `/keeper stats`, `/keeper now` and the pruning part of `/keeper`. */
import type { FlushDecision } from "../flush/plan.ts";
import type { UnappliedSpend } from "../compaction/spend-entry.ts";
import type { KeeperState } from "../state/schema.ts";
import type { ThinkingPolicyDecision } from "../thinking/index.ts";
import { formatDollars, formatTokenCount } from "./status-line.ts";

export interface FlushReportView {
  trigger: string;
  batches: number;
  decisions: FlushDecision[];
  persistedEntries: number;
  durationMs: number;
  /** Estimated tokens this flush removed from every later request (its share of the running total). */
  tokensSaved?: number;
}

export interface StatsViewOptions {
  /** The thinking strip applies to the current model: show its boundary. */
  thinkingStrip?: boolean;
  /**
   * Estimated tokens the last render kept out of the request: the status line's "−42k pruned"
   * and `/keeper`'s "now:" figure (status-runtime.ts). Absent: the line is left out.
   */
  prunedTokens?: number;
  /** The session's background compaction summaries that were never applied (their entries): the line is left out when there are none. */
  unappliedCompaction?: UnappliedSpend;
}

const int = (n: number): string => Math.round(n).toLocaleString("en-US");

function count(decisions: FlushDecision[], kind: FlushDecision["kind"]): number {
  return decisions.filter((d) => d.kind === kind).length;
}

/** "2 outputs" / "1 output". */
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The line shared by `/keeper stats` and `/keeper`: what pruning keeps out of the next request. */
export function keptOutLine(prunedTokens: number): string {
  return prunedTokens > 0
    ? `kept out of the next request: ≈ ${int(prunedTokens)} tokens (the status line's "−${formatTokenCount(prunedTokens)} pruned")`
    : "kept out of the next request: nothing yet";
}

export function formatStats(state: KeeperState, last: FlushReportView | undefined, options: StatsViewOptions = {}): string[] {
  const s = state.stats;
  const lines = [
    `flushes that found something to prune: ${s.flushes}, ${s.rewritesCaused} of them changed history already sent (the provider then writes its cache again; /keeper cache says what that cost)`,
  ];
  if (options.prunedTokens !== undefined) lines.push(keptOutLine(options.prunedTokens));
  lines.push(
    `removed by all flushes together: ≈ ${int(s.tokensSavedEstimate)} tokens (each flush's saving, added up: the figure above ` +
      `until a compaction replaces history, which this keeps counting${options.thinkingStrip ? "; thinking the strip removed is not in it" : ""})`,
    `tool outputs replaced by summaries: ${s.stubbedResults} · failed calls whose arguments were removed: ${s.purgedErrors} · finished tool chains collapsed: ${s.compressedChains}`,
    summaryCallsLine(s),
  );
  if (options.unappliedCompaction && options.unappliedCompaction.calls > 0) lines.push(unappliedCompactionLine(options.unappliedCompaction));
  if (options.thinkingStrip) {
    const boundary = state.frontier.thinkingStripBoundaryTimestamp;
    lines.push(`thinking removed from answers before: ${boundary === undefined ? "nothing yet (the first flush sets the point)" : `${new Date(boundary).toISOString().replace("T", " ").slice(0, 19)} UTC`}`);
  }
  if (last) lines.push(lastFlushLine(last));
  return lines;
}

function summaryCallsLine(s: KeeperState["stats"]): string {
  if (s.summarizerCost === 0 && s.summarizerInputTokens === 0 && s.summarizerOutputTokens === 0) return "summary calls to a model: none so far";
  return (
    `summary calls to a model: ${int(s.summarizerInputTokens)} input + ${int(s.summarizerOutputTokens)} output tokens, ${formatDollars(s.summarizerCost)} ` +
    "(calls stopped early, e.g. at shutdown, included; not in Pi's $ footer: Pi gives extensions no way to add to it, the status line shows it)"
  );
}

/** What the background summaries never applied cost: in "you paid" of the report, and in no figure of Pi's. */
export function unappliedCompactionLine(u: UnappliedSpend): string {
  return (
    `compaction summaries made in the background and never applied: ${u.jobs} (${plural(u.calls, "call")}), ` +
    `${int(u.inputTokens)} input + ${int(u.outputTokens)} output tokens, ${formatDollars(u.cost)}` +
    `${u.estimated ? " (part estimated: calls stopped before the provider reported usage)" : ""} ` +
    "(replaced, made out of date or still waiting at the end of a session; an applied one is in Pi's $ footer)"
  );
}

const TRIGGER_WORDS: Record<string, string> = { "request-end": "end of a request", budget: "inside a long tool loop", manual: "/keeper now", cold: "the cache had expired" };

function lastFlushLine(last: FlushReportView): string {
  const d = last.decisions;
  const parts = [
    plural(last.batches, "tool batch", "tool batches"),
    `${plural(count(d, "stub") + count(d, "alias"), "output")} replaced by summaries`,
    `${plural(count(d, "purge-error"), "failed call")}' arguments removed`,
    `${plural(count(d, "compress-chain"), "chain")} collapsed`,
  ];
  const deferred = count(d, "deferred");
  if (deferred) parts.push(`${plural(deferred, "change")} put off until it pays for re-writing the cache (/keeper why)`);
  if (last.tokensSaved !== undefined) parts.push(`≈ ${int(last.tokensSaved)} tokens removed`);
  const head = `last flush (${TRIGGER_WORDS[last.trigger] ?? last.trigger}, ${int(last.durationMs)} ms)`;
  const changed = count(d, "stub") + count(d, "alias") + count(d, "purge-error") + count(d, "compress-chain") + count(d, "thinking-boundary");
  if (changed === 0 && deferred === 0 && !last.tokensSaved) return `${head}: nothing new to prune`;
  return `${head}: ${parts.join(", ")}`;
}

/** First line of the answer to `/keeper now`. */
export function flushOutcomeLine(report: FlushReportView | undefined): string {
  if (!report) return "context-keeper: nothing flushed (a flush failed or pruning is off; see the warnings above)";
  const changing: ReadonlyArray<FlushDecision["kind"]> = ["stub", "alias", "purge-error", "compress-chain", "thinking-boundary"];
  const changed = report.decisions.filter((d) => changing.includes(d.kind)).length;
  const deferred = count(report.decisions, "deferred");
  if (changed === 0 && deferred === 0) return "context-keeper: flushed — nothing new to prune since the last flush";
  const parts: string[] = [];
  const stubs = count(report.decisions, "stub") + count(report.decisions, "alias");
  if (stubs) parts.push(`${stubs} tool output(s) replaced by summaries`);
  const purges = count(report.decisions, "purge-error");
  if (purges) parts.push(`${purges} failed call(s) purged`);
  const chains = count(report.decisions, "compress-chain");
  if (chains) parts.push(`${chains} chain(s) compressed`);
  if (count(report.decisions, "thinking-boundary")) parts.push("thinking boundary moved");
  if (deferred) parts.push(`${deferred} change(s) put off until they pay for re-writing the cache (/keeper why)`);
  return `context-keeper: flushed — ${parts.join(", ")}`;
}

/** `/keeper now` on a session with no answer from the model yet: nothing a flush could touch. */
export function nothingToFlush(messages: readonly { role: string }[]): boolean {
  return !messages.some((m) => m.role === "assistant");
}

const BEHAVIOUR_TEXT: Record<ThinkingPolicyDecision["behaviour"], string> = {
  "drops-closed-cycle": "drops the thinking of earlier requests by itself",
  "keeps-all": "keeps all earlier thinking in context, billed on every call",
  unknown: "not known to drop or keep earlier thinking",
};

export function formatThinkingPolicy(model: string, decision: ThinkingPolicyDecision): string[] {
  const label = decision.row?.label ? ` (${decision.row.label})` : "";
  // The reason's first clause is the plain one; the rest repeats the model and its table row.
  const why = decision.reason.split("; ")[0] ?? decision.reason;
  return [`model: ${model || "(none)"}${label} ${BEHAVIOUR_TEXT[decision.behaviour]}`, `strip: ${decision.strip ? "yes" : "no"} — ${why}`];
}
