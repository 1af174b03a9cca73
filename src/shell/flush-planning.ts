/**
 * The flush plan and its adoption: when flushes run at all, planning through cache
 * discipline when it is on, and persisting + adopting a plan and the recall it needs.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FlushPlan } from "../flush/plan.ts";
import { thinkingPolicyFor } from "../keeper/config.ts";
import { planDisciplinedFlush } from "../keeper/discipline.ts";
import { planKeeperFlush, type FlushInputs } from "../keeper/flush.ts";
import { keeperRender } from "../keeper/render.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { CUSTOM_TYPE_RECALL, recallDelta } from "../recall/recall-entries.ts";
import type { RecallIndex } from "../recall/recall-index.ts";
import type { PruningMemory, PruningRuntimeDeps } from "./pruning-types.ts";
import { modelIdentity } from "./session-view.ts";

/** Flushes run when pruning is on, or when the thinking strip is on for this model (its boundary moves only at flushes). */
export function flushesActive(deps: PruningRuntimeDeps, ctx: ExtensionContext): boolean {
  const s = deps.settings();
  return s.enabled && (s.pruning.enabled || thinkingPolicyFor(s, modelIdentity(ctx)).strip);
}

export function disciplineOn(deps: PruningRuntimeDeps): boolean {
  return deps.discipline !== undefined && deps.settings().cache.discipline;
}

export interface PlanFlushOptions {
  deps: PruningRuntimeDeps;
  now: () => number;
  inputs: FlushInputs & { summaries: readonly BatchSummary[] };
  ctx: ExtensionContext;
  /** Names the flush in the discipline's decision log. */
  label: string;
}

/** The flush plan, through cache discipline when it is on. */
export function planFlush({ deps, now, inputs, ctx, label }: PlanFlushOptions): FlushPlan {
  const at = now();
  if (!disciplineOn(deps) || !deps.discipline) return planKeeperFlush({ ...inputs, now: at });
  const d = planDisciplinedFlush({
    cache: inputs.settings.cache,
    facts: deps.discipline.facts(ctx),
    now: at,
    label,
    plan: (boundaryHooks) => planKeeperFlush({ ...inputs, now: at, boundaryHooks }),
    render: (messages, s) => keeperRender({ messages, state: s, settings: inputs.settings, model: inputs.model }),
  });
  deps.discipline.recordFlush(d.outcome, d.plan.nextState.stats.rewritesCaused > inputs.state.stats.rewritesCaused);
  return d.plan;
}

export interface CommitFlushOptions {
  pi: ExtensionAPI;
  memory: PruningMemory;
  nextRecall: RecallIndex;
  plan: FlushPlan;
}

/** Persist what the recall index gained and the plan's entries, then adopt both. */
export function commitFlush({ pi, memory, nextRecall, plan }: CommitFlushOptions): void {
  const recallAdded = recallDelta(memory.recall, nextRecall);
  if (recallAdded) pi.appendEntry(CUSTOM_TYPE_RECALL, recallAdded);
  memory.recall = nextRecall;
  for (const entry of plan.entriesToPersist) pi.appendEntry(entry.customType, entry.data);
  memory.state = plan.nextState;
}
