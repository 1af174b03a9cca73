/**
 * Restore and persistence across restarts: `session_start` drops a job from another
 * session and revalidates a stored ready summary; `session_shutdown` writes an unsaved one.
 */
import { restoreStoredReady } from "../restore.ts";
import { clearSettleTimer, enterHook, isActiveFor } from "./activity.ts";
import { activeJob, type RegistrationContext } from "./context.ts";
import { scheduleSettle } from "./idle-apply.ts";
import { persistReady, validateReady } from "./ready-handoff.ts";

export function registerSessionLifecycleHooks(rc: RegistrationContext): void {
  const { controller: c, pi } = rc;

  pi.on("session_start", (_event, ctx) => {
    if (!enterHook(rc, ctx)) return undefined;
    c.remember(ctx);
    const job = activeJob(rc);
    if (job && job.sessionId !== ctx.sessionManager.getSessionId()) c.invalidate("session_changed");
    if (activeJob(rc)) return;
    if (!rc.config.enabled) return;
    restoreStoredReady(ctx, {
      controller: c,
      adapterId: rc.adapter.id,
      validate: (vctx, ready, branch) => validateReady(rc, { ctx: vctx, ready, branch, settings: rc.options.getCompactionSettings(vctx) }),
      emit: rc.emit,
      applyWhenIdle: (sctx, jobId) => scheduleSettle(rc, { ctx: sctx, jobId, attempt: 0 }),
    });
  });

  pi.on("session_shutdown", (_event, ctx) => {
    clearSettleTimer(rc);
    // A ready summary that was never written survives the restart (revalidated at session_start).
    if (isActiveFor(rc, ctx)) persistReady(rc);
    c.shutdown();
  });
}
