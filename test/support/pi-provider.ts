/**
 * The models.json provider entry for a run on one of Pi's APIs (`anthropic-messages` is what
 * scenario-workspace.ts writes by default; this rewrites the entry for another API or with a
 * `compat` block). The provider keeps its name (`FAKE_PROVIDER`, the settings' default), its
 * one model and the caller's model figures; only the API, the base URL and the model's id,
 * prices and compat change.
 *
 * - `openai-responses` / `openai-completions`: the base URL ends in `/v1` (the OpenAI SDK posts
 *   to `${baseUrl}/responses` / `${baseUrl}/chat/completions`); default model `gpt-5.2` (a GPT
 *   before 5.6, billed like OpenAI's: input $1.25, cached $0.125, output $10 per million, no
 *   write premium) and `qwen3-coder-30b` (an OpenAI-compatible server's model, same prices).
 * - `google-generative-ai`: the base URL ends in `/v1beta` (@google/genai posts to
 *   `${baseUrl}/models/{model}:streamGenerateContent?alt=sse`); default model
 *   `gemini-3-flash-preview` at its registry prices (input $0.5, cached $0.05, output $3 per
 *   million, no write).
 * - `anthropic-messages`: the root URL (pi-ai posts to `/v1/messages`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_PROVIDER, type FakeModelConfig, type PiWorkspace } from "./scenario-workspace.ts";

export type PiApi = "anthropic-messages" | "openai-responses" | "openai-completions" | "google-generative-ai";

export type ProviderEntryOptions = {
  api: PiApi;
  /** The fake server's root URL (http://127.0.0.1:PORT). */
  baseUrl: string;
  model?: FakeModelConfig;
  /** The model's `compat` block (models-configuration.md), e.g. `{ supportsMessageThreads: true }`. */
  compat?: Record<string, unknown>;
};

export const DEFAULT_MODEL_IDS: Record<PiApi, string> = {
  "anthropic-messages": "claude-sonnet-4-5",
  "openai-responses": "gpt-5.2",
  "openai-completions": "qwen3-coder-30b",
  "google-generative-ai": "gemini-3-flash-preview",
};

const BASE_PATHS: Record<PiApi, string> = { "anthropic-messages": "", "openai-responses": "/v1", "openai-completions": "/v1", "google-generative-ai": "/v1beta" };

const OPENAI_PRICES = { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 };
const PRICES: Partial<Record<PiApi, typeof OPENAI_PRICES>> = {
  "openai-responses": OPENAI_PRICES,
  "openai-completions": OPENAI_PRICES,
  "google-generative-ai": { input: 0.5, output: 3, cacheRead: 0.05, cacheWrite: 0 },
};

/** Rewrites `agent/models.json` (and the settings' default model) of `ws` for `o.api`. */
export function writeProviderEntry(ws: PiWorkspace, o: ProviderEntryOptions): void {
  const path = join(ws.agentDir, "models.json");
  const models = JSON.parse(readFileSync(path, "utf8")) as { providers: Record<string, { api: string; baseUrl: string; models: Array<Record<string, unknown>> }> };
  const provider = models.providers[FAKE_PROVIDER]!;
  const id = o.model?.id ?? DEFAULT_MODEL_IDS[o.api];
  const prices = PRICES[o.api];
  provider.api = o.api;
  provider.baseUrl = `${o.baseUrl}${BASE_PATHS[o.api]}`;
  provider.models = provider.models.map((m) => ({
    ...m,
    id,
    name: `Fake ${id}`,
    ...(prices && !o.model?.cost ? { cost: prices } : {}),
    ...(o.compat ? { compat: o.compat } : {}),
  }));
  writeFileSync(path, JSON.stringify(models, null, 2));
  const settingsPath = join(ws.agentDir, "settings.json");
  let settings: Record<string, unknown>;
  try {
    settings = JSON.parse(readFileSync(settingsPath, "utf8")) as Record<string, unknown>;
  } catch {
    return; // raw settings text that is not JSON: the caller's own
  }
  if (settings.defaultProvider === FAKE_PROVIDER) writeFileSync(settingsPath, JSON.stringify({ ...settings, defaultModel: id }, null, 2));
}
