/** The thinking strip: pure core (boundary at flush, strip at render, model policy). */
export { stripOldThinking, strippedUnlessProtected, withoutThinking, PAIRED_REASONING_APIS, type ThinkingStripConfig } from "./strip.ts";
export {
  computeThinkingBoundary,
  boundaryAtFlush,
  assistantTimestampsAtFlush,
  boundaryForRender,
  type BoundaryAtFlushInput,
} from "./boundary.ts";
export { isUserTextTurn, protectedAssistantIndices } from "./current-loop.ts";
export { clampKeepLastTurns, DEFAULT_KEEP_LAST_TURNS, KEEP_LAST_TURNS_PRESETS, type KeepLastTurnsPreset } from "./keep-last-turns.ts";
export {
  THINKING_POLICY_TABLE,
  THINKING_STRIP_MODES,
  DEFAULT_THINKING_STRIP_MODE,
  findThinkingPolicyRow,
  resolveThinkingPolicy,
  type ThinkingPolicyRow,
  type ThinkingPolicyInput,
  type ThinkingPolicyDecision,
  type ThinkingReplayBehaviour,
  type ThinkingStripMode,
} from "./policy.ts";
export { matchesModel, type ModelMatcher, type ModelVersion, type ModelIdentity } from "./model-match.ts";
