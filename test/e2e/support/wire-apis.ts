/**
 * The APIs the wire suite (wire-suite.ts) runs on, each with its fake server, where its
 * instructions are, the usage its fake reports, the cached count of a request that reads the
 * whole previous prompt back, how it carries old reasoning, and its model's prices (those
 * pi-provider.ts writes) — the cost of a run is priced from them.
 */
import type { MainStep, SideAnswer } from "../../support/fake-anthropic/index.ts";
import type { FakeContext, FakeRecord } from "../../support/fake-core.ts";
import { geminiInstructions, startFakeGoogle, type GeminiRequest, type GeminiTurn } from "../../support/fake-google/index.ts";
import {
  chatInstructions,
  reportedCached,
  responsesInstructions,
  startFakeCodex,
  startFakeCompletions,
  startFakeResponses,
  type ChatRequest,
  type EmittedTurn,
  type ResponsesRequest,
} from "../../support/fake-openai/index.ts";
import type { AnyFakeServer } from "../../support/pi-runner.ts";
import type { WireBody } from "./wire-items.ts";

export type WireApi = "openai-responses" | "openai-codex-responses" | "openai-completions" | "google-generative-ai";

export type WireRecord = FakeRecord<WireBody, EmittedTurn | GeminiTurn>;
export type WireScript = MainStep[] | ((ctx: FakeContext<WireRecord>) => MainStep | Promise<MainStep>);
export type WireSideRouter = (ctx: FakeContext<WireRecord>) => SideAnswer | Promise<SideAnswer>;

/** Token counts of one streamed answer: prompt (cached and written parts included), cached, written, output. */
export type WireUsage = { promptTokens: number; cachedTokens: number; writtenTokens: number; outputTokens: number };

/** Per million tokens (`written`: a cache write, where the model is priced with one). */
export type WirePrices = { input: number; cached: number; written?: number; output: number };

export interface WireApiAdapter {
  api: WireApi;
  /** The tag of the printed lines, e.g. `[wire-google]`. */
  tag: string;
  start(o: { script: WireScript; sideRouter?: WireSideRouter; idNonce?: string }): AnyFakeServer;
  instructionsOf(body: WireBody): string;
  usageOf(r: WireRecord): WireUsage | undefined;
  /** The cached count of a request that reads all of a previous prompt of `tokens` back. */
  fullRead(tokens: number): number;
  /** Old reasoning: paired with its items by id (never stripped), or strippable at flushes. */
  reasoning: "paired" | "strippable";
  /** How Pi sends requests with its default settings (Codex: a WebSocket, continuing the last response). */
  transport: "http" | "websocket";
  prices: WirePrices;
}

const OPENAI_PRICES: WirePrices = { input: 1.25, cached: 0.125, output: 10 };

const openAiUsage = (r: WireRecord): WireUsage | undefined => {
  const u = (r.response as EmittedTurn | undefined)?.usage;
  return u && { promptTokens: u.promptTokens, cachedTokens: u.cachedTokens, writtenTokens: u.cacheWriteTokens ?? 0, outputTokens: u.outputTokens };
};

/** An OpenAI wire: automatic prefix caching in 128-token steps, usage as the OpenAI fakes report it. */
function openAiAdapter(a: Pick<WireApiAdapter, "api" | "tag" | "start" | "instructionsOf" | "reasoning" | "transport" | "prices">): WireApiAdapter {
  return { ...a, usageOf: openAiUsage, fullRead: (tokens) => reportedCached(tokens) };
}

const serverOf = (start: (o: never) => unknown) => (o: Parameters<WireApiAdapter["start"]>[0]) => start(o as never) as AnyFakeServer;
const responsesText = (b: WireBody) => responsesInstructions(b as ResponsesRequest);

export const WIRE_APIS: Record<WireApi, WireApiAdapter> = {
  "openai-responses": openAiAdapter({ api: "openai-responses", tag: "[wire-openai-responses]", start: serverOf(startFakeResponses), instructionsOf: responsesText, reasoning: "paired", transport: "http", prices: OPENAI_PRICES }),
  // gpt-5.6-terra in pi-ai's registry (openai-codex): writes 1.25× input, reads 0.1×.
  "openai-codex-responses": openAiAdapter({
    api: "openai-codex-responses",
    tag: "[wire-codex]",
    start: serverOf(startFakeCodex),
    instructionsOf: responsesText,
    reasoning: "paired",
    transport: "websocket",
    prices: { input: 2, cached: 0.2, written: 2.5, output: 12 },
  }),
  "openai-completions": openAiAdapter({
    api: "openai-completions",
    tag: "[wire-openai-completions]",
    start: serverOf(startFakeCompletions),
    instructionsOf: (b) => chatInstructions(b as ChatRequest),
    reasoning: "strippable",
    transport: "http",
    prices: OPENAI_PRICES,
  }),
  "google-generative-ai": {
    api: "google-generative-ai",
    tag: "[wire-google]",
    start: serverOf(startFakeGoogle),
    instructionsOf: (b) => geminiInstructions(b as GeminiRequest),
    usageOf: (r) => {
      const u = (r.response as GeminiTurn | undefined)?.usage;
      return u && { promptTokens: u.promptTokens, cachedTokens: u.cachedTokens, writtenTokens: 0, outputTokens: u.candidatesTokens + u.thoughtsTokens };
    },
    // gemini-3-flash-preview: implicit caching from 1024 tokens, counted exactly.
    fullRead: (tokens) => (tokens >= 1024 ? tokens : 0),
    reasoning: "strippable",
    transport: "http",
    prices: { input: 0.5, cached: 0.05, output: 3 },
  },
};

/** Dollars of the streamed answers of `records` at `a`'s prices (cached and written tokens are part of the prompt). */
export function runCost(a: WireApiAdapter, records: readonly WireRecord[]): number {
  let usd = 0;
  for (const r of records) {
    const u = a.usageOf(r);
    if (!u) continue;
    const plain = u.promptTokens - u.cachedTokens - u.writtenTokens;
    usd += (plain * a.prices.input + u.cachedTokens * a.prices.cached + u.writtenTokens * (a.prices.written ?? a.prices.input) + u.outputTokens * a.prices.output) / 1e6;
  }
  return usd;
}

/** Prompt and cached tokens of `records`. */
export function promptTotals(a: WireApiAdapter, records: readonly WireRecord[]): { prompt: number; cached: number } {
  let prompt = 0;
  let cached = 0;
  for (const r of records) {
    const u = a.usageOf(r);
    prompt += u?.promptTokens ?? 0;
    cached += u?.cachedTokens ?? 0;
  }
  return { prompt, cached };
}
