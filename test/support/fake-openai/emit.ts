/**
 * What the fake OpenAI servers share beyond the core: the turn they stream for one scripted step
 * (ids from the server's nonce and counter, reasoning only when the request asks for it, token
 * counts from the automatic prefix cache (auto-cache.ts) over the request's units), OpenAI's
 * error body and headers, the default side answer, and the start of a server on the core.
 */
import { PI_SUMMARIZATION_PROMPT_START } from "../fake-anthropic/classify.ts";
import type { MainStep, SideAnswer } from "../fake-anthropic/types.ts";
import { startFakeServer, type Dialect, type FakeRecord, type FakeServer } from "../fake-core.ts";
import { planAutoCache, type AutoCacheEntry, type AutoCacheOptions } from "./auto-cache.ts";
import type { EmittedTurn, FakeOpenAiOptions } from "./types.ts";

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
        usage: {
          promptTokens: plan.promptTokens,
          cachedTokens: plan.cachedTokens,
          outputTokens: Math.ceil(outChars / 4) + 1 + reasoningTokens,
          reasoningTokens,
          ...(plan.writtenTokens !== undefined ? { cacheWriteTokens: plan.writtenTokens } : {}),
        },
      };
    },
  };
}

/** OpenAI's error body: `{"error":{"message","type","param","code"}}`. */
export function openAiErrorBody(e: { type: string; message: string; param?: string | null; code?: string | null }): string {
  return JSON.stringify({ error: { message: e.message, type: e.type, param: e.param ?? null, code: e.code ?? null } });
}

/** Default side answer: a Pi-shaped summary for Pi's compaction prompt, a plain text otherwise. */
export function defaultOpenAiSideAnswer(instructions: string, kindIndex: number): SideAnswer {
  if (instructions.includes(PI_SUMMARIZATION_PROMPT_START)) {
    return { text: `## Goal\nScripted compaction summary #${kindIndex}.\n\n## Progress\n### Done\n- [x] earlier work\n\n## Next Steps\n1. continue` };
  }
  return { text: `Scripted side answer #${kindIndex}.` };
}

/** A fake OpenAI server for `dialect` (its stream parts; errors and headers are OpenAI's) on the shared core. */
export function startOpenAiFake<Body>(
  dialect: Omit<Dialect<Body, EmittedTurn>, "errorBody" | "streamHeaders">,
  options: FakeOpenAiOptions<FakeRecord<Body, EmittedTurn>>,
  instructionsOf: (body: Body) => string,
): FakeServer<Body, EmittedTurn> {
  return startFakeServer<Body, EmittedTurn>(
    { ...dialect, errorBody: openAiErrorBody, streamHeaders: (turn) => ({ "x-request-id": `req_${turn.responseId}` }) },
    {
      script: options.script,
      sideRouter: options.sideRouter ?? (({ request, kindIndex }) => defaultOpenAiSideAnswer(instructionsOf(request.body), kindIndex)),
      classify: options.classify as ((body: Body) => "main" | "side") | undefined,
    },
  );
}
