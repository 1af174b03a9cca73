/**
 * A flush proposal as a list of mutations over the raw branch: which messages each one may
 * touch, which of those actually change in the next request, where the first change is and
 * how many tokens it removes. Also the way back: the proposal restricted to chosen ids.
 *
 * Removal per message = tokens in the next request without the proposal − with it. A message
 * touched by several mutations (a stub inside a compressed chain) is shared evenly.
 */
import type { FlushProposal } from "../flush/plan.ts";
import { pairToolCalls } from "../prune/occurrence.ts";
import { isAssistant, timestampOf, type ContextMessage } from "../session/messages.ts";
import { slotJsonChars, slotsDiffer, type RenderedSlot } from "./history-view.ts";
import type { MutationKind } from "./piggyback.ts";

export interface ProposalMutation {
  id: string;
  kind: MutationKind | "alias";
  /** Raw indices the mutation may touch. */
  range: number[];
  /** Raw indices that change in the next request. */
  changed: number[];
  /** First changed raw index (undefined: the mutation changes no byte of the next request). */
  position: number | undefined;
  /** Last changed raw index. */
  end: number | undefined;
  tokensRemoved: number;
  /**
   * Serialized characters the render without the thinking strip loses (`slotJsonChars` over
   * `MeasureInput.withoutStrip`), shared among the pruning mutations that change the message;
   * 0 for the thinking boundary's own move. The savings estimate.
   */
  jsonCharsRemoved: number;
}

export const thinkingMutationId = (ts: number | undefined): string => `thinking:${ts}`;

function rangeByTimestamps(messages: readonly ContextMessage[], from: number, to: number): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => {
    const t = timestampOf(m);
    if (t !== undefined && t >= from && t <= to) out.push(i);
  });
  return out;
}

/** The mutations of a proposal with the raw ranges they may touch (before measuring). */
export function proposalRanges(
  proposal: FlushProposal,
  messages: readonly ContextMessage[],
  previousThinkingBoundary: number | undefined,
): Array<{ id: string; kind: ProposalMutation["kind"]; range: number[] }> {
  const pairing = pairToolCalls(messages);
  const byKey = new Map(pairing.calls.map((c) => [c.key, c]));
  const out: Array<{ id: string; kind: ProposalMutation["kind"]; range: number[] }> = [];
  const resultOf = (k: string) => {
    const r = byKey.get(k)?.resultIndex;
    return r === undefined ? [] : [r];
  };
  for (const k of proposal.stubKeys) out.push({ id: `stub:${k}`, kind: "stub", range: resultOf(k) });
  for (const k of Object.keys(proposal.aliases)) out.push({ id: `alias:${k}`, kind: "alias", range: resultOf(k) });
  for (const k of proposal.purgeErrorKeys) {
    const a = byKey.get(k)?.assistantIndex;
    out.push({ id: `purge:${k}`, kind: "purge-error", range: a === undefined ? [] : [a] });
  }
  for (const c of proposal.chains) out.push({ id: c.chainKey, kind: "collapse-chain", range: rangeByTimestamps(messages, c.fromTimestamp, c.toTimestamp) });
  const b = proposal.thinkingStripBoundaryTimestamp;
  if (b !== undefined && b !== previousThinkingBoundary) {
    const from = previousThinkingBoundary ?? Number.NEGATIVE_INFINITY;
    const range: number[] = [];
    messages.forEach((m, i) => {
      const t = timestampOf(m);
      if (isAssistant(m) && t !== undefined && t >= from && t < b) range.push(i);
    });
    out.push({ id: thinkingMutationId(b), kind: "strip-thinking", range });
  }
  return out;
}

export interface MeasureInput {
  proposal: FlushProposal;
  messages: readonly ContextMessage[];
  previousThinkingBoundary: number | undefined;
  /** Next request as things stand, per raw index. */
  without: readonly RenderedSlot[];
  /** Next request with the whole proposal applied, per raw index. */
  withAll: readonly RenderedSlot[];
  /** A rendered message as the render without the thinking strip has it (default: itself). */
  withoutStrip?: (m: ContextMessage) => ContextMessage;
}

export function measureMutations(input: MeasureInput): ProposalMutation[] {
  const ranges = proposalRanges(input.proposal, input.messages, input.previousThinkingBoundary);
  const changedAt = (i: number): boolean => i < input.without.length && slotsDiffer(input.without[i], input.withAll[i]);
  const changed = ranges.map((r) => r.range.filter(changedAt));
  const share = new Map<number, number>();
  const pruningShare = new Map<number, number>();
  changed.forEach((c, n) => {
    for (const i of c) {
      share.set(i, (share.get(i) ?? 0) + 1);
      if (ranges[n].kind !== "strip-thinking") pruningShare.set(i, (pruningShare.get(i) ?? 0) + 1);
    }
  });
  const unstrip = input.withoutStrip;
  return ranges.map((r, n) => {
    const c = changed[n];
    const removed = c.reduce((s, i) => s + (input.without[i].tokens - input.withAll[i].tokens) / (share.get(i) ?? 1), 0);
    const jsonRemoved =
      r.kind === "strip-thinking"
        ? 0
        : c.reduce((s, i) => s + (slotJsonChars(input.without[i], unstrip) - slotJsonChars(input.withAll[i], unstrip)) / (pruningShare.get(i) ?? 1), 0);
    return {
      ...r,
      changed: c,
      position: c.length > 0 ? Math.min(...c) : undefined,
      end: c.length > 0 ? Math.max(...c) : undefined,
      tokensRemoved: removed,
      jsonCharsRemoved: jsonRemoved,
    };
  });
}

/** The proposal restricted to the mutations with the given ids (the thinking boundary is all or nothing). */
export function restrictProposal(proposal: FlushProposal, ids: ReadonlySet<string>, previousThinkingBoundary: number | undefined): FlushProposal {
  const b = proposal.thinkingStripBoundaryTimestamp;
  return {
    stubKeys: proposal.stubKeys.filter((k) => ids.has(`stub:${k}`)),
    aliases: Object.fromEntries(Object.entries(proposal.aliases).filter(([k]) => ids.has(`alias:${k}`))),
    purgeErrorKeys: proposal.purgeErrorKeys.filter((k) => ids.has(`purge:${k}`)),
    chains: proposal.chains.filter((c) => ids.has(c.chainKey)),
    thinkingStripBoundaryTimestamp: b === previousThinkingBoundary || ids.has(thinkingMutationId(b)) ? b : previousThinkingBoundary,
  };
}
