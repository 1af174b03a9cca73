/**
 * `/async-compact-now`: apply a ready summary when idle, otherwise start a job now.
 */
import { compactionNotStarted } from "../../ui/compaction-text.ts";
import { isSafeIdle } from "../apply-gate.ts";
import { enterHook } from "./activity.ts";
import { readyJob, type RegistrationContext } from "./context.ts";
import { confirmDraft, requestCompact } from "./ready-handoff.ts";

export const DEFAULT_COMMAND_NAME = "async-compact-now";

export function registerCompactNowCommand(rc: RegistrationContext, commandName: string): void {
  const { adapter, controller: c } = rc;
  rc.pi.registerCommand(commandName, {
    description: "Start async compaction now (or apply a ready summary)",
    handler: async (_args, ctx) => {
      if (!enterHook(rc, ctx)) return ctx.ui.notify(`${adapter.label}: disabled`, "info");
      c.remember(ctx);
      confirmDraft(rc, ctx);
      const s = c.current;
      if (s.kind === "pending") return ctx.ui.notify(`${adapter.label}: already preparing`, "info");
      const ready = readyJob(rc);
      if (ready && !ready.handoff) {
        if (isSafeIdle(ctx)) return requestCompact(rc, { ctx, jobId: ready.job.jobId, path: "idle_compact" });
        return ctx.ui.notify(`${adapter.label}: ready; applies at the next turn boundary`, "info");
      }
      const outcome = c.start(ctx, { manual: true });
      ctx.ui.notify(outcome.started ? `${adapter.label}: preparing` : `${adapter.label}: ${compactionNotStarted(outcome.reason)}`, "info");
    },
  });
}
