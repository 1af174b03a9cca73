/**
 * The cache is already lost (TTL, model, thinking level, tools, compaction): apply what
 * waits, synchronously and without the summarizer (summaries of earlier flushes are in the
 * state), before this request renders.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { prunedCallsOf } from "../recall/pruned-calls.ts";
import { recordOriginals } from "../recall/recall-index.ts";
import { commitFlush, disciplineOn, flushesActive, planFlush } from "./flush-planning.ts";
import type { PruningMemory, PruningRuntimeDeps } from "./pruning-types.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";

export interface ColdReplanOptions {
  deps: PruningRuntimeDeps;
  now: () => number;
  memory: PruningMemory;
  ctx: ExtensionContext;
  /** A flush is running: it will plan itself, so no re-plan here. */
  flushInFlight: boolean;
}

export function coldReplan({ deps, now, memory, ctx, flushInFlight }: ColdReplanOptions): void {
  if (!flushesActive(deps, ctx) || !disciplineOn(deps) || flushInFlight || !deps.discipline?.facts(ctx).cold) return;
  const settings = deps.settings();
  const branchMessages = contextMessagesOf(ctx);
  const { state } = memory;
  const plan = planFlush({
    deps,
    now,
    inputs: { state, branchMessages, settings, model: modelIdentity(ctx), summaries: [] },
    ctx,
    label: `flush ${state.stats.flushes + 1} (cold)`,
  });
  // Only a re-plan that changes history is worth persisting here; a boundary move waits for the next flush.
  if (plan.nextState.stats.rewritesCaused === state.stats.rewritesCaused) return;
  const recorded = recordOriginals(memory.recall, { calls: prunedCallsOf(branchMessages, plan.nextState) });
  commitFlush({ pi: deps.pi, memory, nextRecall: recorded.index, plan });
}
