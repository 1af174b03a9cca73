/**
 * The request checks the fake Google server answers with HTTP 400 (`INVALID_ARGUMENT`), as the
 * Gemini API applies them to `contents`. Pure: `validateGeminiContents` returns the first
 * violation, or undefined.
 *
 * Rules, in the order they are checked:
 * 1. every `thoughtSignature` is base64 (the field is TYPE_BYTES; pi-ai google-shared.js keeps a
 *    signature only when it is, "Thought signatures must be base64 for Google APIs");
 * 2. a function call turn (a `model` content with `functionCall` parts) comes right after a user
 *    turn or a function response turn;
 * 3. a function response turn (a `user` content with `functionResponse` parts) comes right after
 *    a function call turn, and the two hold as many parts (a call without its response, a
 *    response without its call). pi-ai's transform-messages.js adds a "No result provided"
 *    result for every call left without one, and google-shared.js puts all responses of a turn
 *    in one user content, because the API requires both;
 * 4. the responses answer the calls: by `id` where both carry one (pi-ai sends ids to Gemini 3+,
 *    `requiresToolCallId`), else by function name (this rule's wording is the fake's own);
 * 5. on models that validate thought signatures (Gemini 3 and later), every step of the current
 *    turn — the model contents after the last user content that is not only function responses —
 *    sends its first function call back with the signature it came with: absent, the API's
 *    "missing a thought_signature" error; another value (altered, or moved from another part,
 *    which pi-ai google-shared.js forbids: "signature-bearing parts must be preserved as-is; do
 *    not merge/move signatures across parts"), "Corrupted thought signature.". Earlier turns are
 *    not validated.
 */
import type { GeminiContent, GeminiPart } from "./types.ts";

export type GeminiViolation = { message: string };

export type GeminiValidateOptions = {
  /** Whether the model validates the thought signatures of the current turn (Gemini 3+). */
  requireSignatures: boolean;
  /** Whether `signature` is the one the server issued for this function call part. */
  issuedFor: (part: GeminiPart, signature: string) => boolean;
};

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

const callsOf = (c: GeminiContent | undefined) => (c?.role === "model" ? c.parts.filter((p) => p.functionCall) : []);
const responsesOf = (c: GeminiContent | undefined) => (c?.role === "user" ? c.parts.filter((p) => p.functionResponse) : []);

function checkSignatureEncoding(contents: GeminiContent[]): GeminiViolation | undefined {
  for (let i = 0; i < contents.length; i++) {
    const parts = contents[i]!.parts ?? [];
    for (let j = 0; j < parts.length; j++) {
      const s = parts[j]!.thoughtSignature;
      if (s !== undefined && (typeof s !== "string" || s.length % 4 !== 0 || !BASE64.test(s))) {
        return { message: `Invalid value at 'contents[${i}].parts[${j}].thought_signature' (TYPE_BYTES), Base64 decoding failed for "${String(s)}"` };
      }
    }
  }
  return undefined;
}

function checkTurnOrder(contents: GeminiContent[]): GeminiViolation | undefined {
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i]!;
    const prev = contents[i - 1];
    const calls = callsOf(c);
    if (calls.length > 0) {
      if (prev?.role !== "user") return { message: "Please ensure that function call turn comes immediately after a user turn or after a function response turn." };
      const answers = responsesOf(contents[i + 1]);
      if (answers.length !== calls.length) {
        return { message: "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn." };
      }
    }
    const responses = responsesOf(c);
    if (responses.length > 0 && callsOf(prev).length === 0) {
      return { message: "Please ensure that function response turn comes immediately after a function call turn." };
    }
    if (responses.length > 0) {
      const unmatched = unmatchedResponse(callsOf(prev), responses);
      if (unmatched) return { message: `Function response '${unmatched}' does not answer a function call of the function call turn.` };
    }
  }
  return undefined;
}

/** The first response (by id, or name) the calls do not account for. */
function unmatchedResponse(calls: GeminiPart[], responses: GeminiPart[]): string | undefined {
  const byId = calls.every((p) => p.functionCall!.id) && responses.every((p) => p.functionResponse!.id);
  const open = calls.map((p) => (byId ? String(p.functionCall!.id) : p.functionCall!.name));
  for (const r of responses) {
    const key = byId ? String(r.functionResponse!.id) : r.functionResponse!.name;
    const at = open.indexOf(key);
    if (at < 0) return key;
    open.splice(at, 1);
  }
  return undefined;
}

/** Index of the first content of the current turn (after the last user content that is not only function responses). */
export function currentTurnStart(contents: GeminiContent[]): number {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i]!;
    if (c.role === "user" && c.parts.some((p) => !p.functionResponse)) return i + 1;
  }
  return 0;
}

function checkSignatures(contents: GeminiContent[], o: GeminiValidateOptions): GeminiViolation | undefined {
  if (!o.requireSignatures) return undefined;
  for (let i = currentTurnStart(contents); i < contents.length; i++) {
    const first = callsOf(contents[i])[0];
    if (!first) continue;
    const s = first.thoughtSignature;
    if (s === undefined) {
      return {
        message:
          "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. " +
          `Additional data, function call \`default_api:${first.functionCall!.name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      };
    }
    if (!o.issuedFor(first, s)) return { message: "Corrupted thought signature." };
  }
  return undefined;
}

/** First rule `contents` breaks, as the Gemini API words it; undefined when valid. */
export function validateGeminiContents(contents: GeminiContent[], o: GeminiValidateOptions): GeminiViolation | undefined {
  return checkSignatureEncoding(contents) ?? checkTurnOrder(contents) ?? checkSignatures(contents, o);
}
