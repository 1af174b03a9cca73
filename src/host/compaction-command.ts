/**
 * `/async-compact-now`: apply a ready summary when idle, otherwise start a job now (the
 * engine's `compaction-command` step). Registered even when `PI_ASYNC_PREFIX_COMPACTION=0`,
 * then answering that it is disabled.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { say } from "./compaction-host.ts";

export const DEFAULT_COMMAND_NAME = "async-compact-now";
/** The command's description (also how `neighbour-compaction.ts` tells the keeper's command from another's in an inline extension). */
export const COMPACT_NOW_DESCRIPTION = "Start async compaction now (or apply a ready summary)";

export function registerCompactNowCommand(pi: Pick<ExtensionAPI, "registerCommand">, commandName: string, run: (ctx: ExtensionContext, args: string) => Promise<void> | void): void {
  pi.registerCommand(commandName, { description: COMPACT_NOW_DESCRIPTION, handler: async (args, ctx) => run(ctx, args) });
}

/** What the command does when the subsystem is switched off by the environment: it only says so. */
export const disabledCompactNow = (label: string) => async (ctx: ExtensionContext) => say(ctx, `${label}: disabled`);

/** The command when the subsystem is switched off by the environment: it only says so. */
export function registerDisabledCompactNowCommand(pi: Pick<ExtensionAPI, "registerCommand">, label: string, commandName: string = DEFAULT_COMMAND_NAME): void {
  registerCompactNowCommand(pi, commandName, disabledCompactNow(label));
}
