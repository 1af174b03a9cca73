/**
 * `/async-compact-now`: apply a ready summary when idle, otherwise start a job now. Registered
 * even when `PI_ASYNC_PREFIX_COMPACTION=0`, then answering that it is disabled.
 */
import { compactionNotStarted } from "../../ui/compaction-text.ts";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { isSafeIdle } from "../apply-gate.ts";
import { enterHook } from "./activity.ts";
import { readyJob, type RegistrationContext } from "./context.ts";
import { say } from "./notify.ts";
import { confirmDraft, requestCompact } from "./ready-handoff.ts";

export const DEFAULT_COMMAND_NAME = "async-compact-now";
const DESCRIPTION = "Start async compaction now (or apply a ready summary)";

export function registerCompactNowCommand(rc: RegistrationContext, commandName: string): void {
  const { adapter, controller: c } = rc;
  rc.pi.registerCommand(commandName, {
    description: DESCRIPTION,
    handler: async (_args, ctx) => {
      if (!enterHook(rc, ctx)) return say(ctx, `${adapter.label}: disabled`);
      c.remember(ctx);
      confirmDraft(rc, ctx);
      const s = c.current;
      if (s.kind === "pending") return say(ctx, `${adapter.label}: already preparing`);
      const ready = readyJob(rc);
      if (ready && !ready.handoff) {
        if (!isSafeIdle(ctx)) return say(ctx, `${adapter.label}: ready; applies at the next turn boundary`);
        if (!requestCompact(rc, { ctx, jobId: ready.job.jobId, path: "idle_compact" })) return say(ctx, `${adapter.label}: the ready summary went stale; not applied`);
        return;
      }
      const outcome = c.start(ctx, { manual: true });
      say(ctx, outcome.started ? `${adapter.label}: preparing` : `${adapter.label}: ${compactionNotStarted(outcome.reason)}`);
    },
  });
}

/** The command when the subsystem is switched off by the environment: it only says so. */
export function registerDisabledCompactNowCommand(pi: ExtensionAPI, label: string, commandName: string = DEFAULT_COMMAND_NAME): void {
  pi.registerCommand(commandName, {
    description: DESCRIPTION,
    handler: async (_args, ctx) => say(ctx, `${label}: disabled`),
  });
}
