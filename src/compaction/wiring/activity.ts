/**
 * The `isActive` gate every hook passes first. An inactive context makes the hook a no-op
 * and stands the registration down (cancels a leftover job, drops pending requests).
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { activeJob, type RegistrationContext } from "./context.ts";

/** The caller's answer; a throwing `isActive` counts as inactive. */
export function isActiveFor(rc: RegistrationContext, ctx: ExtensionContext): boolean {
  try {
    return rc.isActive(ctx);
  } catch {
    return false;
  }
}

/** Whether the hook may act; when not, stand down first. */
export function enterHook(rc: RegistrationContext, ctx: ExtensionContext): boolean {
  const on = isActiveFor(rc, ctx);
  if (!on) standDown(rc);
  return on;
}

export function clearSettleTimer(rc: RegistrationContext): void {
  if (rc.state.settleHandle !== undefined) rc.timers.clearTimeout(rc.state.settleHandle);
  rc.state.settleHandle = undefined;
}

function standDown(rc: RegistrationContext): void {
  clearSettleTimer(rc);
  rc.state.compactRequestedFor = undefined;
  rc.state.autoResumeJobId = undefined;
  if (activeJob(rc)) rc.controller.invalidate("cancelled");
  // No job will start: the pruning side must not hold its budget flush for one.
  rc.controller.noteStartWindow(undefined);
}
