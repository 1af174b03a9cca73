/**
 * Pi wiring for this package's async compaction: env config, Pi's settings and runtime
 * helpers, the default adapter. The host (`hooks.ts`) calls `registerKeeperCompaction` with
 * its event hub, so each Pi event is still registered once, by the host.
 */
import { type ExtensionAPI, type ExtensionContext, SettingsManager } from "@earendil-works/pi-coding-agent";
import { appendFileSync } from "node:fs";
import { readCompactionEnv } from "../compaction/config.ts";
import type { CompactionController } from "../compaction/controller.ts";
import { createDefaultAdapter } from "../compaction/default-adapter.ts";
import type { LifecycleEvent, LifecycleListener } from "../compaction/lifecycle.ts";
import type { AgentMessage } from "../compaction/primitives.ts";
import { piCompact, piCompactionPrimitives } from "./compaction-runtime.ts";
import { registerAsyncCompaction } from "../compaction/register-async.ts";
import { registerDisabledCompactNowCommand } from "../compaction/wiring/compact-now-command.ts";

export interface KeeperCompactionOptions {
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  onLifecycleEvent?: LifecycleListener;
  /** Status-line label; default `async compaction`. */
  label?: string;
  /**
   * Whether the subsystem acts for this context (default: always). `index.ts` passes the
   * keeper settings (`enabled && compaction.enabled`); false makes every hook a no-op.
   */
  isActive?: (ctx: ExtensionContext) => boolean;
  /** The messages as the keeper will send them: the "compacted context fits" check measures these. */
  sentContext?: (messages: AgentMessage[], ctx: ExtensionContext) => AgentMessage[];
}

const DEFAULT_LABEL = "async compaction";

export function registerKeeperCompaction(pi: ExtensionAPI, options: KeeperCompactionOptions = {}): CompactionController | undefined {
  const { config, diagnostics } = readCompactionEnv(options.env ?? process.env);
  let diagnosticsShown = false;
  if (diagnostics.length > 0) {
    pi.on("session_start", (_e, ctx) => {
      if (diagnosticsShown || (options.isActive && !options.isActive(ctx))) return;
      diagnosticsShown = true;
      for (const d of diagnostics) ctx.ui.notify(d.message, "warning");
    });
  }
  if (!config.enabled) {
    registerDisabledCompactNowCommand(pi, options.label ?? DEFAULT_LABEL);
    return undefined;
  }
  const adapter = createDefaultAdapter({ compact: piCompact, primitives: piCompactionPrimitives, label: options.label });
  return registerAsyncCompaction(pi, adapter, {
    config,
    primitives: piCompactionPrimitives,
    getCompactionSettings: (ctx) => SettingsManager.create(ctx.cwd).getCompactionSettings(ctx.model),
    onLifecycleEvent: withTrace(options.onLifecycleEvent, config.traceFile),
    isActive: options.isActive,
    sentContext: options.sentContext,
  });
}

/** Also append each event, timestamped, to `traceFile` (best effort: a write error is dropped). */
function withTrace(listener: LifecycleListener | undefined, traceFile: string | undefined): LifecycleListener | undefined {
  if (!traceFile) return listener;
  return (event: LifecycleEvent) => {
    listener?.(event);
    try {
      appendFileSync(traceFile, `${JSON.stringify({ at: Date.now(), ...event })}\n`);
    } catch {
      // Diagnostics must never break compaction.
    }
  };
}
