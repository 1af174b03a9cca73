/**
 * Builds the turn a fake OpenAI server streams for one scripted step: ids from the server's
 * nonce and counter, reasoning only when the request asks for it, token counts from the
 * automatic prefix cache (auto-cache.ts) over the request's units.
 */
import type { MainStep, SideAnswer } from "../fake-anthropic/types.ts";
import { planAutoCache, type AutoCacheEntry, type AutoCacheOptions } from "./auto-cache.ts";
import type { EmittedTurn } from "./types.ts";

export type TurnFactory = {
  /** The turn for `step`; `units` are the request's cache units (tools, then items/messages). */
  emit(o: { model: string; units: string[]; step: MainStep | SideAnswer; reasoning: boolean; responseId: (id: string) => string }): EmittedTurn;
};

export function createTurnFactory(nonce: string, cacheOptions: AutoCacheOptions = {}, encrypt?: (reasoningId: string) => string): TurnFactory {
  const cache = new Map<string, AutoCacheEntry>();
  let counter = 0;
  return {
    emit({ model, units, step, reasoning, responseId }) {
      const id = `${nonce}_${++counter}`;
      const toolCalls = "toolCalls" in step ? (step.toolCalls ?? []) : [];
      const calls = toolCalls.map((c, i) => ({ callId: c.id ?? `call_${id}_${i}`, itemId: `fc_${id}_${i}`, name: c.name, arguments: JSON.stringify(c.input) }));
      const thought = reasoning && step.thinking !== undefined ? step.thinking : undefined;
      const rsId = `rs_${id}`;
      const plan = planAutoCache(model, units, cache, Date.now(), cacheOptions);
      const reasoningTokens = Math.ceil((thought?.length ?? 0) / 4);
      const outChars = (step.text?.length ?? 0) + calls.reduce((n, c) => n + c.arguments.length, 0);
      return {
        responseId: responseId(id),
        ...(thought !== undefined ? { reasoning: { id: rsId, text: thought, ...(encrypt ? { encryptedContent: encrypt(rsId) } : {}) } } : {}),
        ...(step.text !== undefined ? { message: { id: `msg_${id}`, text: step.text } } : {}),
        calls,
        finish: "",
        usage: { promptTokens: plan.promptTokens, cachedTokens: plan.cachedTokens, outputTokens: Math.ceil(outChars / 4) + 1 + reasoningTokens, reasoningTokens },
      };
    },
  };
}
