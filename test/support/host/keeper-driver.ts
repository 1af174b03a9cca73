/**
 * A keeper host driven as Pi drives it: each call runs the Pi event's steps from the host's
 * one table (`piEventTable` in src/host/hooks.ts, the keeper's parts only), each guarded as
 * the registered handler guards them. Tests call `onContext`, `onTurnEnd`, … instead of
 * registering with a fake Pi.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { guardedHandler, piEventTable } from "../../../src/host/hooks.ts";
import { createKeeperHost, type KeeperHost, type KeeperHostOptions, type KeeperPi } from "../../../src/host/keeper-host.ts";
import type { ContextMessage } from "../../../src/session/messages.ts";

export interface DrivenKeeper extends KeeperHost {
  /** Run Pi event `event` through the table (what Pi's one registered handler does). */
  fire(event: string, payload: unknown, ctx: ExtensionContext): unknown;
  onSessionStart(ctx: ExtensionContext): void;
  onSessionTree(ctx: ExtensionContext): void;
  onSessionCompact(ctx: ExtensionContext): void;
  onSessionShutdown(): Promise<void>;
  onContext(event: { messages: unknown[] }, ctx: ExtensionContext): { messages: ContextMessage[] } | undefined;
  onMessageEnd(message: ContextMessage, ctx: ExtensionContext): void;
  onTurnEnd(ctx: ExtensionContext): void;
  onBeforeProviderRequest(event: { payload: unknown }, ctx: ExtensionContext): unknown;
  onCacheWarmingDecision(event: { warmCost: number; missCost: number; continuationProbability: number; action: "warm" | "stop" }): { action: "stop" } | undefined;
}

/** `host` (default: a new keeper host) with a `fire` through the table and the old per-event names. */
export function driveKeeper(pi: KeeperPi, options: KeeperHostOptions = {}, host: KeeperHost = createKeeperHost(pi, options)): DrivenKeeper {
  const table = piEventTable(host, undefined);
  const fire = (event: string, payload: unknown, ctx: ExtensionContext): unknown => {
    const steps = table[event];
    return steps ? guardedHandler(host, event, steps)(payload, ctx) : undefined;
  };
  const noCtx = {} as ExtensionContext;
  return {
    ...host,
    fire,
    onSessionStart: (ctx) => void fire("session_start", { reason: "startup" }, ctx),
    onSessionTree: (ctx) => void fire("session_tree", {}, ctx),
    onSessionCompact: (ctx) => void fire("session_compact", {}, ctx),
    onSessionShutdown: async () => void (await fire("session_shutdown", {}, noCtx)),
    onContext: (event, ctx) => fire("context_with_system", event, ctx) as { messages: ContextMessage[] } | undefined,
    onMessageEnd: (message, ctx) => void fire("message_end", { message }, ctx),
    onTurnEnd: (ctx) => void fire("turn_end", { outcome: "completed", entries: [] }, ctx),
    onBeforeProviderRequest: (event, ctx) => fire("before_provider_request", event, ctx),
    onCacheWarmingDecision: (event) => fire("cache_warming_decision", event, noCtx) as { action: "stop" } | undefined,
  };
}
