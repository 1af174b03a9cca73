/**
 * The pure half of a flush, shared by the live extension and the replay report:
 * what to capture, and the plan once summaries exist. Effects (the summarizer call,
 * session writes) belong to the caller.
 */
import { budgetTriggerFiresFor } from "../flush/budget-trigger.ts";
import { captureBatches, type CaptureResult } from "../flush/capture.ts";
import { planFlush, type BoundaryHook, type FlushPlan, type ThinkingBoundaryFn } from "../flush/plan.ts";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import type { BatchSummary } from "../summarize/batch.ts";
import { computeThinkingBoundary } from "../thinking/index.ts";
import { pruneConfigFrom, thinkingPolicyFor, type ModelIdentityInput } from "./config.ts";

export interface FlushInputs {
  state: KeeperState;
  branchMessages: readonly ContextMessage[];
  /** The closing assistant message Pi has not persisted yet (message_end fires first). */
  closingMessage?: ContextMessage;
  settings: KeeperSettings;
  model: ModelIdentityInput | undefined;
}

export function captureForFlush(inputs: FlushInputs): CaptureResult {
  return captureBatches({
    branchMessages: inputs.branchMessages,
    closingMessage: inputs.closingMessage,
    state: inputs.state,
    config: pruneConfigFrom(inputs.settings),
  });
}

export function thinkingBoundaryFnFor(settings: KeeperSettings, model: ModelIdentityInput | undefined): ThinkingBoundaryFn | undefined {
  if (!thinkingPolicyFor(settings, model).strip) return undefined;
  const keep = settings.thinkingStrip.keepLastTurns;
  return ({ assistantTimestamps, previous }) => computeThinkingBoundary(assistantTimestamps, keep, previous);
}

export function planKeeperFlush(
  inputs: FlushInputs & { summaries: readonly BatchSummary[]; now: number; boundaryHooks?: readonly BoundaryHook[] },
): FlushPlan {
  return planFlush({
    state: inputs.state,
    branchMessages: inputs.branchMessages,
    closingMessage: inputs.closingMessage,
    summaries: inputs.summaries,
    config: pruneConfigFrom(inputs.settings),
    now: inputs.now,
    thinkingBoundary: thinkingBoundaryFnFor(inputs.settings, inputs.model),
    boundaryHooks: inputs.boundaryHooks,
  });
}

export interface BudgetTriggerInput {
  settings: KeeperSettings;
  /** Current context tokens (Pi's usage estimate). */
  contextTokens: number;
  /** Context tokens right after the last flush (0 before the first). */
  tokensAtLastFlush: number;
  contextWindow: number;
}

/** Mid-loop flush trigger of the live extension: `src/flush/budget-trigger.ts` on the user's settings. */
export function budgetTriggerFires(input: BudgetTriggerInput): boolean {
  if (!input.settings.enabled || !input.settings.pruning.enabled) return false;
  return budgetTriggerFiresFor({ ...input, trigger: input.settings.pruning.budgetTrigger });
}
