/**
 * Shapes of the cache-discipline records that may be persisted or shown: gate decisions and
 * their ring buffer, per-request layer fingerprints and their ring buffer, bust attributions.
 * zod schemas are the single definition; types are inferred from them.
 */
import { z } from "zod";

/** "forced": history changes from this position anyway (already decided); the mutations after it ride along. */
export const GateReasonSchema = z.enum(["nothing-removed", "cold-cache", "pays", "defers", "forced"]);
export type GateReason = z.infer<typeof GateReasonSchema>;

/** Every figure behind one gate decision, in units of one uncached input token. */
export const GateNumbersSchema = z.object({
  writePrice: z.number(),
  readPrice: z.number(),
  /** Tokens re-written from the first change to the end of the previously cached prefix. */
  rewrittenTokens: z.number(),
  /** (1 − coldChance) × rewrittenTokens × (writePrice − readPrice); 0 on a cold cache. */
  rewriteCost: z.number(),
  tokensRemoved: z.number(),
  expectedRequests: z.number(),
  /**
   * tokensRemoved × (unit(coldChance) + unit(futureColdChance) × (expectedRequests − 1)), with
   * unit(p) = p × writePrice + (1 − p) × readPrice. Warm (p = 0): tokensRemoved × readPrice ×
   * expectedRequests. Cold (p = 1 now): tokensRemoved × (writePrice + readPrice × (expectedRequests − 1)).
   */
  readSaving: z.number(),
  /** contextTokens / contextWindow (0 when unknown). */
  usage: z.number(),
  /** clamp((usage − threshold) / (1 − threshold), 0, 1). */
  pressure: z.number(),
  relief: z.number(),
  /** readSaving + relief. */
  saving: z.number(),
  /** saving − rewriteCost − reasoningCost. */
  net: z.number(),
  /** (rewriteCost + reasoningCost) / (tokensRemoved × readPrice): requests the read saving alone needs to repay the rewrite (null when nothing is removed). */
  breakEvenRequests: z.number().nullable(),
  /**
   * Chance (0..1) that this request finds the cache entry lost anyway (1 on a cold cache; the
   * observed rate of unannounced losses otherwise, observed-loss.ts): the rewrite costs
   * (1 − coldChance) of its full price. Absent in decisions logged before it was recorded.
   */
  coldChance: z.number().optional(),
  /** The same chance for each later request (a waiting removal is then written, not read). */
  futureColdChance: z.number().optional(),
  /** The provider cache rule the prices came from (cache-rules.ts label), when the caller knew the model. */
  cacheRule: z.string().optional(),
  /** False on providers that bill no write premium (a rewrite re-sends at the uncached price). */
  writePremium: z.boolean().optional(),
  /** Models with reasoning bound to its prefix: thinking tokens the rewrite makes the provider drop. */
  reasoningDropped: z.number().optional(),
  /** reasoningDropped × outputPrice (reasoning-cost.ts). */
  reasoningCost: z.number().optional(),
});
export type GateNumbers = z.infer<typeof GateNumbersSchema>;

export const GateDecisionSchema = z.object({
  apply: z.boolean(),
  reason: GateReasonSchema,
  numbers: GateNumbersSchema,
});
export type GateDecision = z.infer<typeof GateDecisionSchema>;

/** One gate call as remembered for `/keeper why`. */
export const GateLogEntrySchema = z.object({
  at: z.number(),
  /** Which flush asked (free text, e.g. "flush 12"). */
  label: z.string(),
  /** Mutation ids the decision covered. */
  mutationIds: z.array(z.string()),
  /** Position of the first change the decision priced. */
  position: z.number(),
  decision: GateDecisionSchema,
});
export type GateLogEntry = z.infer<typeof GateLogEntrySchema>;

export const GateDecisionLogSchema = z.object({
  capacity: z.number().int().positive(),
  /** Oldest first; never longer than capacity. */
  entries: z.array(GateLogEntrySchema),
});
export type GateDecisionLog = z.infer<typeof GateDecisionLogSchema>;

/** Hashes and token estimates of one request's cache layers. */
export const RequestFingerprintSchema = z.object({
  at: z.number(),
  model: z.string(),
  thinkingLevel: z.string(),
  /** Index of the last frozen message (−1: no seam, everything is tail). */
  seamMessageIndex: z.number().int(),
  layers: z.object({ tools: z.string(), system: z.string(), frozen: z.string(), tail: z.string() }),
  /** Short prefix hash after each message (messages 0..i), to find the first changed message. */
  messagePrefixes: z.array(z.string()),
  tokens: z.object({ tools: z.number(), system: z.number(), messages: z.array(z.number()) }),
});
export type RequestFingerprint = z.infer<typeof RequestFingerprintSchema>;

export const FingerprintLogSchema = z.object({
  capacity: z.number().int().positive(),
  entries: z.array(RequestFingerprintSchema),
});
export type FingerprintLog = z.infer<typeof FingerprintLogSchema>;

export const BustCauseSchema = z.enum([
  "none",
  "keeper-rewrite",
  "model-switch",
  "thinking-change",
  "tool-change",
  "system-change",
  "ttl-expiry",
  "unknown",
]);
export type BustCause = z.infer<typeof BustCauseSchema>;

export const BustAttributionSchema = z.object({
  at: z.number(),
  cause: BustCauseSchema,
  /** Outermost layer whose bytes differ ("none" when the request extends the previous one). */
  layer: z.enum(["tools", "system", "frozen", "tail", "none"]),
  /** First message whose prefix hash differs, when the change is inside messages. */
  firstChangedMessage: z.number().int().optional(),
  /** Previously cached tokens that had to be written again. */
  rewrittenTokens: z.number(),
  /** rewrittenTokens × (writePrice − readPrice). */
  estimatedCost: z.number(),
  detail: z.string(),
});
export type BustAttribution = z.infer<typeof BustAttributionSchema>;
