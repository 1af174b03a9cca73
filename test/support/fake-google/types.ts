/**
 * Shapes of the fake Google Generative AI server (Pi's `google-generative-ai`): the parts of the
 * request body @google/genai puts on the wire that the server reads, the turn it streams back,
 * and what it records. Scripts are the fake Anthropic server's (`MainStep` / `SideAnswer`), so
 * one scripted session runs on every API.
 */
import type { FakeContext, FakeRecord } from "../fake-core.ts";
import type { MainStep, SideAnswer } from "../fake-anthropic/types.ts";

export type JsonObject = Record<string, unknown>;

/** One part of a content, as the REST API spells it (one of text / functionCall / functionResponse / inlineData). */
export type GeminiPart = {
  text?: string;
  /** A thought summary (a thinking block). */
  thought?: boolean;
  /** Opaque, base64: the model's reasoning state, on the part it came with. */
  thoughtSignature?: string;
  functionCall?: { name: string; args?: JsonObject; id?: string };
  functionResponse?: { name: string; response?: JsonObject; id?: string; parts?: unknown[] };
  inlineData?: { mimeType: string; data: string };
  [key: string]: unknown;
};

export type GeminiContent = { role?: string; parts: GeminiPart[] };

/** `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` (the model is in the path). */
export type GeminiRequest = {
  contents: GeminiContent[];
  systemInstruction?: { role?: string; parts: GeminiPart[] };
  tools?: Array<{ functionDeclarations?: Array<{ name: string; [key: string]: unknown }>; [key: string]: unknown }>;
  toolConfig?: JsonObject;
  generationConfig?: {
    maxOutputTokens?: number;
    thinkingConfig?: { includeThoughts?: boolean; thinkingBudget?: number; thinkingLevel?: string };
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/** Token counts of one answer, as `usageMetadata` reports them (the prompt includes the cached part). */
export type GeminiUsage = { promptTokens: number; cachedTokens: number; candidatesTokens: number; thoughtsTokens: number };

/** One turn the server streamed back. */
export type GeminiTurn = {
  responseId: string;
  modelVersion: string;
  /** The model content's parts, in stream order (thought → text → function calls), signatures on them. */
  parts: GeminiPart[];
  finishReason: "STOP" | "MAX_TOKENS";
  usage: GeminiUsage;
};

export type GeminiRecord = FakeRecord<GeminiRequest, GeminiTurn>;

export type GeminiScript = MainStep[] | ((ctx: FakeContext<GeminiRecord>) => MainStep | Promise<MainStep>);
export type GeminiSideRouter = (ctx: FakeContext<GeminiRecord>) => SideAnswer | Promise<SideAnswer>;

export type FakeGoogleOptions = {
  script?: GeminiScript;
  sideRouter?: GeminiSideRouter;
  classify?: (body: GeminiRequest) => "main" | "side";
  /** Fixed part of generated ids; random per server by default. */
  idNonce?: string;
  /** Secret the thought signatures are made with (a fresh server with the same secret accepts an earlier one's). */
  signatureSecret?: string;
  /** The implicit prefix cache: minimum (default 1024, 4096 for a Pro model) and lifetime (default 5 minutes). */
  cache?: { minTokens?: number; ttlMs?: number };
  /** Set false to answer everything without the refusal checks (default true). */
  validate?: boolean;
};
