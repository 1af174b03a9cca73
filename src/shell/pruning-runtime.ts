/**
 * Edge: pruning for one session runtime. Holds the persisted state in memory, renders
 * through the pure core on every request, and runs flushes (capture → summarize → plan →
 * persist) in the background so nobody waits for a summary. A finished flush takes effect
 * at the next request; between flushes renders are byte-stable.
 *
 * This file composes the pieces: `flush-run.ts` (one flush), `flush-queue.ts` (one at a
 * time, triggers queued), `cold-replan.ts` (re-plan when the cache is already lost).
 */
import type { ContextEvent, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { budgetTriggerFires } from "../keeper/flush.ts";
import { keeperRender } from "../keeper/render.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import type { ContextMessage } from "../session/messages.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import { restoreReconciled } from "../state/torn-flush.ts";
import type { KeeperState } from "../state/schema.ts";
import { restoreRecallIndex } from "../recall/recall-entries.ts";
import type { RecallIndex } from "../recall/recall-index.ts";
import { coldReplan } from "./cold-replan.ts";
import { flushesActive } from "./flush-planning.ts";
import { createFlushQueue } from "./flush-queue.ts";
import { runFlush } from "./flush-run.ts";
import { emptyPruningMemory, type FlushReport, type PruningRuntimeDeps } from "./pruning-types.ts";
import { contextMessagesOf, modelIdentity } from "./session-view.ts";

export type { FlushReport, FlushTrigger, PruningRuntimeDeps } from "./pruning-types.ts";
export { contextMessagesOf, modelIdentity } from "./session-view.ts";

export interface PruningRuntime {
  restore(ctx: ExtensionContext): void;
  afterCompaction(ctx: ExtensionContext): void;
  render(event: ContextEvent, ctx: ExtensionContext): { messages: ContextMessage[] } | undefined;
  onAssistantMessageEnd(message: ContextMessage, ctx: ExtensionContext): void;
  onTurnEnd(ctx: ExtensionContext): void;
  flushNow(ctx: ExtensionContext): Promise<FlushReport | undefined>;
  /** Let an in-flight flush finish (its summarizer is aborted first, so it falls back fast). */
  shutdown(): Promise<void>;
  state(): KeeperState;
  recallIndex(): RecallIndex;
  lastReport(): FlushReport | undefined;
  diagnostics(): string[];
  busy(): boolean;
}

export function createPruningRuntime(deps: PruningRuntimeDeps): PruningRuntime {
  const now = deps.now ?? (() => Date.now());
  const memory = emptyPruningMemory();
  const flushes = createFlushQueue({
    active: (ctx) => flushesActive(deps, ctx),
    run: ({ trigger, ctx, closingMessage }) => runFlush({ deps, now, memory, trigger, ctx, closingMessage }),
    onFailure: (ctx, error) =>
      deps.notify(ctx, `context-keeper: flush failed (${error instanceof Error ? error.message : String(error)}); history left as it was`, "warning"),
  });

  return {
    restore(ctx) {
      const branch = ctx.sessionManager.getBranch() as unknown[];
      const restored = restoreReconciled(branch);
      const restoredRecall = restoreRecallIndex(branch);
      memory.recall = restoredRecall.index;
      const diagnostics = [...restored.diagnostics, ...restoredRecall.diagnostics];
      memory.diagnostics = diagnostics;
      memory.state = dropStateOutsideContext(restored.state, liveOccurrenceKeys(contextMessagesOf(ctx)));
      memory.tokensAtLastFlush = ctx.getContextUsage()?.tokens ?? 0;
      if (diagnostics.length) deps.notify(ctx, restoreNotice(diagnostics), "warning");
    },
    afterCompaction(ctx) {
      memory.state = dropStateOutsideContext(memory.state, liveOccurrenceKeys(contextMessagesOf(ctx)));
      memory.tokensAtLastFlush = 0;
    },
    render(event, ctx) {
      if (!deps.settings().enabled) return undefined;
      coldReplan({ deps, now, memory, ctx, flushInFlight: flushes.inFlight() !== undefined });
      const out = keeperRender({ messages: event.messages as ContextMessage[], state: memory.state, settings: deps.settings(), model: modelIdentity(ctx) });
      return out === event.messages ? undefined : { messages: out };
    },
    onAssistantMessageEnd(message, ctx) {
      const m = message as { role?: string; stopReason?: string; content?: Array<{ type: string }> };
      if (m.role !== "assistant" || m.stopReason !== "stop") return;
      if ((m.content ?? []).some((b) => b.type === "toolCall")) return;
      void flushes.start({ trigger: "request-end", ctx, closingMessage: message });
    },
    onTurnEnd(ctx) {
      const usage = ctx.getContextUsage();
      if (usage?.tokens == null || !usage.contextWindow) return;
      const fires = budgetTriggerFires({ settings: deps.settings(), contextTokens: usage.tokens, tokensAtLastFlush: memory.tokensAtLastFlush, contextWindow: usage.contextWindow });
      if (fires) void flushes.start({ trigger: "budget", ctx });
    },
    async flushNow(ctx) {
      const running = flushes.inFlight();
      if (running) await running;
      return flushes.start({ trigger: "manual", ctx });
    },
    async shutdown() {
      memory.abort?.abort();
      const running = flushes.inFlight();
      if (running) await running;
    },
    state: () => memory.state,
    recallIndex: () => memory.recall,
    lastReport: () => memory.report,
    diagnostics: () => memory.diagnostics,
    busy: () => flushes.inFlight() !== undefined,
  };
}

/** One message for everything restore had to skip or reconcile: what, and what was done. */
function restoreNotice(diagnostics: readonly string[]): string {
  const shown = diagnostics.slice(0, 3).join("; ");
  const more = diagnostics.length > 3 ? `; and ${diagnostics.length - 3} more (see /keeper)` : "";
  return `context-keeper: restored the saved state with ${diagnostics.length} problem(s) — ${shown}${more}`;
}
