/**
 * From user settings to the configs the pure cores read. One place, so the live extension
 * and the replay report run the very same configuration.
 */
import { DEFAULT_PRUNE_CONFIG, type PruneConfig } from "../prune/config.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { resolveThinkingPolicy, type ThinkingPolicyDecision } from "../thinking/index.ts";

export interface ModelIdentityInput {
  provider: string;
  id: string;
  api?: string;
}

export function pruneConfigFrom(settings: KeeperSettings): PruneConfig {
  const p = settings.pruning;
  return {
    ...DEFAULT_PRUNE_CONFIG,
    enabled: settings.enabled && p.enabled,
    minBatchChars: p.minBatchChars,
    // `keeper_recall` is not protected: its copies are never captured, and its loop collapses (`isRecallCopy`).
    protectedTools: [...new Set(p.protectedTools)],
    protectedPaths: [...p.protectedPaths],
    errorPurge: { ...p.errorPurge },
    chainCompression: { ...p.chainCompression },
    budgetTrigger: { ...p.budgetTrigger },
    loopFlush: { ...p.loopFlush },
  };
}

/** The thinking-strip decision for a model; `strip: false` when the extension is off. */
export function thinkingPolicyFor(settings: KeeperSettings, model: ModelIdentityInput | undefined): ThinkingPolicyDecision {
  if (!settings.enabled) return { strip: false, behaviour: "unknown", reason: "context-keeper is disabled" };
  return resolveThinkingPolicy({
    mode: settings.thinkingStrip.mode,
    provider: model?.provider ?? "",
    modelId: model?.id ?? "",
    api: model?.api ?? "",
  });
}
