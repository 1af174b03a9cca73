/**
 * `registerAsyncCompaction` as `./core` exports it: this package's adapters and
 * pi-async-compaction's (through `anchor-compat.ts`), with Pi's helpers and settings as
 * defaults so an anchor-style call `registerAsyncCompaction(pi, adapter, { commandName })`
 * works unchanged.
 */
import { type ExtensionAPI, type ExtensionContext, SettingsManager } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "../compaction/adapter.ts";
import { type AnchorAsyncCompactionAdapter, fromAnchorAdapter, isAnchorAdapter } from "../compaction/anchor-compat.ts";
import { readCompactionEnv } from "../compaction/config.ts";
import type { CompactionController } from "../compaction/controller.ts";
import { piCompactionPrimitives } from "./compaction-runtime.ts";
import { registerAsyncCompaction as registerCore, type RegisterAsyncCompactionOptions } from "../compaction/register-async.ts";

export type CoreRegisterOptions = Partial<RegisterAsyncCompactionOptions> & {
  /** pi-async-compaction's option; accepted, the core's own description is used. */
  commandDescription?: string;
};

// biome-ignore lint: the anchor adapter's type parameters are erased here.
type AnyAnchorAdapter = AnchorAsyncCompactionAdapter<any, any>;

export function registerAsyncCompaction(
  pi: ExtensionAPI,
  adapter: AnyAsyncCompactionAdapter | AnyAnchorAdapter,
  options: CoreRegisterOptions = {},
): CompactionController {
  const core = isAnchorAdapter(adapter as AnyAsyncCompactionAdapter) ? fromAnchorAdapter(adapter as AnyAnchorAdapter) : (adapter as AnyAsyncCompactionAdapter);
  const { commandDescription: _ignored, ...rest } = options;
  return registerCore(pi, core, {
    ...rest,
    primitives: options.primitives ?? piCompactionPrimitives,
    getCompactionSettings: options.getCompactionSettings ?? ((ctx: ExtensionContext) => SettingsManager.create(ctx.cwd).getCompactionSettings(ctx.model)),
    config: options.config ?? readCompactionEnv(process.env).config,
  });
}
