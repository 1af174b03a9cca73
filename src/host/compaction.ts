/**
 * The keeper's async compaction: the env config, Pi's settings and runtime helpers, the
 * default adapter, over the keeper's own engine state cell (the budget trigger and warming
 * read compaction's state there). `hooks.ts` puts its handlers in the one table of Pi events.
 */
import { type ExtensionAPI, type ExtensionContext, SettingsManager } from "@earendil-works/pi-coding-agent";
import { appendFileSync } from "node:fs";
import { readCompactionEnv, type ConfigDiagnostic } from "../compaction/config.ts";
import { createDefaultAdapter } from "../compaction/default-adapter.ts";
import type { LifecycleEvent, LifecycleListener } from "../compaction/lifecycle.ts";
import type { KeeperRenderInput } from "../engine/index.ts";
import { createCompactionHost, type CompactionPart } from "./compaction-host.ts";
import { piCompact, piCompactionPrimitives } from "./compaction-runtime.ts";
import type { EngineCell } from "./engine-cell.ts";

export interface KeeperCompactionOptions {
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  onLifecycleEvent?: LifecycleListener;
  /** Status-line label; default `async compaction`. */
  label?: string;
}

export interface KeeperCompaction {
  /** Undefined when `PI_ASYNC_PREFIX_COMPACTION=0`: only the command, answering "disabled". */
  part: CompactionPart | undefined;
  label: string;
  /** What the env got wrong (said once, at the first session start the subsystem is active for). */
  diagnostics: ConfigDiagnostic[];
}

const DEFAULT_LABEL = "async compaction";

export function createKeeperCompaction(
  pi: Pick<ExtensionAPI, "appendEntry" | "sendUserMessage" | "getThinkingLevel">,
  options: KeeperCompactionOptions & {
    cell: EngineCell;
    isActive: (ctx: ExtensionContext) => boolean;
    /** The keeper's render settings: the "compacted context fits" check measures the context as the keeper sends it. */
    keeperRender: (ctx: ExtensionContext) => Pick<KeeperRenderInput, "settings" | "model">;
  },
): KeeperCompaction {
  const { config, diagnostics } = readCompactionEnv(options.env ?? process.env);
  const label = options.label ?? DEFAULT_LABEL;
  if (!config.enabled) return { part: undefined, label, diagnostics };
  const adapter = createDefaultAdapter({ compact: piCompact, primitives: piCompactionPrimitives, label: options.label });
  const part = createCompactionHost({
    cell: options.cell,
    adapter,
    pi,
    config,
    primitives: piCompactionPrimitives,
    getCompactionSettings: (ctx) => SettingsManager.create(ctx.cwd).getCompactionSettings(ctx.model),
    isActive: options.isActive,
    keeperRender: options.keeperRender,
    ...(options.onLifecycleEvent || config.traceFile ? { onLifecycleEvent: withTrace(options.onLifecycleEvent, config.traceFile) } : {}),
  });
  return { part, label, diagnostics };
}

/** Also append each event, timestamped, to `traceFile` (best effort: a write error is dropped). */
function withTrace(listener: LifecycleListener | undefined, traceFile: string | undefined): LifecycleListener {
  return (event: LifecycleEvent) => {
    listener?.(event);
    if (!traceFile) return;
    try {
      appendFileSync(traceFile, `${JSON.stringify({ at: Date.now(), ...event })}\n`);
    } catch {
      // Diagnostics must never break compaction.
    }
  };
}
