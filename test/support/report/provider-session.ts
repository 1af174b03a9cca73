/**
 * A realistic, deterministic coding session recorded as Pi records it (through Pi's own
 * `SessionManager`), for providers the repository has no real recording of: OpenAI
 * (`openai-responses`, `openai-codex-responses`, `openai-completions`), Google, and mixed
 * sessions. Prompts, tool loops of 5–25 steps, tool outputs from 200 characters to 24 KB of
 * code-like text, reasoning blocks, pauses between prompts (some longer than the cache lives).
 * Long-loop sessions on request: loops of `stepsPerPrompt` steps whose first `earlyBigSteps`
 * read large files.
 *
 * The recorded usage is computed the way the provider computes it, independently of the
 * replay under test:
 * - tokens come from a word-level tokenizer (words, 1–3 digit runs, single punctuation marks;
 *   4 tokens per message, 12 for the prompt framing) — not the replay's char-ratio estimator,
 *   whose constants the report must fit from this usage;
 * - the cache is a list of earlier prompts keyed by whole messages; a request reads the longest
 *   live prefix it shares with one of them. OpenAI: nothing below 1024 tokens, 128-token steps,
 *   no write (pi-ai maps `input_tokens − cached_tokens` to `input`, `cached_tokens` to
 *   `cacheRead`, no `cache_write_tokens` → `cacheWrite` 0), 10 minutes of inactivity. Google:
 *   the same without steps (`cachedContentTokenCount`), 5 minutes. Anthropic: marks on the
 *   system prompt and the last message, so the prefix read is the previous prompt and the rest
 *   is written (`cacheWrite`), 5 minutes;
 * - reasoning of earlier user turns is not billed (the providers drop it), the current
 *   turn's is.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { AssistantMessage, Message, SystemMessage, ToolResultMessage, Usage } from "@earendil-works/pi-ai";
import { SessionManager } from "@earendil-works/pi-coding-agent";

export interface ProviderModel {
  provider: string;
  api: string;
  id: string;
  rule: "openai" | "google" | "anthropic";
  /** This provider's tokenizer counts this many times the word-level tokens (default 1). */
  tokenScale?: number;
}

export const GPT55_CODEX: ProviderModel = { provider: "openai-codex", api: "openai-codex-responses", id: "gpt-5.5", rule: "openai" };
export const GPT54_RESPONSES: ProviderModel = { provider: "openai", api: "openai-responses", id: "gpt-5.4", rule: "openai" };
export const GPT41_COMPLETIONS: ProviderModel = { provider: "openai", api: "openai-completions", id: "gpt-4.1", rule: "openai" };
export const GEMINI_FLASH: ProviderModel = { provider: "google", api: "google-generative-ai", id: "gemini-2.5-flash", rule: "google" };
export const SONNET45: ProviderModel = { provider: "anthropic", api: "anthropic-messages", id: "claude-sonnet-4-5", rule: "anthropic" };
/** Sonnet 4.5 with a tokenizer that counts 25% more tokens than GPT's for the same text. */
export const SONNET45_DENSER: ProviderModel = { ...SONNET45, tokenScale: 1.25 };

export interface ProviderSessionOptions {
  seed: number;
  /** The model of each user prompt (cycled). */
  models: readonly ProviderModel[];
  prompts: number;
  /** Largest tool output, characters (default 24,000). */
  maxOutputChars?: number;
  /** Steps per prompt, inclusive (default 5–25; the last one is the text answer). */
  stepsPerPrompt?: [number, number];
  /** A long-loop session: each prompt's first this-many steps read large files (`bigOutputChars`). */
  earlyBigSteps?: number;
  /** Size of those early reads, characters (default 16,000–40,000). */
  bigOutputChars?: [number, number];
  dir?: string;
}

export interface ProviderSession {
  file: string;
  text: string;
  requests: number;
  /** Σ recorded input / cacheRead / cacheWrite over the session. */
  totals: { input: number; cacheRead: number; cacheWrite: number; output: number };
}

/** mulberry32: a small seeded PRNG. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The independent "true" tokenizer of the generated provider. */
export function trueTokens(text: string): number {
  return (text.match(/[A-Za-z]+|\d{1,3}|[^\sA-Za-z\d]/g) ?? []).length;
}

const WORDS = "the a function return const value result file path error module test build config update import export type interface string number array object await async".split(" ");
const CODE = [
  "export function $(input: string): number {",
  "  const $ = await load($, { cache: true });",
  "  if (!$) throw new Error(`missing $`);",
  "  return $.map((x) => x.$ * 2).filter(Boolean);",
  "}",
  "import { $ } from \"./$.ts\";",
  "// $: keep the $ in sync with the $",
  "src/$/$.ts:42:7 - error TS2345: Argument of type '$' is not assignable",
  "  at $ (/work/project/src/$.ts:118:23)",
  "PASS test/$.test.ts (3.21 s)",
];

interface Gen {
  r: () => number;
  n: number;
}

const pick = <T>(g: Gen, xs: readonly T[]): T => xs[Math.floor(g.r() * xs.length)];
const word = (g: Gen) => `${pick(g, WORDS)}${g.r() < 0.3 ? String(Math.floor(g.r() * 900)) : ""}`;
const prose = (g: Gen, chars: number): string => {
  let s = "";
  while (s.length < chars) s += `${word(g)}${g.r() < 0.12 ? ". " : " "}`;
  return s.slice(0, chars);
};
const code = (g: Gen, chars: number): string => {
  let s = "";
  while (s.length < chars) s += `${pick(g, CODE).replace(/\$/g, () => word(g))}\n`;
  return s.slice(0, chars);
};
/** Log-uniform integer in [lo, hi]. */
const logUniform = (g: Gen, lo: number, hi: number) => Math.round(Math.exp(Math.log(lo) + g.r() * (Math.log(hi) - Math.log(lo))));

/** What the provider sees of a message: its key (for prefix matching) and its billed tokens. */
function messageView(m: Message, closedCycle: boolean): { key: string; tokens: number } {
  const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content as unknown as Array<Record<string, unknown>>);
  let tokens = 4;
  for (const b of content) {
    if (b.type === "text") tokens += trueTokens(String(b.text));
    else if (b.type === "thinking") tokens += closedCycle ? 0 : trueTokens(String(b.thinking));
    else if (b.type === "toolCall") tokens += trueTokens(`${String(b.name)} ${JSON.stringify(b.arguments)}`);
  }
  const { timestamp: _t, usage: _u, ...rest } = m as Message & { usage?: unknown };
  return { key: JSON.stringify(rest), tokens };
}

interface CachedPrompt {
  keys: string[];
  /** prefix[i] = tokens of keys[0..i]. */
  prefix: number[];
  lastUsed: number;
}

const RULES = {
  openai: { min: 1024, step: 128, ttlMs: 10 * 60_000, writes: false },
  google: { min: 1024, step: 1, ttlMs: 5 * 60_000, writes: false },
  anthropic: { min: 1024, step: 1, ttlMs: 5 * 60_000, writes: true },
} as const;

/** The provider's usage for one request: longest live shared prefix, then the rule's rounding. */
function providerUsage(caches: Map<string, CachedPrompt[]>, model: ProviderModel, system: string, context: readonly Message[], now: number): { input: number; cacheRead: number; cacheWrite: number } {
  const rule = RULES[model.rule];
  const lastUser = context.findLastIndex((m) => m.role === "user");
  const scale = model.tokenScale ?? 1;
  const views = [{ key: `system|${system}`, tokens: 12 + trueTokens(system) }, ...context.map((m, i) => messageView(m, i < lastUser))].map((v) => ({ ...v, tokens: Math.round(v.tokens * scale) }));
  const keys = views.map((v) => v.key);
  const prefix: number[] = [];
  views.reduce((acc, v, i) => (prefix[i] = acc + v.tokens), 0);
  const total = prefix[prefix.length - 1];
  const key = `${model.provider}/${model.id}`;
  const live = (caches.get(key) ?? []).filter((c) => now - c.lastUsed <= rule.ttlMs);
  let best: { c: CachedPrompt; len: number } | undefined;
  for (const c of live) {
    let len = 0;
    while (len < c.keys.length && len < keys.length && c.keys[len] === keys[len]) len++;
    if (len > 0 && (!best || len > best.len)) best = { c, len };
  }
  const round = (t: number) => (t < rule.min ? 0 : rule.min + Math.floor((t - rule.min) / rule.step) * rule.step);
  const cacheRead = best ? round(prefix[best.len - 1]) : 0;
  if (best && cacheRead > 0) best.c.lastUsed = now;
  const cacheWrite = rule.writes && total >= rule.min ? total - cacheRead : 0;
  if (total >= rule.min) live.push({ keys, prefix, lastUsed: now });
  caches.set(key, live);
  return { input: total - cacheRead - cacheWrite, cacheRead, cacheWrite };
}

const TOOLS = ["read", "bash", "edit", "write", "grep"] as const;

export function generateProviderSession(options: ProviderSessionOptions): ProviderSession {
  const g: Gen = { r: rng(options.seed), n: 0 };
  const sm = SessionManager.create("/work/project", options.dir ?? mkdtempSync(join("/tmp", "pi-provider-")));
  let clock = 1_764_000_000_000;
  const caches = new Map<string, CachedPrompt[]>();
  const totals = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
  const zeroCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  const toolsAdded = TOOLS.map((name) => ({
    name,
    description: `${prose(g, 300)} (${name})`,
    parameters: { type: "object", properties: { path: { type: "string", description: prose(g, 60) } }, required: ["path"] } as never,
  }));
  const systemContent = `You are a coding agent working in /work/project. ${prose(g, 5000)}`;
  sm.appendMessage({ role: "system", timestamp: (clock += 1000), content: systemContent, sections: { cwd: "<cwd>/work/project</cwd>" }, toolsAdded } as SystemMessage as Message);
  // What the provider is sent before the messages: the system text and the tool definitions.
  const systemForUsage = `${systemContent}\n\n<cwd>/work/project</cwd>\n${JSON.stringify(toolsAdded)}`;
  let requests = 0;
  let model = options.models[0];

  for (let p = 0; p < options.prompts; p++) {
    const next = options.models[p % options.models.length];
    if (next !== model || p === 0) {
      model = next;
      sm.appendModelChange(model.provider, model.id);
    }
    // Pause before the prompt: mostly short, sometimes longer than the cache lives.
    clock += g.r() < 0.25 ? 11 * 60_000 + Math.floor(g.r() * 20 * 60_000) : 20_000 + Math.floor(g.r() * 240_000);
    sm.appendMessage({ role: "user", content: prose(g, logUniform(g, 40, 1500)), timestamp: clock });
    const [lo, hi] = options.stepsPerPrompt ?? [5, 25];
    const steps = lo + Math.floor(g.r() * (hi - lo + 1));
    for (let s = 0; s < steps; s++) {
      const last = s === steps - 1;
      const calls = last ? 0 : 1 + (g.r() < 0.3 ? 1 : 0);
      const content: AssistantMessage["content"] = [];
      if (g.r() < 0.7) content.push({ type: "thinking", thinking: prose(g, logUniform(g, 80, 2500)), thinkingSignature: JSON.stringify({ type: "reasoning", id: `rs_${g.n++}`, encrypted_content: "x".repeat(40) }) });
      if (last || g.r() < 0.4) content.push({ type: "text", text: prose(g, logUniform(g, 30, 1200)) });
      const ids = Array.from({ length: calls }, () => `call_${g.n++}|fc_${g.n}`);
      ids.forEach((id) => content.push({ type: "toolCall", id, name: pick(g, TOOLS), arguments: { path: `src/${word(g)}/${word(g)}.ts` } }));
      clock += 2_000 + Math.floor(g.r() * 18_000);
      const context = sm.buildSessionContext().messages as Message[];
      const u = providerUsage(caches, model, systemForUsage, context, clock);
      const output = 40 + Math.floor(g.r() * 900);
      const usage: Usage = { ...u, output, totalTokens: u.input + u.cacheRead + u.cacheWrite + output, cost: { ...zeroCost } };
      totals.input += u.input;
      totals.cacheRead += u.cacheRead;
      totals.cacheWrite += u.cacheWrite;
      totals.output += output;
      sm.appendMessage({ role: "assistant", content, api: model.api, provider: model.provider, model: model.id, usage, stopReason: calls > 0 ? "toolUse" : "stop", timestamp: clock } as AssistantMessage);
      requests++;
      for (const id of ids) {
        clock += 200 + Math.floor(g.r() * 3000);
        const early = options.earlyBigSteps !== undefined && s < options.earlyBigSteps;
        const [bigLo, bigHi] = options.bigOutputChars ?? [16_000, 40_000];
        const big = early || g.r() < 0.5;
        const text = early ? code(g, logUniform(g, bigLo, bigHi)) : big ? code(g, logUniform(g, 200, options.maxOutputChars ?? 24_000)) : prose(g, logUniform(g, 100, 3000));
        const result: ToolResultMessage = { role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text }], isError: g.r() < 0.08, timestamp: clock };
        sm.appendMessage(result);
      }
    }
  }
  const file = sm.getSessionFile();
  if (!file) throw new Error("session manager did not persist");
  return { file, text: readFileSync(file, "utf8"), requests, totals };
}
