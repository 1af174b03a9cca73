/**
 * Validation glue between the live Pi context and the pure checks, plus the small,
 * guarded predicates that decide which apply path may run.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { modelKeyOf, settingsKeyOf } from "./controller.ts";
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

export interface LiveValidationInput {
  ctx: ExtensionContext;
  snapshot: JobSnapshot;
  result: ReadyCompaction;
  branch: SessionEntry[];
  settings: CompactionSettings;
  thinkingLevel: string;
  customInstructions?: string;
  primitives: PiCompactionPrimitives;
  /** The messages as they will be sent (the keeper's render); default: as they are. */
  sentContext?: (messages: AgentMessage[], ctx: ExtensionContext) => AgentMessage[];
  /** The result as it will be applied (caught up to Pi's cut, `catch-up.ts`), for the size check; default `result`. */
  applied?: Pick<ReadyCompaction, "summary" | "firstKeptEntryId" | "details">;
}

export function validateAgainstLive(input: LiveValidationInput): ValidationResult & { previewTokens: number } {
  const { ctx, snapshot, result, branch, settings } = input;
  const sent = input.sentContext;
  const previewTokens = previewAfterApply(branch, input.applied ?? result, input.primitives, sent ? (messages) => sent(messages, ctx) : undefined).tokens;
  const contextWindow = ctx.model?.contextWindow ?? ctx.getContextUsage()?.contextWindow ?? 0;
  const verdict = validateReadyJob({
    snapshot,
    result,
    current: {
      sessionId: ctx.sessionManager.getSessionId(),
      modelKey: modelKeyOf(ctx.model),
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
export function isSafeIdle(ctx: Pick<ExtensionContext, "isIdle" | "hasPendingMessages">): boolean {
  return ctx.isIdle() && !ctx.hasPendingMessages();
}
