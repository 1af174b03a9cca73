/**
 * Encodes one emitted turn as the chunks of `streamGenerateContent?alt=sse` (`data: {chunk}`
 * frames, CRLF-separated as Google sends them), as @google/genai and pi-ai's
 * google-generative-ai stream read them: each thought and text part in pieces (its signature on
 * the first piece), each function call whole, and the last chunk with the `finishReason` and
 * `usageMetadata` (`cachedContentTokenCount` only when something was read from the cache).
 */
import type { GeminiPart, GeminiTurn, JsonObject } from "./types.ts";

const CHUNK = 64;

function pieces(s: string): string[] {
  if (s.length === 0) return [""];
  const out: string[] = [];
  for (let i = 0; i < s.length; i += CHUNK) out.push(s.slice(i, i + CHUNK));
  return out;
}

/** The parts as streamed: text parts split in pieces, a signature on the first piece only. */
function streamedParts(parts: GeminiPart[]): GeminiPart[] {
  return parts.flatMap((p) => {
    if (p.functionCall || typeof p.text !== "string") return [p];
    return pieces(p.text).map((text, i) => {
      const { thoughtSignature, ...rest } = p;
      return { ...rest, text, ...(i === 0 && thoughtSignature ? { thoughtSignature } : {}) };
    });
  });
}

export function usageMetadataOf(t: GeminiTurn): JsonObject {
  const u = t.usage;
  return {
    promptTokenCount: u.promptTokens,
    ...(u.cachedTokens > 0 ? { cachedContentTokenCount: u.cachedTokens } : {}),
    candidatesTokenCount: u.candidatesTokens,
    ...(u.thoughtsTokens > 0 ? { thoughtsTokenCount: u.thoughtsTokens } : {}),
    totalTokenCount: u.promptTokens + u.candidatesTokens + u.thoughtsTokens,
  };
}

export function encodeGeminiChunks(t: GeminiTurn): string[] {
  const parts = streamedParts(t.parts);
  return parts.map((part, i) => {
    const last = i === parts.length - 1;
    const candidate = { content: { parts: [part], role: "model" }, index: 0, ...(last ? { finishReason: t.finishReason } : {}) };
    const chunk = { candidates: [candidate], ...(last ? { usageMetadata: usageMetadataOf(t) } : {}), modelVersion: t.modelVersion, responseId: t.responseId };
    return `data: ${JSON.stringify(chunk)}\r\n\r\n`;
  });
}
