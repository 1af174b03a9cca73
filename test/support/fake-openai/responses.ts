/**
 * A fake OpenAI Responses API (`POST /v1/responses`, Pi's `openai-responses`) on the shared fake
 * server (../fake-core.ts). Requests are checked by responses-validate.ts (a violation is a
 * 400 with OpenAI's error body), classified main/side (classify.ts), answered from the script
 * or the side router as Responses SSE (responses-sse.ts), with `cached_tokens` from the automatic
 * prefix cache (auto-cache.ts).
 *
 * Reasoning is emitted when the request asks for it (`reasoning.effort` other than "none"): a
 * `reasoning` item with the step's thinking as its summary and encrypted content (reasoning.ts),
 * before the message and calls it goes with; the server remembers which output items came after
 * which reasoning item, so sending one back without it is refused, as OpenAI does.
 */
import { idNonceOf, type Dialect, type FakeServer } from "../fake-core.ts";
import { classifyResponses, responsesInstructions } from "./classify.ts";
import { createTurnFactory, startOpenAiFake } from "./emit.ts";
import { encryptReasoning } from "./reasoning.ts";
import { encodeResponsesEvents } from "./responses-sse.ts";
import { validateResponsesInput } from "./responses-validate.ts";
import type { EmittedTurn, FakeOpenAiOptions, ResponsesRecord, ResponsesRequest } from "./types.ts";

export type FakeResponses = FakeServer<ResponsesRequest, EmittedTurn>;

function reasoningRequested(body: ResponsesRequest): boolean {
  const effort = body.reasoning?.effort;
  return typeof effort === "string" && effort !== "none";
}

/** The Responses wire on the core (the Codex fake, codex.ts, builds on it). */
export function responsesDialect(o: FakeOpenAiOptions<ResponsesRecord>): Omit<Dialect<ResponsesRequest, EmittedTurn>, "errorBody" | "streamHeaders"> {
  const turns = createTurnFactory(idNonceOf(o.idNonce), o.cache, (id) => encryptReasoning(id, o.reasoningSecret));
  const pairedReasoning = new Map<string, string>();
  return {
    api: "openai-responses",
    paths: ["/v1/responses", "/responses"],
    classify: classifyResponses,
    isRequest: (p): p is ResponsesRequest => typeof p === "object" && p !== null && Array.isArray((p as { input?: unknown }).input),
    admit(body) {
      if (o.validate === false) return { effective: body };
      const v = validateResponsesInput(body.input, { reasoningSecret: o.reasoningSecret, pairedReasoningOf: (id) => pairedReasoning.get(id) });
      return v ? { refusal: { status: 400, type: "invalid_request_error", message: v.message, param: "input", code: v.code ?? null } } : { effective: body };
    },
    emit(body, step) {
      const units = [...(body.tools ?? []), ...body.input].map((u) => JSON.stringify(u));
      const turn = turns.emit({ model: String(body.model ?? ""), units, step, reasoning: reasoningRequested(body), responseId: (id) => `resp_${id}` });
      turn.finish = "completed";
      if (turn.reasoning) {
        if (turn.message) pairedReasoning.set(turn.message.id, turn.reasoning.id);
        for (const c of turn.calls) pairedReasoning.set(c.itemId, turn.reasoning.id);
      }
      return turn;
    },
    encode: (turn, body) => encodeResponsesEvents(turn, String(body.model ?? "fake-model")),
  };
}

export function startFakeResponses(options: FakeOpenAiOptions<ResponsesRecord> = {}): FakeResponses {
  return startOpenAiFake(responsesDialect(options), options, responsesInstructions);
}
