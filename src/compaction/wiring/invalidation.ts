/**
 * Hooks that make a pending or ready job stale: a different model, a different thinking
 * level, or a tree move that drops the job's anchors.
 */
import { branchInfo } from "../apply-gate.ts";
import { modelKeyOf } from "../controller.ts";
import { validateBranchAnchors } from "../validate.ts";
import { enterHook } from "./activity.ts";
import { activeJob, type RegistrationContext } from "./context.ts";

export function registerInvalidationHooks(rc: RegistrationContext): void {
  const { controller: c, pi } = rc;

  pi.on("model_select", (event, ctx) => {
    if (!enterHook(rc, ctx)) return undefined;
    c.remember(ctx);
    const job = activeJob(rc);
    if (job && modelKeyOf(event.model) !== job.modelKey) c.invalidate("model_changed");
  });

  pi.on("thinking_level_select", (event, ctx) => {
    if (!enterHook(rc, ctx)) return;
    const job = activeJob(rc);
    if (job && event.level !== job.thinkingLevel) c.invalidate("thinking_changed");
  });

  pi.on("session_tree", (_event, ctx) => {
    if (!enterHook(rc, ctx)) return undefined;
    c.remember(ctx);
    const job = activeJob(rc);
    if (!job) return;
    const verdict = validateBranchAnchors(job, branchInfo(ctx.sessionManager.getBranch()));
    if (!verdict.ok) c.invalidate(verdict.reason);
  });
}
