/** Pure text for `/keeper stats` and the pruning part of `/keeper`. */
import type { FlushDecision } from "../flush/plan.ts";
import type { KeeperState } from "../state/schema.ts";
import type { ThinkingPolicyDecision } from "../thinking/index.ts";

export interface FlushReportView {
  trigger: string;
  batches: number;
  decisions: FlushDecision[];
  persistedEntries: number;
  durationMs: number;
}

function count(decisions: FlushDecision[], kind: FlushDecision["kind"]): number {
  return decisions.filter((d) => d.kind === kind).length;
}

export function formatStats(state: KeeperState, last: FlushReportView | undefined): string[] {
  const s = state.stats;
  const lines = [
    `flushes: ${s.flushes} (rewrites of cached history caused: ${s.rewritesCaused})`,
    `tokens saved per request (estimate): ~${s.tokensSavedEstimate}`,
    `stubbed results: ${s.stubbedResults} · purged failed-call arguments: ${s.purgedErrors} · compressed chains: ${s.compressedChains}`,
    `summarizer: ${s.summarizerInputTokens} input + ${s.summarizerOutputTokens} output tokens, $${s.summarizerCost.toFixed(4)}`,
    `thinking boundary: ${state.frontier.thinkingStripBoundaryTimestamp === undefined ? "none yet" : new Date(state.frontier.thinkingStripBoundaryTimestamp).toISOString()}`,
  ];
  if (last) {
    lines.push(
      `last flush (${last.trigger}, ${last.durationMs} ms): ${last.batches} batches, ${count(last.decisions, "stub")} stubs, ` +
        `${count(last.decisions, "purge-error")} purges, ${count(last.decisions, "compress-chain")} chains, ` +
        `${count(last.decisions, "deferred")} deferred, ${last.persistedEntries} entries written`,
    );
  }
  return lines;
}

export function formatThinkingPolicy(model: string, decision: ThinkingPolicyDecision): string[] {
  return [`model: ${model || "(none)"}`, `strip: ${decision.strip ? "yes" : "no"} (${decision.behaviour})`, `why: ${decision.reason}`];
}
