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
 * - `openai-codex-responses`: Pi's own `openai-codex` provider (what "Sign in with ChatGPT" users
 *   run), its registry models as they are — compat, prices with cache writes, thinking levels;
 *   default `gpt-5.6-terra` — with only the base URL (the root: pi-ai posts to
 *   `/codex/responses`) and the credential replaced: a literal `apiKey` that is an access token
 *   pi-ai accepts (a JWT carrying the ChatGPT account id, which the fake Codex server checks),
 *   standing in for the OAuth login a fake cannot give. The caller's context window goes in
 *   `modelOverrides`; the settings' default provider becomes `openai-codex`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codexAccessToken } from "./fake-openai/codex.ts";
import { FAKE_PROVIDER, type FakeModelConfig, type PiWorkspace } from "./scenario-workspace.ts";

/** Pi's built-in provider a Codex run uses. */
export const CODEX_PROVIDER = "openai-codex";

export type PiApi = "anthropic-messages" | "openai-responses" | "openai-completions" | "google-generative-ai" | "openai-codex-responses";

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
  "openai-codex-responses": "gpt-5.6-terra",
};

const BASE_PATHS: Record<PiApi, string> = { "anthropic-messages": "", "openai-responses": "/v1", "openai-completions": "/v1", "google-generative-ai": "/v1beta", "openai-codex-responses": "" };

const OPENAI_PRICES = { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 };
const PRICES: Partial<Record<PiApi, typeof OPENAI_PRICES>> = {
  "openai-responses": OPENAI_PRICES,
  "openai-completions": OPENAI_PRICES,
  "google-generative-ai": { input: 0.5, output: 3, cacheRead: 0.05, cacheWrite: 0 },
};

type ModelsJson = { providers: Record<string, { api?: string; baseUrl: string; models?: Array<Record<string, unknown>>; [key: string]: unknown }> };

/** Pi's `openai-codex` provider pointed at the fake Codex server (see the module comment). */
function codexEntry(o: ProviderEntryOptions, id: string): ModelsJson["providers"][string] {
  const override = { ...(o.model?.contextWindow ? { contextWindow: o.model.contextWindow } : {}), ...(o.model?.cost ? { cost: o.model.cost } : {}), ...(o.compat ? { compat: o.compat } : {}) };
  return { baseUrl: o.baseUrl, apiKey: codexAccessToken(), ...(Object.keys(override).length > 0 ? { modelOverrides: { [id]: override } } : {}) };
}

/** Rewrites `agent/models.json` (and the settings' default model) of `ws` for `o.api`. */
export function writeProviderEntry(ws: PiWorkspace, o: ProviderEntryOptions): void {
  const path = join(ws.agentDir, "models.json");
  const models = JSON.parse(readFileSync(path, "utf8")) as ModelsJson;
  const codex = o.api === "openai-codex-responses";
  if (codex) models.providers[CODEX_PROVIDER] = codexEntry(o, o.model?.id ?? DEFAULT_MODEL_IDS[o.api]);
  else writeFakeProvider(models.providers[FAKE_PROVIDER]!, o);
  writeFileSync(path, JSON.stringify(models, null, 2));
  const settingsPath = join(ws.agentDir, "settings.json");
  let settings: Record<string, unknown>;
  try {
    settings = JSON.parse(readFileSync(settingsPath, "utf8")) as Record<string, unknown>;
  } catch {
    return; // raw settings text that is not JSON: the caller's own
  }
  const id = o.model?.id ?? DEFAULT_MODEL_IDS[o.api];
  if (settings.defaultProvider === FAKE_PROVIDER) {
    writeFileSync(settingsPath, JSON.stringify({ ...settings, ...(codex ? { defaultProvider: CODEX_PROVIDER } : {}), defaultModel: id }, null, 2));
  }
}

function writeFakeProvider(provider: ModelsJson["providers"][string], o: ProviderEntryOptions): void {
  const id = o.model?.id ?? DEFAULT_MODEL_IDS[o.api];
  const prices = PRICES[o.api];
  provider.api = o.api;
  provider.baseUrl = `${o.baseUrl}${BASE_PATHS[o.api]}`;
  provider.models = (provider.models ?? []).map((m) => ({
    ...m,
    id,
    name: `Fake ${id}`,
    ...(prices && !o.model?.cost ? { cost: prices } : {}),
    ...(o.compat ? { compat: o.compat } : {}),
  }));
}
