/**
 * Validation glue between the live session's facts and the pure checks, plus the small
 * predicate that decides whether an apply path may run now.
 */
import type { JobSnapshot, ReadyCompaction } from "./job-reducer.ts";
import { previewAfterApply } from "./preview.ts";
import type { AgentMessage, CompactionSettings, PiCompactionPrimitives, SessionEntry } from "./primitives.ts";
import { type BranchEntryInfo, validateReadyJob, type ValidationResult } from "./validate.ts";

export function branchInfo(branch: readonly SessionEntry[]): BranchEntryInfo[] {
  return branch.map((e) => ({
    id: e.id,
    isToolResult: e.type === "message" && (e.message as { role?: string }).role === "toolResult",
  }));
}

export function modelKeyOf(model: { provider: string; id: string } | undefined): string {
  return model ? `${model.provider}/${model.id}` : "";
}

export function settingsKeyOf(settings: Pick<CompactionSettings, "reserveTokens" | "keepRecentTokens">): string {
  return `reserve=${settings.reserveTokens};keep=${settings.keepRecentTokens}`;
}

/** What validation needs of the live session. */
export interface LiveSessionFacts {
  sessionId: string;
  /** `modelKeyOf(ctx.model)`. */
  modelKey: string;
  /** The session model's context window (Pi's usage's when the model has none). */
  contextWindow: number;
}

export interface LiveValidationInput {
  live: LiveSessionFacts;
  snapshot: JobSnapshot;
  result: ReadyCompaction;
  branch: SessionEntry[];
  settings: CompactionSettings;
  thinkingLevel: string;
  customInstructions?: string;
  primitives: PiCompactionPrimitives;
  /** The messages as they will be sent (the keeper's render); default: as they are. */
  sentContext?: (messages: AgentMessage[]) => AgentMessage[];
  /** The result as it will be applied (caught up to Pi's cut, `catch-up.ts`), for the size check; default `result`. */
  applied?: Pick<ReadyCompaction, "summary" | "firstKeptEntryId" | "details">;
}

export function validateAgainstLive(input: LiveValidationInput): ValidationResult & { previewTokens: number } {
  const { live, snapshot, result, branch, settings } = input;
  const previewTokens = previewAfterApply(branch, input.applied ?? result, input.primitives, input.sentContext).tokens;
  const contextWindow = live.contextWindow;
  const verdict = validateReadyJob({
    snapshot,
    result,
    current: {
      sessionId: live.sessionId,
      modelKey: live.modelKey,
      thinkingLevel: input.thinkingLevel,
      settingsKey: settingsKeyOf(settings),
      branch: branchInfo(branch),
      customInstructions: input.customInstructions,
    },
    previewTokens,
    contextWindow,
    reserveTokens: settings.reserveTokens,
  });
  return { ...verdict, previewTokens };
}

/** Pi may run `ctx.compact()` now without interrupting anything. */
export function isSafeIdle(live: { idle(): boolean; pendingMessages(): boolean }): boolean {
  return live.idle() && !live.pendingMessages();
}
