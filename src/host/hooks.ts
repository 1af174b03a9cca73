/**
 * The only place Pi events are registered: each once, for both subsystems (the keeper and
 * async compaction), fanning out in a stated order. Compaction registers its hooks against an
 * event hub (event-hub.ts), never against Pi.
 *
 * Orders, and why:
 * - session_start: keeper first. It loads the settings, and compaction's `isActive` reads them.
 * - turn_end: keeper first (budget flush), then compaction (draft or background job). The
 *   flush only starts a background job whose capture reads the branch synchronously; a
 *   compaction draft is applied by Pi after every handler returned, so the flush sees the
 *   branch as the turn left it either way, and the state it holds for summarized-away calls is
 *   dropped at the next flush (its `flush-begin` step). Compaction goes last because its draft is the
 *   event's result.
 * - session_tree / session_compact: keeper first (restore or drop its state), then compaction.
 * - session_shutdown: keeper first (append entries still waiting, let a running flush
 *   finish) while the session is still open, then compaction cancels its job.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";
import { registerKeeperCompaction, type KeeperCompactionOptions } from "./compaction.ts";
import { createEventHub, fanOut, type AnyHandler } from "./event-hub.ts";
import type { CompactionController } from "../compaction/controller.ts";
import { createKeeperHost, type KeeperHost, type KeeperHostOptions } from "./keeper-host.ts";

const KEEPER_COMMAND_DESCRIPTION = "context-keeper: status and settings; stats, now, why, cache, on, off, set, reset, save (Tab completes)";

type Step = (event: unknown, ctx: ExtensionContext) => unknown;

export interface RegisterKeeperOptions {
  /** Passed to the compaction wiring (env, lifecycle listener) — tests. */
  compaction?: Omit<KeeperCompactionOptions, "isActive">;
  /** The keeper's side (default `createKeeperHost`); tests pass a recording one. */
  createHost?: (pi: ExtensionAPI, hostOptions: KeeperHostOptions) => KeeperHost;
}

/** The keeper's handler per event it listens to. */
function keeperSteps(keeper: KeeperHost): Record<string, Step> {
  return {
    session_start: (_e, ctx) => keeper.onSessionStart(ctx),
    session_tree: (_e, ctx) => keeper.onSessionTree(ctx),
    session_compact: (_e, ctx) => keeper.onSessionCompact(ctx),
    session_shutdown: () => keeper.onSessionShutdown(),
    context: (e, ctx) => keeper.onContext(e as never, ctx),
    message_end: (e, ctx) => keeper.onMessageEnd((e as { message: ContextMessage }).message, ctx),
    turn_end: (_e, ctx) => keeper.onTurnEnd(ctx),
    before_provider_request: (e, ctx) => keeper.onBeforeProviderRequest(e as never, ctx),
    cache_warming_decision: (e) => keeper.onCacheWarmingDecision(e as never),
  };
}

export function registerKeeper(pi: ExtensionAPI, options: RegisterKeeperOptions = {}): KeeperHost {
  // Bound once registered below: the budget trigger and warming consult async compaction.
  let compaction: CompactionController | undefined;
  const keeper = (options.createHost ?? createKeeperHost)(pi, { compactionOutlook: () => compaction?.outlook() });
  const hub = createEventHub(pi);
  compaction = registerKeeperCompaction(hub.pi, {
    ...options.compaction,
    isActive: () => keeper.settings().enabled && keeper.settings().compaction.enabled,
    // After an apply the keeper prunes the kept tail again: measure the compacted context as sent.
    sentContext: (messages, ctx) => keeper.sentContext(messages as ContextMessage[], ctx) as typeof messages,
  });

  const own = keeperSteps(keeper);
  const events = [...new Set([...Object.keys(own), ...hub.events()])];
  for (const event of events) {
    const mine = own[event];
    const theirs: AnyHandler[] = hub.handlers(event);
    // Keeper first, compaction after, for every shared event (see the header for why).
    const steps: Step[] = [...(mine ? [mine] : []), ...theirs];
    (pi.on as (event: string, handler: (e: unknown, ctx: ExtensionContext) => unknown) => void)(event, (e, ctx) => fanOut(steps.map((s) => () => s(e, ctx))));
  }

  pi.registerTool({ ...keeper.recallTool(), defaultActive: false });
  pi.registerCommand("keeper", {
    description: KEEPER_COMMAND_DESCRIPTION,
    getArgumentCompletions: (prefix) => keeper.keeperCompletions(prefix),
    handler: (args, ctx) => keeper.onKeeperCommand(args, ctx),
  });
  return keeper;
}
