/**
 * Messages to the user: through the UI when there is one, on the console otherwise (print
 * mode, `ctx.hasUI` false), as pi-async-compaction does. Never throws.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { RegistrationContext } from "./context.ts";

export function say(ctx: ExtensionContext, message: string, type: "info" | "warning" | "error" = "info"): void {
  try {
    if (ctx.hasUI === false) console.log(message);
    else ctx.ui.notify(message, type);
  } catch {
    // The UI may be gone during teardown.
  }
}

const contextWas = (tokensBefore: number | undefined): string =>
  typeof tokensBefore === "number" && tokensBefore > 0 ? ` (context was ${tokensBefore.toLocaleString("en-US")} tokens)` : "";

/** The one-line notice when a background summary is applied. */
export function appliedNotice(label: string, tokensBefore: number | undefined): string {
  return `${label}: applied a background summary${contextWas(tokensBefore)}`;
}

/** The notice when a late job's digest is applied in its place (`late-digest.ts`). */
export function lateDigestNotice(label: string, tokensBefore: number | undefined): string {
  return `${label}: the background summary was not ready; applied an extractive digest${contextWas(tokensBefore)}. The summary upgrades it when it comes.`;
}

export function noticeApplied(rc: RegistrationContext, ctx: ExtensionContext, tokensBefore?: number): void {
  say(ctx, appliedNotice(rc.adapter.label, tokensBefore));
}

/**
 * A message from `session_compact`: said on the next tick. Pi's interactive mode clears its chat
 * and renders the compacted session at `compaction_end`, right after the extensions' handlers
 * return, which would wipe a message said from inside the handler (seen in tmux).
 */
export function sayAfterCompaction(rc: RegistrationContext, ctx: ExtensionContext, message: string): void {
  rc.timers.setTimeout(() => say(ctx, message), 0);
}
