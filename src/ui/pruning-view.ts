/** Pure text for `/keeper stats`, `/keeper now` and the pruning part of `/keeper`. */
import type { FlushDecision } from "../flush/plan.ts";
import type { KeeperState } from "../state/schema.ts";
import type { ThinkingPolicyDecision } from "../thinking/index.ts";
import { formatDollars } from "./status-line.ts";

export interface FlushReportView {
  trigger: string;
  batches: number;
  decisions: FlushDecision[];
  persistedEntries: number;
  durationMs: number;
}

export interface StatsViewOptions {
  /** The thinking strip applies to the current model: show its boundary. */
  thinkingStrip?: boolean;
}

const int = (n: number): string => Math.round(n).toLocaleString("en-US");

function count(decisions: FlushDecision[], kind: FlushDecision["kind"]): number {
  return decisions.filter((d) => d.kind === kind).length;
}

export function formatStats(state: KeeperState, last: FlushReportView | undefined, options: StatsViewOptions = {}): string[] {
  const s = state.stats;
  const lines = [
    `flushes: ${s.flushes} · rewrites caused: ${s.rewritesCaused} (flushes that changed history already sent; /keeper cache shows what each cost)`,
    `saving: ≈ ${int(s.tokensSavedEstimate)} tokens per request (estimate)`,
    `stubbed results: ${s.stubbedResults} · purged failed-call arguments: ${s.purgedErrors} · compressed chains: ${s.compressedChains}`,
    `summarizer: ${int(s.summarizerInputTokens)} input + ${int(s.summarizerOutputTokens)} output tokens, ${formatDollars(s.summarizerCost)} ` +
      "(not in Pi's $ footer: Pi gives extensions no way to add to it; the status line shows it)",
  ];
  if (options.thinkingStrip) {
    const boundary = state.frontier.thinkingStripBoundaryTimestamp;
    lines.push(`thinking stripped before: ${boundary === undefined ? "nothing yet (the first flush sets the boundary)" : `${new Date(boundary).toISOString()}`}`);
  }
  if (last) lines.push(lastFlushLine(last));
  return lines;
}

function lastFlushLine(last: FlushReportView): string {
  return (
    `last flush (${last.trigger}, ${int(last.durationMs)} ms): ${last.batches} batches, ${count(last.decisions, "stub")} stubs, ` +
    `${count(last.decisions, "purge-error")} purges, ${count(last.decisions, "compress-chain")} chains, ` +
    `${count(last.decisions, "deferred")} waiting for the cache, ${last.persistedEntries} entries written`
  );
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
  if (deferred) parts.push(`${deferred} change(s) waiting until they pay for the cache rewrite (/keeper why)`);
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
