/** Read-only views of the session a runtime works on: the model in use and the context Pi would send. */
import { estimateTokens, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ContextMessage } from "../session/messages.ts";

export function modelIdentity(ctx: ExtensionContext): { provider: string; id: string; api: string } | undefined {
  const m = ctx.model;
  return m ? { provider: m.provider, id: m.id, api: m.api } : undefined;
}

/** Messages Pi would put in context now: the active branch, compactions and edits applied. */
export function contextMessagesOf(ctx: ExtensionContext): ContextMessage[] {
  return ctx.sessionManager.buildSessionProjection().messages as ContextMessage[];
}

function tokensOf(messages: readonly ContextMessage[]): number {
  let n = 0;
  for (const m of messages) n += estimateTokens(m as Parameters<typeof estimateTokens>[0]);
  return n;
}

/** `keeper: context 182k → 64k` — what the next request carries with and without the keeper. */
export function contextStatus(raw: ContextMessage[], rendered: ContextMessage[]): string | undefined {
  if (rendered === raw) return undefined;
  const k = (n: number) => `${Math.round(n / 1000)}k`;
  return `keeper: context ${k(tokensOf(raw))} → ${k(tokensOf(rendered))}`;
}
