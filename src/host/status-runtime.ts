/**
 * Edge: the status line. Updated at every request (the `context` render), when an answer
 * arrives, at turn end and when a flush finishes, so it follows the context during a tool
 * loop; and recounted from a fresh render of the branch when the context changes without a
 * request — session start (a resumed session), `/tree`, a compaction, `/keeper on|off|set`.
 * The context figure is Pi's own (`ctx.getContextUsage()`, the footer's); the pruned figure
 * is the estimated tokens the keeper's render leaves out of the request — the one figure
 * `/keeper` and `/keeper stats` show as "kept out of the next request".
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
  /**
   * The context changed without a request (resume, `/tree`, a compaction, a settings change):
   * `render` gives the branch and its render now, called only when a figure is shown or asked for.
   */
  recount(ctx: ExtensionContext, render: () => { raw: readonly ContextMessage[]; rendered: readonly ContextMessage[] }): void;
  /** A flush's progress ("summarizing 2/5"), or undefined when it is done. */
  progress(ctx: ExtensionContext, text: string | undefined): void;
  /** Re-read Pi's context figure (an answer arrived, a turn ended, settings changed). */
  refresh(ctx: ExtensionContext): void;
  /** Estimated tokens the last render kept out of the request. */
  prunedTokens(): number;
}

/** Pi's estimate of a message (its footer's): the context figure when Pi has none. */
const tokensOf = (m: ContextMessage): number => estimateTokens(m as Parameters<typeof estimateTokens>[0]);

/**
 * Estimated tokens the render removed: the characters of the messages as sent (serialized),
 * / 4 — the measure each flush's saving is counted in (`src/flush/savings.ts`), so "kept out
 * of the next request" and "removed by all flushes together" are the same figure until a
 * compaction or the thinking strip sets them apart. Only messages that are not shared
 * between the two lists are serialized.
 */
export function prunedTokens(raw: readonly ContextMessage[], rendered: readonly ContextMessage[]): number {
  if (raw === rendered) return 0;
  const inRaw = new Set<unknown>(raw);
  const inRendered = new Set<unknown>(rendered);
  let chars = 0;
  for (const m of raw) if (!inRendered.has(m)) chars += JSON.stringify(m).length;
  for (const m of rendered) if (!inRaw.has(m)) chars -= JSON.stringify(m).length;
  return Math.max(0, Math.round(chars / 4));
}

export function createStatusRuntime(deps: StatusRuntimeDeps): StatusRuntime {
  /** The last render's two lists; the figures are computed when shown or asked for (not per render without a UI). */
  let last: { raw: readonly ContextMessage[]; rendered: readonly ContextMessage[] } | undefined;
  /** A recount not rendered yet: rendered on first use. */
  let pending: (() => { raw: readonly ContextMessage[]; rendered: readonly ContextMessage[] }) | undefined;
  let pruned: number | undefined;
  let progressText: string | undefined;

  const lastLists = () => {
    if (pending) {
      const render = pending;
      pending = undefined;
      try {
        last = render();
      } catch {
        // The session went away under a late figure (a stale context): keep the last one.
      }
    }
    return last;
  };
  const prunedNow = (): number => {
    if (pruned !== undefined && !pending) return pruned;
    const lists = lastLists();
    return (pruned = lists ? prunedTokens(lists.raw, lists.rendered) : 0);
  };

  const show = (ctx: ExtensionContext) => {
    if (!ctx.hasUI) return;
    const settings = deps.settings();
    if (!settings.statusLine) {
      ctx.ui.setStatus(STATUS_LINE_KEY, undefined);
      return;
    }
    const contextTokens = ctx.getContextUsage()?.tokens ?? undefined;
    // Without Pi's figure (right after a compaction) the estimate of what the render sends.
    const lists = settings.enabled ? lastLists() : undefined;
    const renderedTokens = contextTokens === undefined && lists ? lists.rendered.reduce((n, m) => n + tokensOf(m), 0) : undefined;
    ctx.ui.setStatus(
      STATUS_LINE_KEY,
      formatStatusLine({
        enabled: settings.enabled,
        contextTokens,
        ...(renderedTokens !== undefined ? { renderedTokens } : {}),
        prunedTokens: settings.enabled ? prunedNow() : 0,
        summarizerCost: deps.summarizerCost(),
        ...(progressText ? { progress: progressText } : {}),
      }),
    );
  };

  return {
    rendered(ctx, raw, rendered) {
      last = { raw, rendered };
      pending = undefined;
      pruned = undefined;
      show(ctx);
    },
    recount(ctx, render) {
      pending = render;
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
