/**
 * A fake Google Generative AI API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
 * Pi's `google-generative-ai`) on the shared fake server (../fake-core.ts). Requests are checked
 * by validate.ts (a violation is a 400 with Google's error body), classified main/side
 * (classify.ts), answered from the script or the side router as Gemini SSE chunks (sse.ts),
 * with `cachedContentTokenCount` from implicit prefix caching.
 *
 * - The model comes from the path; Gemini 3 and later get function call ids (pi-ai sends ids
 *   back to them, `requiresToolCallId`) and have the current turn's thought signatures checked.
 * - Thoughts are streamed as `thought: true` parts when the request asks for them
 *   (`thinkingConfig.includeThoughts`). Unless thinking is off (`thinkingBudget: 0`) every step
 *   is signed (signature.ts), as Google documents it: the first function call part carries the
 *   signature, or, in a step without calls, its last part.
 * - Implicit caching (Gemini 2.5+): the prompt is a sequence of units (the system instruction,
 *   the tools, then each part of each content, with its role and place), each ceil(JSON chars /
 *   4) tokens; a prompt of at least 1024 tokens (4096 for a Pro model) is cached after it for
 *   5 minutes since its last use, and a request reads the longest live cached prefix, counted
 *   exactly; there is no write premium (only the cached count is reported). The prefix cache
 *   itself is the OpenAI fakes' (../fake-openai/auto-cache.ts) with these numbers.
 */
import { idNonceOf, startFakeServer, type FakeServer, type Refusal } from "../fake-core.ts";
import { defaultOpenAiSideAnswer } from "../fake-openai/emit.ts";
import { planAutoCache, type AutoCacheEntry } from "../fake-openai/auto-cache.ts";
import type { MainStep, SideAnswer } from "../fake-anthropic/types.ts";
import { classifyGemini, geminiInstructions, geminiMajor } from "./classify.ts";
import { DEFAULT_SIGNATURE_SECRET, isIssuedSignature, signPart } from "./signature.ts";
import { encodeGeminiChunks } from "./sse.ts";
import type { FakeGoogleOptions, GeminiPart, GeminiRecord, GeminiRequest, GeminiTurn } from "./types.ts";
import { validateGeminiContents } from "./validate.ts";

export type FakeGoogle = FakeServer<GeminiRequest, GeminiTurn, GeminiRecord>;

const STREAM_PATH = /^(?:\/v1beta|\/v1|\/v1alpha)?\/models\/[^/]+:streamGenerateContent$/;

/** The model id in a request path (`/v1beta/models/gemini-3-flash-preview:streamGenerateContent`). */
export function modelOfPath(pathname: string): string {
  return decodeURIComponent(/\/models\/([^/]+):streamGenerateContent$/.exec(pathname)?.[1] ?? "");
}

/** Google's error body: `{"error":{"code","message","status"}}`. */
export function googleErrorBody(e: Refusal): string {
  return JSON.stringify({ error: { code: e.status, message: e.message, status: e.type } });
}

/** The cache units of a request (see the module comment). */
export function geminiUnits(body: GeminiRequest): string[] {
  const units = [JSON.stringify({ systemInstruction: body.systemInstruction ?? null }), JSON.stringify({ tools: body.tools ?? null })];
  body.contents.forEach((c) => c.parts.forEach((part, j) => units.push(JSON.stringify({ role: c.role, start: j === 0, part }))));
  return units;
}

/** The index of the part that carries a step's signature: its first call, else its last part. */
function signedIndex(parts: GeminiPart[]): number {
  const call = parts.findIndex((p) => p.functionCall);
  return call >= 0 ? call : parts.length - 1;
}

function createTurns(o: FakeGoogleOptions) {
  const nonce = idNonceOf(o.idNonce);
  const secret = o.signatureSecret ?? DEFAULT_SIGNATURE_SECRET;
  const cache = new Map<string, AutoCacheEntry>();
  let counter = 0;
  return (body: GeminiRequest, step: MainStep | SideAnswer, model: string): GeminiTurn => {
    const id = `${nonce}_${++counter}`;
    const thinking = body.generationConfig?.thinkingConfig;
    const parts: GeminiPart[] = [];
    if (thinking?.includeThoughts === true && step.thinking !== undefined) parts.push({ text: step.thinking, thought: true });
    if (step.text !== undefined) parts.push({ text: step.text });
    const calls = "toolCalls" in step ? (step.toolCalls ?? []) : [];
    const withIds = (geminiMajor(model) ?? 0) >= 3;
    calls.forEach((c, i) => parts.push({ functionCall: { name: c.name, args: c.input, ...(withIds ? { id: c.id ?? `call_${id}_${i}` } : {}) } }));
    if (parts.length === 0) parts.push({ text: "" });
    if (thinking?.thinkingBudget !== 0) {
      const at = signedIndex(parts);
      parts[at] = { ...parts[at]!, thoughtSignature: signPart(parts[at]!, secret) };
    }
    const minTokens = o.cache?.minTokens ?? (/pro/i.test(model) ? 4096 : 1024);
    const plan = planAutoCache(model, geminiUnits(body), cache, Date.now(), { minTokens, stepTokens: 1, ttlMs: o.cache?.ttlMs ?? 5 * 60_000 });
    const outChars = (step.text?.length ?? 0) + calls.reduce((n, c) => n + JSON.stringify(c.input).length, 0);
    const thoughtChars = parts.some((p) => p.thought) ? (step.thinking?.length ?? 0) : 0;
    const stop = "stopReason" in step ? step.stopReason : undefined;
    return {
      responseId: `gen_${id}`,
      modelVersion: model,
      parts,
      finishReason: stop === "max_tokens" ? "MAX_TOKENS" : "STOP",
      usage: { promptTokens: plan.promptTokens, cachedTokens: plan.cachedTokens, candidatesTokens: Math.ceil(outChars / 4) + 1, thoughtsTokens: Math.ceil(thoughtChars / 4) },
    };
  };
}

export function startFakeGoogle(o: FakeGoogleOptions = {}): FakeGoogle {
  const turns = createTurns(o);
  const secret = o.signatureSecret ?? DEFAULT_SIGNATURE_SECRET;
  return startFakeServer<GeminiRequest, GeminiTurn, GeminiRecord>(
    {
      api: "google-generative-ai",
      paths: [STREAM_PATH],
      classify: classifyGemini,
      isRequest: (p): p is GeminiRequest => typeof p === "object" && p !== null && Array.isArray((p as { contents?: unknown }).contents),
      admit(body, _headers, url) {
        if (o.validate === false) return { effective: body };
        const requireSignatures = (geminiMajor(modelOfPath(url.pathname)) ?? 0) >= 3;
        const v = validateGeminiContents(body.contents, { requireSignatures, issuedFor: (part, s) => isIssuedSignature(part, s, secret) });
        return v ? { refusal: { status: 400, type: "INVALID_ARGUMENT", message: v.message } } : { effective: body };
      },
      emit: (body, step, record) => turns(body, step, modelOfPath(new URL(record.url).pathname)),
      encode: (turn) => encodeGeminiChunks(turn),
      errorBody: googleErrorBody,
    },
    {
      script: o.script,
      sideRouter: o.sideRouter ?? (({ request, kindIndex }) => defaultOpenAiSideAnswer(geminiInstructions(request.body), kindIndex)),
      classify: o.classify,
    },
  );
}
