/**
 * The only place Pi events are registered: each once, for every part (the keeper's settings,
 * pruning — the thinking strip runs inside its renders and flushes —, cache and UI, and async
 * compaction), through one table: for each Pi event, the steps it runs, in order. Each step
 * is guarded on its own (`part-guard.ts`): a throw is reported once per part and the steps
 * after it still run.
 *
 * Orders, and why:
 * - session_start: the settings files first — every other part reads them (compaction's
 *   `isActive` too); then the keeper's restore, its status line, then compaction.
 * - turn_end: the keeper's budget flush or in-loop flush, then compaction (a draft or a
 *   background job). A budget flush only starts a background job whose capture reads the branch
 *   synchronously; an in-loop flush (extractive, no model call) is awaited, so its rewrite lands on
 *   the next request and compaction's step runs once it is adopted; a
 *   compaction draft is applied by Pi after every handler returned, so the flush sees the
 *   branch as the turn left it either way, and the state it holds for summarized-away calls is
 *   dropped at the next flush (its `flush-begin` step). Compaction goes last because its draft
 *   is the event's result.
 * - message_end: the cache's usage before the request-end flush reads the ledger.
 * - before_provider_request: the cache's step (seam, fingerprints) on the payload first; the
 *   cold re-plans the render adopted are committed once the request is built.
 * - session_tree / session_compact: the keeper first (restore or drop its state), then compaction.
 * - session_shutdown: the keeper first (commit what waits, let a running flush finish) while
 *   the session is still open, then compaction cancels its job.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { EngineEffect } from "../engine/index.ts";
import type { ContextMessage } from "../session/messages.ts";
import { createKeeperCompaction, type KeeperCompactionOptions } from "./compaction.ts";
import { registerCompactNowCommand, registerDisabledCompactNowCommand } from "./compaction-command.ts";
import type { CompactionPart } from "./compaction-host.ts";
import { createEngineCell, type EngineCell } from "./engine-cell.ts";
import { createKeeperHost, type KeeperHost, type KeeperHostOptions, type KeeperParts } from "./keeper-host.ts";
import { faultNoticeOf, runParts, type PartName } from "./part-guard.ts";
import { modelIdentity } from "./session-view.ts";

const KEEPER_COMMAND_DESCRIPTION = "context-keeper: status and settings; stats, now, why, cache, on, off, set, reset, save (Tab completes)";

type PiHandler = (event: never, ctx: ExtensionContext) => unknown;

/** One step of a Pi event: the part it belongs to and its handler. */
export interface TableStep {
  part: PartName;
  handler: PiHandler;
}

const on = (part: PartName, handler: PiHandler | undefined): TableStep[] => (handler ? [{ part, handler }] : []);
const message = (e: unknown) => (e as { message: ContextMessage }).message;

/**
 * Every Pi event the extension listens to → the steps it runs, in order (see the header for
 * why). `k`: the keeper's parts (absent: `./core`'s compaction alone); `c`: async compaction's
 * (absent: switched off).
 */
export function piEventTable(k: KeeperParts | undefined, c: CompactionPart | undefined, extra: { sessionStart?: PiHandler } = {}): Record<string, TableStep[]> {
  const h = c?.handlers;
  const table: Record<string, TableStep[]> = {
    session_start: [
      ...on("settings", k && ((_e, ctx) => k.setup.sessionStart(ctx))),
      ...on("pruning", k && ((_e, ctx) => k.pruning.sessionStart(ctx))),
      ...on("ui", k && ((_e, ctx) => k.ui.refresh(ctx))),
      ...on("compaction", extra.sessionStart),
      ...on("compaction", h?.session_start),
    ],
    session_tree: [...on("pruning", k && ((_e, ctx) => k.pruning.sessionTree(ctx))), ...on("compaction", h?.session_tree)],
    session_compact: [...on("pruning", k && ((_e, ctx) => k.pruning.sessionCompact(ctx))), ...on("compaction", h?.session_compact)],
    session_shutdown: [...on("pruning", k && (() => k.pruning.sessionShutdown())), ...on("compaction", h?.session_shutdown)],
    context: [...on("pruning", k && ((e, ctx) => k.pruning.context(e, ctx))), ...on("ui", k && ((e, ctx) => k.ui.rendered(e, ctx)))],
    message_end: [
      ...on("cache", k && ((e) => k.cache.usage(message(e)))),
      ...on("pruning", k && ((e, ctx) => k.pruning.messageEnd(message(e), ctx))),
      ...on("ui", k && ((e, ctx) => k.ui.answered(message(e), ctx))),
    ],
    turn_end: [
      ...on("ui", k && ((_e, ctx) => k.ui.refresh(ctx))),
      ...on("pruning", k && ((_e, ctx) => k.pruning.turnEnd(ctx))),
      ...on("compaction", h?.turn_end),
    ],
    before_provider_request: [...on("cache", k && ((e, ctx) => k.cache.beforeRequest(e, ctx))), ...on("pruning", k && ((_e, ctx) => k.pruning.requestBuilt(ctx)))],
    // A compaction about to apply discards the warmed prefix too (the keeper's integration only).
    cache_warming_decision: [...on("cache", k && ((e) => k.cache.warming(e))), ...on("compaction", k && h?.cache_warming_decision)],
    agent_end: on("compaction", h?.agent_end),
    session_before_compact: on("compaction", h?.session_before_compact),
    session_compact_failed: on("compaction", h?.session_compact_failed),
    model_select: on("compaction", h?.model_select),
    thinking_level_select: on("compaction", h?.thinking_level_select),
  };
  for (const event of Object.keys(table)) if (table[event]!.length === 0) delete table[event];
  return table;
}

/** Who reports a part's throw: the engine's `notice` step (once per part), its effects performed. */
export interface FaultReporter {
  cell: EngineCell;
  perform(effects: readonly EngineEffect[], ctx: ExtensionContext): void;
}

/** One handler for a Pi event: its table steps, each guarded; a throw is reported once per part. */
export function guardedHandler(reporter: FaultReporter, event: string, steps: readonly TableStep[]) {
  return (e: unknown, ctx: ExtensionContext): unknown =>
    runParts(
      steps.map((s) => ({ part: s.part, run: () => s.handler(e as never, ctx) })),
      (part, error) => reporter.perform(reporter.cell.step({ type: "notice", key: `fault:${part}`, text: faultNoticeOf(part, event, error), level: "warning" }).effects, ctx),
    );
}

/** Register each Pi event of the table once, with its guarded steps. */
export function registerTable(pi: ExtensionAPI, reporter: FaultReporter, keeper: KeeperParts | undefined, compaction: CompactionPart | undefined, extra: { sessionStart?: PiHandler } = {}): void {
  for (const [event, steps] of Object.entries(piEventTable(keeper, compaction, extra))) {
    (pi.on as (event: string, handler: (e: unknown, ctx: ExtensionContext) => unknown) => void)(event, guardedHandler(reporter, event, steps));
  }
}

export interface RegisterKeeperOptions {
  /** Passed to the compaction wiring (env, lifecycle listener) — tests. */
  compaction?: KeeperCompactionOptions;
  /** The keeper's side (default `createKeeperHost`); tests pass a recording one. */
  createHost?: (pi: ExtensionAPI, hostOptions: KeeperHostOptions) => KeeperHost;
}

export interface RegisteredKeeper {
  keeper: KeeperHost;
  compaction: CompactionPart | undefined;
}

export function registerKeeper(pi: ExtensionAPI, options: RegisterKeeperOptions = {}): RegisteredKeeper {
  const cell = createEngineCell();
  const keeper = (options.createHost ?? createKeeperHost)(pi, { cell });
  const compaction = createKeeperCompaction(pi, {
    ...options.compaction,
    cell: keeper.cell,
    isActive: () => keeper.settings().enabled && keeper.settings().compaction.enabled,
    // After an apply the keeper prunes the kept tail again: measure the compacted context as sent.
    keeperRender: (ctx) => ({ settings: keeper.settings(), model: modelIdentity(ctx) }),
  });
  // What the env got wrong about compaction: said once, when the subsystem is active.
  const envDiagnostics: PiHandler | undefined =
    compaction.diagnostics.length === 0
      ? undefined
      : (_e, ctx) => {
          if (!(keeper.settings().enabled && keeper.settings().compaction.enabled)) return;
          for (const d of compaction.diagnostics) keeper.perform(keeper.cell.step({ type: "notice", key: `compaction-env:${d.message}`, text: d.message, level: "warning" }).effects, ctx);
        };
  registerTable(pi, keeper, keeper, compaction.part, { ...(envDiagnostics ? { sessionStart: envDiagnostics } : {}) });

  pi.registerTool({ ...keeper.recallTool(), defaultActive: false });
  pi.registerCommand("keeper", {
    description: KEEPER_COMMAND_DESCRIPTION,
    getArgumentCompletions: (prefix) => keeper.keeperCompletions(prefix),
    handler: (args, ctx) => keeper.onKeeperCommand(args, ctx),
  });
  if (compaction.part) registerCompactNowCommand(pi, "async-compact-now", compaction.part.command);
  else registerDisabledCompactNowCommand(pi, compaction.label);
  return { keeper, compaction: compaction.part };
}
