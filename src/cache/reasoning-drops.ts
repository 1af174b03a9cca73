/**
 * Reasoning the provider dropped, as Pi records it: pi-ai puts the provider's
 * `input_transformations` on the assistant message as a diagnostic —
 * `anthropic_input_transformations` (`{type: "thinking_dropped", path, reason}` per thinking block)
 * or `openai_input_transformations` (`{type: "reasoning", id, action: "removed", reason}` per
 * reasoning item, `turn_boundary` removals left out by pi-ai). A removal is reported again on
 * every later request that replays the item (pi-ai `appendReasoningRemovals`), so the blocks
 * newly lost at a request are those beyond the previous request's count (as Pi's own transcript
 * notice counts them) — except at a request whose earlier history changed (a rewrite, of this
 * extension or not): what is dropped is decided anew there, so every block it reports counts.
 *
 * Pure: read by the engine at each answer (`/keeper cache`) and by the report over a recording.
 */

/** What one assistant message says was dropped from the request that produced it. */
export interface ReasoningDrop {
  blocks: number;
  reasons: string[];
}

const DROPPED_TYPE: Record<string, string> = { anthropic_input_transformations: "thinking_dropped", openai_input_transformations: "reasoning" };

/** The reasoning dropped from the request that produced `message` (undefined: none reported). */
export function reasoningDropOf(message: unknown): ReasoningDrop | undefined {
  const diagnostics = (message as { diagnostics?: unknown } | null)?.diagnostics;
  if (!Array.isArray(diagnostics)) return undefined;
  let blocks = 0;
  const reasons = new Set<string>();
  for (const d of diagnostics as Array<{ type?: unknown; details?: { transformations?: unknown } } | null>) {
    const type = typeof d?.type === "string" ? DROPPED_TYPE[d.type] : undefined;
    const list = d?.details?.transformations;
    if (type === undefined || !Array.isArray(list)) continue;
    for (const t of list as Array<{ type?: unknown; reason?: unknown; action?: unknown } | null>) {
      if (t?.type !== type || (t.action !== undefined && t.action !== "removed")) continue;
      blocks++;
      if (typeof t.reason === "string") reasons.add(t.reason);
    }
  }
  return blocks > 0 ? { blocks, reasons: [...reasons].sort() } : undefined;
}

/** Reasoning drops over a session's answers. */
export interface ReasoningDropTally {
  /** Answers whose request had reasoning dropped. */
  requests: number;
  /** Blocks newly lost: at each answer, those beyond the previous answer's count (all it reports after a rewrite). */
  blocksLost: number;
  /** Blocks newly lost at an answer whose request this extension's rewrite reached. */
  afterKeeperRewrite: number;
  /** The count the last answer reported (the next one's baseline). */
  lastBlocks: number;
  reasons: string[];
}

export function emptyReasoningDropTally(): ReasoningDropTally {
  return { requests: 0, blocksLost: 0, afterKeeperRewrite: 0, lastBlocks: 0, reasons: [] };
}

/**
 * The tally after one message: only an assistant message (an answer) counts. `rewritten`: its
 * request's earlier history changed (a bust); `keeperRewrote`: by this extension's rewrite. The
 * same object when the message changes nothing.
 */
export function tallyReasoningDrop(tally: ReasoningDropTally, message: unknown, at: { rewritten?: boolean; keeperRewrote?: boolean } = {}): ReasoningDropTally {
  if ((message as { role?: unknown } | null)?.role !== "assistant") return tally;
  const drop = reasoningDropOf(message);
  if (drop === undefined) return tally.lastBlocks === 0 ? tally : { ...tally, lastBlocks: 0 };
  const lost = at.rewritten || at.keeperRewrote ? drop.blocks : Math.max(0, drop.blocks - tally.lastBlocks);
  return {
    requests: tally.requests + 1,
    blocksLost: tally.blocksLost + lost,
    afterKeeperRewrite: tally.afterKeeperRewrite + (at.keeperRewrote ? lost : 0),
    lastBlocks: drop.blocks,
    reasons: [...new Set([...tally.reasons, ...drop.reasons])].sort(),
  };
}
