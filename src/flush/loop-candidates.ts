/**
 * What a flush inside the running tool loop could prune there, estimated cheaply at a turn end
 * (the in-loop trigger, `src/engine/triggers.ts`; the flush itself then measures the real thing):
 * the loop's finished batches older than its last `keepRecentSteps` steps whose outputs still
 * render raw — as capture takes them (protected tools and paths, `keeper_recall` copies and
 * batches under `minBatchChars` are left out) — and the tokens their stubs would free.
 *
 * The current loop's assistant messages (thinking, signatures, calls) are never candidates: only
 * tool results are, and every call keeps its result (a stub in its place).
 */
import { messageTokens } from "../discipline/history-view.ts";
import type { LoopShape } from "../discipline/loop-horizon.ts";
import { isRecallCopy, type PruneConfig } from "../prune/config.ts";
import { pairToolCalls, type CallOccurrence } from "../prune/occurrence.ts";
import { protectionMatcher } from "../prune/protection.ts";
import { isToolResult, toolResultText, type ContextMessage } from "../session/messages.ts";
import type { KeeperState } from "../state/schema.ts";

/** What a stub of one output is estimated to carry (its recall line and an extractive summary), in tokens. */
export const STUB_TOKENS_ESTIMATE = 100;

export interface LoopCandidates {
  /** Raw index of the first candidate output (undefined: none). */
  position: number | undefined;
  /** Tokens the candidates' stubs would free (raw output − the stub's estimate, each). */
  tokensRemoved: number;
  /** Candidate outputs. */
  outputs: number;
}

/**
 * Raw index from which the loop's last `keep` tool steps start (their batches stay raw inside
 * the loop); `messages.length` when `keep` is 0.
 */
export function recentStepsFrom(shape: LoopShape, keep: number, length: number): number {
  if (keep <= 0) return length;
  const steps = shape.stepIndices;
  return keep >= steps.length ? shape.loopStart : steps[steps.length - keep]!;
}

export function loopCandidates(input: { messages: readonly ContextMessage[]; shape: LoopShape; state: KeeperState; config: PruneConfig }): LoopCandidates {
  const { messages, shape, state, config } = input;
  const none: LoopCandidates = { position: undefined, tokensRemoved: 0, outputs: 0 };
  if (!config.enabled || !shape.running) return none;
  const recentFrom = recentStepsFrom(shape, Math.max(1, config.loopFlush.keepRecentSteps), messages.length);
  if (recentFrom <= shape.loopStart) return none;
  const loop = messages.slice(shape.loopStart, recentFrom);
  const pairing = pairToolCalls(loop);
  const hidden = new Set([...state.frontier.stubbedKeys, ...Object.keys(state.frontier.aliases)]);
  const protection = protectionMatcher(config);
  const byAssistant = new Map<number, CallOccurrence[]>();
  for (const c of pairing.calls) {
    if (!c.replayed) continue;
    const group = byAssistant.get(c.assistantIndex);
    if (group) group.push(c);
    else byAssistant.set(c.assistantIndex, [c]);
  }
  let position: number | undefined;
  let tokensRemoved = 0;
  let outputs = 0;
  for (const group of byAssistant.values()) {
    if (group.some((c) => c.resultIndex === undefined)) continue;
    const kept = group.filter((c) => !hidden.has(c.key) && !isRecallCopy(c.toolName) && !protection.isProtected(c.toolName, c.arguments));
    let chars = 0;
    let tokens = 0;
    for (const c of kept) {
      const r = loop[c.resultIndex!]!;
      if (!isToolResult(r)) continue;
      chars += toolResultText(r).length;
      tokens += Math.max(0, messageTokens(r) - STUB_TOKENS_ESTIMATE);
    }
    if (kept.length === 0 || chars < config.minBatchChars || tokens <= 0) continue;
    const first = shape.loopStart + Math.min(...kept.map((c) => c.resultIndex!));
    position = position === undefined ? first : Math.min(position, first);
    tokensRemoved += tokens;
    outputs += kept.length;
  }
  return { position, tokensRemoved, outputs };
}
