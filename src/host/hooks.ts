/**
 * The only place Pi events are registered: each once, for every part (the keeper's settings,
 * pruning — the thinking strip runs inside its renders and flushes —, cache and UI, and async
 * compaction), through one table: for each Pi event, the steps it runs, in order. Each step
 * is guarded on its own (`part-guard.ts`): a throw is reported once per part and the steps
 * after it still run.
 *
 * Orders, and why:
 * - session_start: the settings files first — every other part reads them (compaction's
 *   `isActive` too); then what else is loaded beside this copy (another copy of the package,
 *   another async compaction — compaction's `isActive` reads that too); then the keeper's
 *   restore, its status line (recounted from the restored state: a resumed session shows what
 *   it prunes before any request), then compaction.
 * - input: compaction's only — a typed `/async-compact-now` Pi found no command for (another
 *   async compaction registered the same name) runs the other's command.
 * - turn_end: the keeper's budget flush or in-loop flush, then compaction (a draft or a
 *   background job). A budget flush only starts a background job whose capture reads the branch
 *   synchronously; an in-loop flush (extractive, no model call) is awaited, so its rewrite lands on
 *   the next request and compaction's step runs once it is adopted; a
 *   compaction draft is applied by Pi after every handler returned, so the flush sees the
 *   branch as the turn left it either way, and the state it holds for summarized-away calls is
 *   dropped at the next flush (its `flush-begin` step). Compaction goes last because its draft
 *   is the event's result.
 * - context_with_system (the render; not `context`): the transcript with its system messages, so
 *   a render that changes history leaves Pi's mid-conversation prompt and tool patches where
 *   they are (a changed `context` list makes Pi fold them into the leading system message,
 *   which rewrites the cached tools and system on models that take them in place).
 * - message_end: the cache's usage before the request-end flush reads the ledger.
 * - before_provider_request: the cache's step (seam, fingerprints) on the payload first; the
 *   cold re-plans the render adopted are committed once the request is built.
 * - session_tree / session_compact: the keeper first (restore or drop its state), the status line
 *   recounted from the new branch, then compaction.
 * - session_shutdown: the keeper first (commit what waits, let a running flush finish) while
 *   the session is still open, then compaction cancels its job.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { EngineEffect } from "../engine/index.ts";
import type { ContextMessage } from "../session/messages.ts";
import { createKeeperCompaction, type KeeperCompactionOptions } from "./compaction.ts";
import { DEFAULT_COMMAND_NAME, disabledCompactNow, registerCompactNowCommand } from "./compaction-command.ts";
import type { CompactionPart } from "./compaction-host.ts";
import { createEngineCell, type EngineCell } from "./engine-cell.ts";
import { claimCopy, thisCopy, type KeeperCopy } from "./keeper-copies.ts";
import { createKeeperHost, type KeeperHost, type KeeperHostOptions, type KeeperParts } from "./keeper-host.ts";
import { faultNoticeOf, runParts, type PartName } from "./part-guard.ts";
import { otherCompactionIn, routeCompactNow, runOtherCompactNow, type OtherCompaction } from "./neighbour-compaction.ts";
import { modelIdentity } from "./session-view.ts";
import { copiesNotice, otherCompactionNotice } from "../ui/neighbours-text.ts";

const KEEPER_COMMAND_DESCRIPTION = "context-keeper: status and settings; stats, now, why, cache, on, off, set, reset, save (Tab completes)";

type PiHandler = (event: never, ctx: ExtensionContext) => unknown;

/** One step of a Pi event: the part it belongs to and its handler. */
export interface TableStep {
  part: PartName;
  handler: PiHandler;
}

const on = (part: PartName, handler: PiHandler | undefined): TableStep[] => (handler ? [{ part, handler }] : []);
const message = (e: unknown) => (e as { message: ContextMessage }).message;

/** Steps the registration adds beside the parts' own (`registerKeeper`). */
export interface ExtraSteps {
  /** Compaction's: what the env got wrong, said at session start. */
  sessionStart?: PiHandler;
  /** The settings part's: what else is loaded beside this copy, said at session start. */
  neighbours?: PiHandler;
  /** Compaction's: a typed `/async-compact-now` beside another async compaction. */
  input?: PiHandler;
}

/**
 * Every Pi event the extension listens to → the steps it runs, in order (see the header for
 * why). `k`: the keeper's parts (absent: `./core`'s compaction alone); `c`: async compaction's
 * (absent: switched off).
 */
export function piEventTable(k: KeeperParts | undefined, c: CompactionPart | undefined, extra: ExtraSteps = {}): Record<string, TableStep[]> {
  const h = c?.handlers;
  const table: Record<string, TableStep[]> = {
    session_start: [
      ...on("settings", k && ((_e, ctx) => k.setup.sessionStart(ctx))),
      ...on("settings", k && extra.neighbours),
      ...on("pruning", k && ((_e, ctx) => k.pruning.sessionStart(ctx))),
      ...on("ui", k && ((_e, ctx) => k.ui.recount(ctx))),
      ...on("compaction", extra.sessionStart),
      ...on("compaction", h?.session_start),
    ],
    session_tree: [
      ...on("pruning", k && ((_e, ctx) => k.pruning.sessionTree(ctx))),
      ...on("ui", k && ((_e, ctx) => k.ui.recount(ctx))),
      ...on("compaction", h?.session_tree),
    ],
    session_compact: [
      ...on("pruning", k && ((_e, ctx) => k.pruning.sessionCompact(ctx))),
      ...on("ui", k && ((_e, ctx) => k.ui.recount(ctx))),
      ...on("compaction", h?.session_compact),
    ],
    session_shutdown: [...on("pruning", k && (() => k.pruning.sessionShutdown())), ...on("compaction", h?.session_shutdown)],
    // The full transcript, its system messages (prompt and tool patches) in place: a changed
    // list returned from `context` would make Pi fold them into one leading message.
    context_with_system: [...on("pruning", k && ((e, ctx) => k.pruning.context(e, ctx))), ...on("ui", k && ((e, ctx) => k.ui.rendered(e, ctx)))],
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
    input: on("compaction", k && extra.input),
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
export function registerTable(pi: ExtensionAPI, reporter: FaultReporter, keeper: KeeperParts | undefined, compaction: CompactionPart | undefined, extra: ExtraSteps = {}): void {
  for (const [event, steps] of Object.entries(piEventTable(keeper, compaction, extra))) {
    (pi.on as (event: string, handler: (e: unknown, ctx: ExtensionContext) => unknown) => void)(event, guardedHandler(reporter, event, steps));
  }
}

export interface RegisterKeeperOptions {
  /** Passed to the compaction wiring (env, lifecycle listener) — tests. */
  compaction?: KeeperCompactionOptions;
  /** The keeper's side (default `createKeeperHost`); tests pass a recording one. */
  createHost?: (pi: ExtensionAPI, hostOptions: KeeperHostOptions) => KeeperHost;
  /** This copy and the copies of the package loaded after it, which registered nothing (`registerKeeperCopy`). */
  copies?: { self: KeeperCopy; others: readonly KeeperCopy[] };
}

export interface RegisteredKeeper {
  keeper: KeeperHost;
  compaction: CompactionPart | undefined;
}

export function registerKeeper(pi: ExtensionAPI, options: RegisterKeeperOptions = {}): RegisteredKeeper {
  const cell = createEngineCell();
  const keeper = (options.createHost ?? createKeeperHost)(pi, { cell });
  const ownRoot = (options.copies?.self ?? thisCopy()).root;
  /** What else is loaded beside this copy, read at each session start. */
  const beside: { compaction?: OtherCompaction } = {};
  const compaction = createKeeperCompaction(pi, {
    ...options.compaction,
    cell: keeper.cell,
    // Beside another async compaction the keeper's stands down: one summary job per compaction.
    isActive: () => keeper.settings().enabled && keeper.settings().compaction.enabled && !beside.compaction,
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
  const copies = options.copies;
  const neighbours: PiHandler = (_e, ctx) => {
    // Another copy of the package registered nothing: said once, by this one.
    if (copies && copies.others.length > 0) keeper.perform(keeper.cell.step({ type: "notice", key: "copies", text: copiesNotice(copies.self, copies.others), level: "warning" }).effects, ctx);
    const other = otherCompactionIn(pi, ownRoot);
    if (other) beside.compaction = other;
    else delete beside.compaction;
    if (other) keeper.perform(keeper.cell.step({ type: "notice", key: `other-compaction:${other.path}`, text: otherCompactionNotice(other.path), level: "warning" }).effects, ctx);
  };
  const input: PiHandler = (e) => routeCompactNow(pi, beside.compaction, e as never);
  registerTable(pi, keeper, keeper, compaction.part, { neighbours, input, ...(envDiagnostics ? { sessionStart: envDiagnostics } : {}) });

  pi.registerTool({ ...keeper.recallTool(), defaultActive: false });
  pi.registerCommand("keeper", {
    description: KEEPER_COMMAND_DESCRIPTION,
    getArgumentCompletions: (prefix) => keeper.keeperCompletions(prefix),
    handler: (args, ctx) => keeper.onKeeperCommand(args, ctx),
  });
  const ownCompactNow = compaction.part ? compaction.part.command : disabledCompactNow(compaction.label);
  // Picked as this copy's renamed command (`async-compact-now:n`) beside another async compaction: the other's runs.
  registerCompactNowCommand(pi, DEFAULT_COMMAND_NAME, (ctx, args) => (beside.compaction ? runOtherCompactNow(pi, beside.compaction, args) : ownCompactNow(ctx)));
  return { keeper, compaction: compaction.part };
}

/**
 * The extension's entry: this copy registers everything when it is the first copy of the package
 * Pi loaded (`keeper-copies.ts`); a later copy registers nothing (no tool, command or handler)
 * and returns undefined, and the running copy says so once.
 */
export function registerKeeperCopy(pi: ExtensionAPI, self: KeeperCopy = thisCopy()): RegisteredKeeper | undefined {
  const claim = claimCopy(pi, self);
  if (!claim.runs) return undefined;
  return registerKeeper(pi, { copies: { self, others: claim.others } });
}
