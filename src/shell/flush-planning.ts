/**
 * The flush plan and its adoption: when flushes run at all, planning through cache
 * discipline when it is on, and persisting + adopting a plan and the recall it needs.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FlushPlan } from "../flush/plan.ts";
import { thinkingPolicyFor } from "../engine/config.ts";
import { finishFlush, type FlushInputs } from "../engine/flush.ts";
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
  if (!disciplineOn(deps) || !deps.discipline) return finishFlush({ ...inputs, now: at }).plan;
  const d = finishFlush({ ...inputs, now: at, discipline: { cache: inputs.settings.cache, facts: deps.discipline.facts(ctx), label } });
  if (d.outcome) deps.discipline.recordFlush(d.outcome, d.rewrote);
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
