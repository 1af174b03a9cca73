/**
 * The cost model: a model's prices (dollars per million tokens, the shape of pi-ai's model
 * registry `cost`: input, output, cacheRead, cacheWrite, optional tiers by prompt size) and
 * its cache rule, turned into
 * - the gate's and the analyzer's price ratios (`CachePricing`: units of one uncached input
 *   token of that model), and
 * - dollars for a token breakdown.
 * Pure: the host looks the prices up (live: `ctx.model.cost`; report: pi-ai's bundled model
 * data) and hands them in as plain data. `FALLBACK_PRICES` is used only for a model the
 * registry does not price (an unknown id, a custom provider, or a registry row of zeros).
 */
import { cacheRuleFor, type CacheRule, type ModelRef } from "./cache-rules.ts";
import { reasoningBoundToPrefix } from "./reasoning-binding.ts";
import { toolChangesInPlace } from "./tool-changes.ts";
import type { CachePricing, TokenBreakdown } from "./pricing.ts";

/** Dollars per million tokens. */
export interface PriceRates {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** pi-ai's `ModelCost`: rates, optionally tiered by prompt tokens (input + cacheRead + cacheWrite). */
export interface RegistryCost extends PriceRates {
  tiers?: ReadonlyArray<PriceRates & { inputTokensAbove: number }>;
}

export interface ModelPrices {
  rates: RegistryCost;
  /** Where the rates came from. */
  source: "registry" | "fallback";
  /** Which fallback row matched (fallback only). */
  fallback?: string;
}

export interface FallbackPriceRow {
  /** What the row stands for, e.g. "Claude Sonnet (Anthropic list price)". */
  name: string;
  matches(ref: ModelRef): boolean;
  rates: PriceRates;
}

const id = (ref: ModelRef) => ref.model.toLowerCase();
const isApi = (...apis: string[]) => (ref: ModelRef) => apis.includes(ref.api);

/**
 * Fallback list prices (USD per million tokens) by model family, first match wins. Taken from
 * the providers' public price lists as mirrored in pi-ai 1.6.0's registry for the family's
 * current model; used only when the registry has no price for the session's model.
 */
export const FALLBACK_PRICES: readonly FallbackPriceRow[] = [
  { name: "Claude Opus (Anthropic)", matches: (r) => /opus/.test(id(r)), rates: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
  { name: "Claude Haiku (Anthropic)", matches: (r) => /haiku/.test(id(r)), rates: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
  { name: "Claude Sonnet (Anthropic)", matches: (r) => /claude|sonnet/.test(id(r)) || r.api === "anthropic-messages", rates: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
  { name: "Gemini Pro (Google)", matches: (r) => isApi("google-generative-ai", "google-vertex")(r) && /pro/.test(id(r)), rates: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 } },
  { name: "Gemini Flash (Google)", matches: isApi("google-generative-ai", "google-vertex"), rates: { input: 0.3, output: 2.5, cacheRead: 0.03, cacheWrite: 0 } },
  { name: "GPT-5 mini (OpenAI)", matches: (r) => /gpt.*mini/.test(id(r)), rates: { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 } },
  { name: "GPT-5 (OpenAI)", matches: (r) => /gpt|codex|^o\d/.test(id(r)) || r.api.startsWith("openai") || r.api === "azure-openai-responses", rates: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 } },
  { name: "Amazon Nova Pro (Bedrock)", matches: isApi("bedrock-converse-stream"), rates: { input: 0.8, output: 3.2, cacheRead: 0.2, cacheWrite: 0 } },
  { name: "unknown model (priced as GPT-5)", matches: () => true, rates: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 } },
];

const priced = (c: PriceRates | undefined): boolean => !!c && [c.input, c.output, c.cacheRead, c.cacheWrite].every((x) => Number.isFinite(x) && x >= 0) && c.input > 0;

/** The registry's cost when it prices the model (input > 0), else the first matching fallback row. */
export function resolvePrices(ref: ModelRef, registryCost: RegistryCost | undefined): ModelPrices {
  if (registryCost && priced(registryCost)) return { rates: registryCost, source: "registry" };
  const row = FALLBACK_PRICES.find((r) => r.matches(ref))!;
  return { rates: row.rates, source: "fallback", fallback: row.name };
}

/** The rates that apply to a request of `promptTokens` (pi-ai's `calculateCost` tier choice). */
export function ratesAt(cost: RegistryCost, promptTokens: number): PriceRates {
  let rates: PriceRates = cost;
  let threshold = -1;
  for (const tier of cost.tiers ?? []) {
    if (promptTokens > tier.inputTokensAbove && tier.inputTokensAbove > threshold) {
      rates = tier;
      threshold = tier.inputTokensAbove;
    }
  }
  return rates;
}

/** The model both live and in the replay: its cache rule, its dollar prices, its price ratios. */
export interface CostModel {
  ref: ModelRef;
  rule: CacheRule;
  prices: ModelPrices;
  /** Base-tier ratios in units of one uncached input token. */
  pricing: CachePricing;
  /** The provider drops replayed reasoning after an edit of the history before it (reasoning-binding.ts): a rewrite also costs that reasoning. */
  reasoningBound?: boolean;
  /** The model takes tool changes in place (tool-changes.ts): a change of the tool set does not key its cache. */
  toolChangesInPlace?: boolean;
}

/**
 * Ratios of a model's rates to its input price, under its cache rule:
 * - read: cacheRead / input (1 when the model lists no cache-read price: nothing is discounted);
 * - write (5 min / default retention): cacheWrite / input with a write premium, else 1 (the
 *   newly cached part is billed as plain input);
 * - write (1 h): Anthropic bills 2× input (pi-ai's `calculateCost` does the same); elsewhere the
 *   short write ratio;
 * - output: output / input.
 */
export function pricingOf(rates: PriceRates, rule: CacheRule): CachePricing {
  const input = rates.input > 0 ? rates.input : 1;
  // Ratios of decimal prices (0.3 / 3): rounded to 1e-9 so 0.1 reads as 0.1.
  const ratio = (x: number) => Math.round((x / input) * 1e9) / 1e9;
  const read = rates.cacheRead > 0 ? ratio(rates.cacheRead) : 1;
  const write5m = rule.writePremium && rates.cacheWrite > 0 ? ratio(rates.cacheWrite) : 1;
  const write1h = rule.family === "anthropic" || rule.family === "bedrock" ? (rule.writePremium ? 2 : 1) : write5m;
  return { uncached: 1, write5m, write1h, read, output: ratio(rates.output) };
}

export interface CostModelInput {
  ref: ModelRef;
  /** pi-ai's registry `cost` for the model, when the host found one. */
  registryCost?: RegistryCost;
  /** pi-ai's registry `promptCache` lifetimes (seconds), when present. */
  promptCache?: { short?: number; long?: number };
  /** The model's `compat` (pi-ai `Model.compat`), when known: what says its reasoning is bound to its prefix. */
  compat?: unknown;
}

export function costModelFor(input: CostModelInput): CostModel {
  const prices = resolvePrices(input.ref, input.registryCost);
  const rule = cacheRuleFor(input.ref, {
    pricedWrites: prices.rates.cacheWrite > 0,
    ...(input.promptCache ? { promptCache: input.promptCache } : {}),
  });
  const bound = reasoningBoundToPrefix({ api: input.ref.api, id: input.ref.model, compat: input.compat });
  const inPlace = toolChangesInPlace({ api: input.ref.api, compat: input.compat });
  return { ref: input.ref, rule, prices, pricing: pricingOf(prices.rates, rule), ...(bound ? { reasoningBound: true } : {}), ...(inPlace ? { toolChangesInPlace: true } : {}) };
}

/**
 * Dollars for one request's tokens at the model's rates (the tier chosen by the request's
 * prompt size). A 1-hour write costs 2× input on Anthropic and Bedrock (as pi-ai bills it);
 * writes on a model without a write price cost plain input.
 */
export function dollarsOf(tokens: TokenBreakdown, model: Pick<CostModel, "prices" | "rule">): number {
  const prompt = tokens.uncached + tokens.read + tokens.write5m + tokens.write1h;
  const r = ratesAt(model.prices.rates, prompt);
  const write = model.rule.writePremium && r.cacheWrite > 0 ? r.cacheWrite : r.input;
  const write1h = model.rule.writePremium && (model.rule.family === "anthropic" || model.rule.family === "bedrock") ? 2 * r.input : write;
  const read = r.cacheRead > 0 ? r.cacheRead : r.input;
  return (tokens.uncached * r.input + tokens.write5m * write + tokens.write1h * write1h + tokens.read * read + tokens.output * r.output) / 1e6;
}

/** One line for `/keeper why` and the report: the rule and the ratios the gate used. */
export function describeCostModel(model: CostModel): string {
  const p = model.pricing;
  const writes = model.rule.writePremium ? `write ${p.write5m.toFixed(2)}×` : "no write premium (a rewrite re-sends at 1.00×)";
  const source = model.prices.source === "registry" ? "pi-ai registry" : `fallback table: ${model.prices.fallback}`;
  return `${model.ref.model} (${model.rule.label}); read ${p.read.toFixed(2)}×, ${writes}, output ${p.output.toFixed(1)}× input; prices from ${source}`;
}

/** The fields of a pi-ai `Model` the cost model reads (the live host passes `ctx.model`). */
export interface PiModelLike {
  provider: string;
  api: string;
  id: string;
  cost?: RegistryCost;
  promptCache?: { short?: number; long?: number };
  compat?: unknown;
}

/** The live host's entry point: `costModelForPiModel(ctx.model)`. */
export function costModelForPiModel(model: PiModelLike): CostModel {
  return costModelFor({
    ref: { provider: model.provider, api: model.api, model: model.id },
    ...(model.cost ? { registryCost: model.cost } : {}),
    ...(model.promptCache ? { promptCache: model.promptCache } : {}),
    ...(model.compat ? { compat: model.compat } : {}),
  });
}

/**
 * What the discipline facts need from the session model, in one call for the host:
 * `cacheFactsFor(ctx.model, longRetention)` → the cost model, the entry lifetime under the
 * model's rule (OpenAI: 10 min, 24 h long; Anthropic: 5 min, 1 h long) and the gate's TTL tier.
 */
export function cacheFactsFor(model: PiModelLike, longRetention: boolean): { costModel: CostModel; ttlMs: number; ttl: "5m" | "1h" } {
  const costModel = costModelForPiModel(model);
  const ttlMs = longRetention ? costModel.rule.ttlMs.long : costModel.rule.ttlMs.short;
  return { costModel, ttlMs, ttl: longRetention && ttlMs >= 60 * 60 * 1000 ? "1h" : "5m" };
}
