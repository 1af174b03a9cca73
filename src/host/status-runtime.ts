/**
 * Edge: the status line. Updated at every request (the `context` render), when an answer
 * arrives, at turn end and when a flush finishes, so it follows the context during a tool
 * loop. The context figure is Pi's own (`ctx.getContextUsage()`, the footer's); the pruned
 * figure is the estimated tokens the keeper's render leaves out of the request.
 */
import { estimateTokens, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { formatStatusLine } from "../ui/status-line.ts";

export const STATUS_LINE_KEY = "context-keeper";

export interface StatusRuntimeDeps {
  settings: () => KeeperSettings;
  summarizerCost: () => number;
}

export interface StatusRuntime {
  /** A render: `rendered` is what goes out instead of `raw` (the same array when nothing changed). */
  rendered(ctx: ExtensionContext, raw: readonly ContextMessage[], rendered: readonly ContextMessage[]): void;
  /** A flush's progress ("summarizing 2/5"), or undefined when it is done. */
  progress(ctx: ExtensionContext, text: string | undefined): void;
  /** Re-read Pi's context figure (an answer arrived, a turn ended, settings changed). */
  refresh(ctx: ExtensionContext): void;
  /** Estimated tokens the last render kept out of the request. */
  prunedTokens(): number;
}

const tokensOf = (m: ContextMessage): number => estimateTokens(m as Parameters<typeof estimateTokens>[0]);

/** Estimated tokens the render removed: only messages that are not shared between the two lists are counted. */
export function prunedTokens(raw: readonly ContextMessage[], rendered: readonly ContextMessage[]): number {
  if (raw === rendered) return 0;
  const inRaw = new Set<unknown>(raw);
  const inRendered = new Set<unknown>(rendered);
  let removed = 0;
  for (const m of raw) if (!inRendered.has(m)) removed += tokensOf(m);
  for (const m of rendered) if (!inRaw.has(m)) removed -= tokensOf(m);
  return Math.max(0, removed);
}

export function createStatusRuntime(deps: StatusRuntimeDeps): StatusRuntime {
  /** The last render's two lists; the figures are computed when shown or asked for (not per render without a UI). */
  let last: { raw: readonly ContextMessage[]; rendered: readonly ContextMessage[] } | undefined;
  let pruned: number | undefined;
  let progressText: string | undefined;

  const prunedNow = (): number => (pruned ??= last ? prunedTokens(last.raw, last.rendered) : 0);

  const show = (ctx: ExtensionContext) => {
    if (!ctx.hasUI) return;
    const settings = deps.settings();
    if (!settings.statusLine) {
      ctx.ui.setStatus(STATUS_LINE_KEY, undefined);
      return;
    }
    const contextTokens = ctx.getContextUsage()?.tokens ?? undefined;
    // Without Pi's figure (right after a compaction) the estimate of what the render sends.
    const renderedTokens = contextTokens === undefined && last ? last.rendered.reduce((n, m) => n + tokensOf(m), 0) : undefined;
    ctx.ui.setStatus(
      STATUS_LINE_KEY,
      formatStatusLine({
        enabled: settings.enabled,
        contextTokens,
        ...(renderedTokens !== undefined ? { renderedTokens } : {}),
        prunedTokens: prunedNow(),
        summarizerCost: deps.summarizerCost(),
        ...(progressText ? { progress: progressText } : {}),
      }),
    );
  };

  return {
    rendered(ctx, raw, rendered) {
      last = { raw, rendered };
      pruned = undefined;
      show(ctx);
    },
    progress(ctx, text) {
      progressText = text;
      show(ctx);
    },
    refresh: show,
    prunedTokens: prunedNow,
  };
}
