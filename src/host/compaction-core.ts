/**
 * `registerAsyncCompaction` as `./core` exports it (through the package's `core.ts` entry):
 * async compaction alone, for another package's adapter — this package's shape or
 * pi-async-compaction's (`anchor-compat.ts`) — with Pi's helpers and settings as defaults, so
 * an anchor-style call `registerAsyncCompaction(pi, adapter, { commandName })` works
 * unchanged. The same engine and host as the extension's, and the same table of Pi events
 * (`hooks.ts`), with compaction's part only.
 */
import { type ExtensionAPI, type ExtensionContext, SettingsManager } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "../compaction/adapter.ts";
import { type AnchorAsyncCompactionAdapter, fromAnchorAdapter, isAnchorAdapter } from "../compaction/anchor-compat.ts";
import { readCompactionEnv } from "../compaction/config.ts";
import type { AsyncCompactionHandle, RegisterAsyncCompactionOptions } from "../compaction/register-options.ts";
import { createCompactionHost } from "./compaction-host.ts";
import { piCompactionPrimitives } from "./compaction-runtime.ts";
import { createEngineCell } from "./engine-cell.ts";
import { DEFAULT_COMMAND_NAME, registerCompactNowCommand } from "./compaction-command.ts";
import { registerTable } from "./hooks.ts";

export type CoreRegisterOptions = Partial<RegisterAsyncCompactionOptions> & {
  /** pi-async-compaction's option; accepted, the core's own description is used. */
  commandDescription?: string;
};

// biome-ignore lint: the anchor adapter's type parameters are erased here.
type AnyAnchorAdapter = AnchorAsyncCompactionAdapter<any, any>;

export function registerCompactionCore(pi: ExtensionAPI, adapter: AnyAsyncCompactionAdapter | AnyAnchorAdapter, options: CoreRegisterOptions = {}): AsyncCompactionHandle {
  const core = isAnchorAdapter(adapter as AnyAsyncCompactionAdapter) ? fromAnchorAdapter(adapter as AnyAnchorAdapter) : (adapter as AnyAsyncCompactionAdapter);
  const { commandDescription: _ignored, ...rest } = options;
  const cell = createEngineCell();
  const part = createCompactionHost({
    ...rest,
    cell,
    adapter: core,
    pi,
    primitives: options.primitives ?? piCompactionPrimitives,
    getCompactionSettings: options.getCompactionSettings ?? ((ctx: ExtensionContext) => SettingsManager.create(ctx.cwd).getCompactionSettings(ctx.model)),
    config: options.config ?? readCompactionEnv(process.env).config,
  });
  registerTable(pi, { cell, perform: part.perform }, undefined, part);
  if (options.commandName !== false) registerCompactNowCommand(pi, options.commandName ?? DEFAULT_COMMAND_NAME, part.command);
  return part.handle;
}
