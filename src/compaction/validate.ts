/**
 * Apply-time validation of a ready job: eleven checks, in a fixed order, each with the
 * invalidation reason it produces. Pure over plain data.
 */
import type { InvalidationReason, JobSnapshot, ReadyCompaction } from "./job-reducer.ts";

/** The minimum the checks need to know about one entry of the current branch. */
export interface BranchEntryInfo {
  id: string;
  /** True for a `message` entry whose message is a `toolResult`. */
  isToolResult: boolean;
}

export interface CurrentState {
  sessionId: string;
  modelKey: string;
  thinkingLevel: string;
  settingsKey: string;
  /** The active branch, root first. */
  branch: readonly BranchEntryInfo[];
  /** `/compact <instructions>` text, when Pi is compacting on the user's request. */
  customInstructions?: string;
}

export interface ValidationInput {
  snapshot: JobSnapshot;
  result: Pick<ReadyCompaction, "firstKeptEntryId" | "summary">;
  current: CurrentState;
  /** Estimated tokens of the context Pi would build after applying the result. */
  previewTokens: number;
  contextWindow: number;
  reserveTokens: number;
}

export type ValidationResult = { ok: true } | { ok: false; reason: InvalidationReason; check: CheckName };

export type CheckName =
  | "no_custom_instructions"
  | "same_session"
  | "same_model"
  | "same_thinking_level"
  | "same_settings"
  | "result_first_kept_matches_snapshot"
  | "branch_has_first_kept"
  | "first_kept_not_tool_result"
  | "branch_has_snapshot_leaf"
  | "first_kept_not_after_snapshot_leaf"
  | "preview_fits";

interface Check {
  name: CheckName;
  reason: InvalidationReason;
  passes: (input: ValidationInput, index: BranchIndex) => boolean;
}

interface BranchIndex {
  positionOf: Map<string, number>;
}

function indexBranch(branch: readonly BranchEntryInfo[]): BranchIndex {
  const positionOf = new Map<string, number>();
  branch.forEach((entry, i) => positionOf.set(entry.id, i));
  return { positionOf };
}

/** The checks in the order they run; the first failure decides the reason. */
export const APPLY_CHECKS: readonly Check[] = [
  {
    name: "no_custom_instructions",
    reason: "custom_instructions",
    passes: (i) => !i.current.customInstructions || i.current.customInstructions.trim() === "",
  },
  { name: "same_session", reason: "session_changed", passes: (i) => i.current.sessionId === i.snapshot.sessionId },
  { name: "same_model", reason: "model_changed", passes: (i) => i.current.modelKey === i.snapshot.modelKey },
  { name: "same_thinking_level", reason: "thinking_changed", passes: (i) => i.current.thinkingLevel === i.snapshot.thinkingLevel },
  { name: "same_settings", reason: "settings_changed", passes: (i) => i.current.settingsKey === i.snapshot.settingsKey },
  {
    name: "result_first_kept_matches_snapshot",
    reason: "first_kept_mismatch",
    passes: (i) => i.result.firstKeptEntryId === i.snapshot.firstKeptEntryId,
  },
  { name: "branch_has_first_kept", reason: "first_kept_missing", passes: (i, b) => b.positionOf.has(i.snapshot.firstKeptEntryId) },
  {
    name: "first_kept_not_tool_result",
    reason: "first_kept_tool_result",
    passes: (i, b) => !i.current.branch[b.positionOf.get(i.snapshot.firstKeptEntryId) ?? -1]?.isToolResult,
  },
  { name: "branch_has_snapshot_leaf", reason: "snapshot_leaf_missing", passes: (i, b) => b.positionOf.has(i.snapshot.snapshotLeafId) },
  {
    name: "first_kept_not_after_snapshot_leaf",
    reason: "first_kept_after_snapshot",
    passes: (i, b) => (b.positionOf.get(i.snapshot.firstKeptEntryId) ?? 0) <= (b.positionOf.get(i.snapshot.snapshotLeafId) ?? 0),
  },
  { name: "preview_fits", reason: "too_large", passes: (i) => i.previewTokens <= i.contextWindow - i.reserveTokens },
];

export function validateReadyJob(input: ValidationInput): ValidationResult {
  const index = indexBranch(input.current.branch);
  for (const check of APPLY_CHECKS) {
    if (!check.passes(input, index)) return { ok: false, reason: check.reason, check: check.name };
  }
  return { ok: true };
}

/**
 * The branch-only subset (checks 7-10), usable while a job is still pending, e.g. after
 * `/tree` navigation: a pending job whose anchors left the branch can never apply.
 */
export function validateBranchAnchors(snapshot: JobSnapshot, branch: readonly BranchEntryInfo[]): ValidationResult {
  const index = indexBranch(branch);
  const input: ValidationInput = {
    snapshot,
    result: { firstKeptEntryId: snapshot.firstKeptEntryId, summary: "" },
    current: { sessionId: "", modelKey: "", thinkingLevel: "", settingsKey: "", branch },
    previewTokens: 0,
    contextWindow: 0,
    reserveTokens: 0,
  };
  for (const check of APPLY_CHECKS.slice(6, 10)) {
    if (!check.passes(input, index)) return { ok: false, reason: check.reason, check: check.name };
  }
  return { ok: true };
}
