/** Read-only views of the session a runtime works on: the model in use and the context Pi would send. */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";

export function modelIdentity(ctx: ExtensionContext): { provider: string; id: string; api: string } | undefined {
  const m = ctx.model;
  return m ? { provider: m.provider, id: m.id, api: m.api } : undefined;
}

/** Messages Pi would put in context now: the active branch, compactions and edits applied. */
export function contextMessagesOf(ctx: ExtensionContext): ContextMessage[] {
  return ctx.sessionManager.buildSessionProjection().messages as ContextMessage[];
}
