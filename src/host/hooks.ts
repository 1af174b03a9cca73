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
 * - turn_end: the keeper's budget flush, then compaction (a draft or a background job). The
 *   flush only starts a background job whose capture reads the branch synchronously; a
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
import type { ContextMessage } from "../session/messages.ts";
import { registerKeeperCompaction, type KeeperCompactionOptions } from "./compaction.ts";
import { createEventHub, fanOut } from "./event-hub.ts";
import type { CompactionController } from "../compaction/controller.ts";
import { createEngineCell } from "./engine-cell.ts";
import { createKeeperHost, type KeeperHost, type KeeperHostOptions, type KeeperParts } from "./keeper-host.ts";
import { faultNotice, runParts, type PartName } from "./part-guard.ts";

const KEEPER_COMMAND_DESCRIPTION = "context-keeper: status and settings; stats, now, why, cache, on, off, set, reset, save (Tab completes)";

type PiHandler = (event: never, ctx: ExtensionContext) => unknown;

/** Compaction's handler per Pi event it listens to. */
export type CompactionPart = Partial<Record<CompactionEvent, PiHandler>>;
type CompactionEvent =
  | "session_start"
  | "session_tree"
  | "session_compact"
  | "session_compact_failed"
  | "session_before_compact"
  | "session_shutdown"
  | "turn_end"
  | "agent_end"
  | "model_select"
  | "thinking_level_select";

/** One step of a Pi event: the part it belongs to and its handler. */
export interface TableStep {
  part: PartName;
  handler: PiHandler;
}

const on = (part: PartName, handler: PiHandler | undefined): TableStep[] => (handler ? [{ part, handler }] : []);
const message = (e: unknown) => (e as { message: ContextMessage }).message;

/** Every Pi event the extension listens to → the steps it runs, in order (see the header for why). */
export function piEventTable(k: KeeperParts, c: CompactionPart | undefined): Record<string, TableStep[]> {
  const table: Record<string, TableStep[]> = {
    session_start: [
      ...on("settings", (_e, ctx) => k.setup.sessionStart(ctx)),
      ...on("pruning", (_e, ctx) => k.pruning.sessionStart(ctx)),
      ...on("ui", (_e, ctx) => k.ui.refresh(ctx)),
      ...on("compaction", c?.session_start),
    ],
    session_tree: [...on("pruning", (_e, ctx) => k.pruning.sessionTree(ctx)), ...on("compaction", c?.session_tree)],
    session_compact: [...on("pruning", (_e, ctx) => k.pruning.sessionCompact(ctx)), ...on("compaction", c?.session_compact)],
    session_shutdown: [...on("pruning", () => k.pruning.sessionShutdown()), ...on("compaction", c?.session_shutdown)],
    context: [...on("pruning", (e, ctx) => k.pruning.context(e, ctx)), ...on("ui", (e, ctx) => k.ui.rendered(e, ctx))],
    message_end: [
      ...on("cache", (e) => k.cache.usage(message(e))),
      ...on("pruning", (e, ctx) => k.pruning.messageEnd(message(e), ctx)),
      ...on("ui", (e, ctx) => k.ui.answered(message(e), ctx)),
    ],
    turn_end: [...on("ui", (_e, ctx) => k.ui.refresh(ctx)), ...on("pruning", (_e, ctx) => k.pruning.turnEnd(ctx)), ...on("compaction", c?.turn_end)],
    before_provider_request: [...on("cache", (e, ctx) => k.cache.beforeRequest(e, ctx)), ...on("pruning", (_e, ctx) => k.pruning.requestBuilt(ctx))],
    cache_warming_decision: [...on("cache", (e) => k.cache.warming(e))],
    agent_end: on("compaction", c?.agent_end),
    session_before_compact: on("compaction", c?.session_before_compact),
    session_compact_failed: on("compaction", c?.session_compact_failed),
    model_select: on("compaction", c?.model_select),
    thinking_level_select: on("compaction", c?.thinking_level_select),
  };
  for (const event of Object.keys(table)) if (table[event]!.length === 0) delete table[event];
  return table;
}

/** One handler for a Pi event: its table steps, each guarded; a throw is reported once per part. */
export function guardedHandler(keeper: Pick<KeeperHost, "cell" | "perform">, event: string, steps: readonly TableStep[]) {
  return (e: unknown, ctx: ExtensionContext): unknown =>
    runParts(
      steps.map((s) => ({ part: s.part, run: () => s.handler(e as never, ctx) })),
      (part, error) => keeper.perform(keeper.cell.step({ type: "notice", key: `fault:${part}`, text: faultNotice(part, event, error), level: "warning" }).effects, ctx),
    );
}

export interface RegisterKeeperOptions {
  /** Passed to the compaction wiring (env, lifecycle listener) — tests. */
  compaction?: Omit<KeeperCompactionOptions, "isActive">;
  /** The keeper's side (default `createKeeperHost`); tests pass a recording one. */
  createHost?: (pi: ExtensionAPI, hostOptions: KeeperHostOptions) => KeeperHost;
}

export function registerKeeper(pi: ExtensionAPI, options: RegisterKeeperOptions = {}): KeeperHost {
  // Bound once registered below: the budget trigger and warming consult async compaction.
  let compaction: CompactionController | undefined;
  const keeper = (options.createHost ?? createKeeperHost)(pi, { cell: createEngineCell(), compactionOutlook: () => compaction?.outlook() });
  const hub = createEventHub(pi);
  compaction = registerKeeperCompaction(hub.pi, {
    ...options.compaction,
    isActive: () => keeper.settings().enabled && keeper.settings().compaction.enabled,
    // After an apply the keeper prunes the kept tail again: measure the compacted context as sent.
    sentContext: (messages, ctx) => keeper.sentContext(messages as ContextMessage[], ctx) as typeof messages,
  });
  const part: CompactionPart = {};
  for (const event of hub.events()) {
    const handlers = hub.handlers(event);
    part[event as CompactionEvent] = (e, ctx) => fanOut(handlers.map((h) => () => h(e, ctx)));
  }

  for (const [event, steps] of Object.entries(piEventTable(keeper, part))) {
    (pi.on as (event: string, handler: (e: unknown, ctx: ExtensionContext) => unknown) => void)(event, guardedHandler(keeper, event, steps));
  }

  pi.registerTool({ ...keeper.recallTool(), defaultActive: false });
  pi.registerCommand("keeper", {
    description: KEEPER_COMMAND_DESCRIPTION,
    getArgumentCompletions: (prefix) => keeper.keeperCompletions(prefix),
    handler: (args, ctx) => keeper.onKeeperCommand(args, ctx),
  });
  return keeper;
}
