/**
 * `registerAsyncCompaction`: binds one adapter's job lifecycle to Pi's hooks.
 *
 * Apply paths, in order of preference:
 *   1. `turn_end` returns a `compaction` draft: applied between turns, nothing aborted.
 *   2. idle: after `agent_end` (bounded settle retry) or when a job finishes while idle,
 *      `ctx.compact()` runs Pi's flow and `session_before_compact` hands the result over.
 *   3. any Pi compaction (threshold, overflow, `/compact`) is served from a ready job.
 *   4. abort-and-compact, once per job, only over the hard threshold mid-stream.
 *
 * The hooks live in `wiring/`, one module per group, sharing a `RegistrationContext`.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "./adapter.ts";
import type { CompactionController } from "./controller.ts";
import { DEFAULT_COMMAND_NAME, registerCompactNowCommand } from "./wiring/compact-now-command.ts";
import { registerCompactHandoffHooks } from "./wiring/compact-handoff.ts";
import { createRegistrationContext, type RegisterAsyncCompactionOptions } from "./wiring/context.ts";
import { onJobReady, registerAgentEndHook } from "./wiring/idle-apply.ts";
import { onLateResult } from "./wiring/late-handoff.ts";
import { registerInvalidationHooks } from "./wiring/invalidation.ts";
import { registerSessionLifecycleHooks } from "./wiring/session-lifecycle.ts";
import { registerTurnEndHook } from "./wiring/turn-end.ts";

export type { RegisterAsyncCompactionOptions } from "./wiring/context.ts";

export function registerAsyncCompaction(
  pi: ExtensionAPI,
  adapter: AnyAsyncCompactionAdapter,
  options: RegisterAsyncCompactionOptions,
): CompactionController {
  const rc = createRegistrationContext({ pi, adapter, options, onJobReady, onLateResult });
  registerTurnEndHook(rc);
  registerAgentEndHook(rc);
  registerCompactHandoffHooks(rc);
  registerInvalidationHooks(rc);
  registerSessionLifecycleHooks(rc);
  if (options.commandName !== false) registerCompactNowCommand(rc, options.commandName ?? DEFAULT_COMMAND_NAME);
  return rc.controller;
}
