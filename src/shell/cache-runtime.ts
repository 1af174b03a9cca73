/**
 * Edge: what the cache discipline needs to know about requests, and the seam.
 *
 * - `before_provider_request`: the send time and cache key (model, thinking level, tools) of
 *   every request; the seam mark at the end of the frozen history (Anthropic Messages only);
 *   per-layer fingerprints and the attribution of a bust to its cause.
 * - `message_end` (assistant): the provider's usage, to count unannounced cache losses.
 * - `cache_warming_decision`: stop paying to keep warm a prefix a waiting rewrite discards.
 * - Flush outcomes: gate decisions for `/keeper why`, the waiting rewrite, whether a flush
 *   re-wrote history since the last request.
 * Every decision is a pure function in `src/discipline/`; this file holds state and clocks.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { TTL_1H_MS } from "../cache/pricing.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { attributeBust, emptyFingerprintLog, fingerprintLayers, recordFingerprint } from "../discipline/attribution.ts";
import { cacheTtlMs, detectColdCache, warmingOverride, type CacheKeySnapshot, type ColdCacheVerdict, type PendingRewrite, type WarmingDecisionFields } from "../discipline/cold-cache.ts";
import { formatCacheReport, formatWhyReport } from "../discipline/format.ts";
import { appendGateDecision, emptyGateDecisionLog } from "../discipline/gate-log.ts";
import { emptyObservedLosses, LOSS_READ_SHARE, recordObservation, type ObservedLosses } from "../discipline/observed-loss.ts";
import { appendToRing } from "../discipline/ring.ts";
import type { BustAttribution, FingerprintLog, GateDecisionLog } from "../discipline/schema.ts";
import { placeSeamAtFrozenBoundary } from "../discipline/seam-placement.ts";
import type { DisciplineFacts, DisciplineOutcome } from "../engine/decide.ts";
import { isAssistant, isUser, timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";

export interface CacheRuntimeDeps {
  pi: Pick<ExtensionAPI, "getThinkingLevel" | "getActiveTools">;
  settings: () => KeeperSettings;
  state: () => KeeperState;
  now?: () => number;
}

export interface CacheRuntime {
  /** Session (re)start: forget the process's requests, seed from the branch's recorded ones. */
  restore(ctx: ExtensionContext, branch: readonly ContextMessage[]): void;
  /** Pi compacted: the next request writes everything anyway. */
  onCompaction(): void;
  /** The messages the `context` handler returned (for the seam's position). */
  onContextRendered(messages: readonly ContextMessage[]): void;
  onBeforeProviderRequest(payload: unknown, ctx: ExtensionContext): unknown;
  onAssistantMessage(message: ContextMessage): void;
  onCacheWarmingDecision(event: WarmingDecisionFields): { action: "stop" } | undefined;
  coldVerdict(ctx: ExtensionContext): ColdCacheVerdict;
  facts(ctx: ExtensionContext): DisciplineFacts;
  recordFlush(outcome: DisciplineOutcome, rewrote: boolean): void;
  whyText(): string;
  cacheText(): string;
}

const ATTRIBUTION_CAPACITY = 16;

function modelKey(ctx: ExtensionContext): string {
  return ctx.model ? `${ctx.model.provider}/${ctx.model.id}` : "";
}

function isWireBody(payload: unknown): payload is WireRequestBody {
  return typeof payload === "object" && payload !== null && Array.isArray((payload as { messages?: unknown }).messages);
}

export function createCacheRuntime(deps: CacheRuntimeDeps): CacheRuntime {
  const now = deps.now ?? (() => Date.now());
  let requestTimes: number[] = [];
  let lastKey: CacheKeySnapshot | undefined;
  let compacted = false;
  let fingerprints: FingerprintLog = emptyFingerprintLog();
  let attributions: BustAttribution[] = [];
  let gateLog: GateDecisionLog = emptyGateDecisionLog();
  let pending: PendingRewrite | undefined;
  let rewroteSinceLast = false;
  let rendered: readonly ContextMessage[] = [];
  let losses: ObservedLosses = emptyObservedLosses();
  /** The request in flight, for loss counting when its answer arrives. */
  let inFlight: { kind: "prompt" | "loop"; countable: boolean } | undefined;
  let lastPromptTokens = 0;

  const longRetention = () => process.env.PI_CACHE_RETENTION === "long";
  const ttlMs = () => cacheTtlMs({ longRetention: longRetention() });
  const snapshot = (ctx: ExtensionContext, at: number): CacheKeySnapshot => ({
    at,
    model: modelKey(ctx),
    thinkingLevel: String(deps.pi.getThinkingLevel()),
    toolsDigest: [...deps.pi.getActiveTools()].sort().join(","),
  });

  let seamPlaced = false;

  function placeSeam(body: WireRequestBody, ctx: ExtensionContext): { body: WireRequestBody; seam: number } {
    const settings = deps.settings();
    if (!settings.cache.discipline || !settings.cache.seam || !ctx.model) return { body, seam: -1 };
    const previous = fingerprints.entries[fingerprints.entries.length - 1];
    return placeSeamAtFrozenBoundary({
      body,
      rendered,
      frozenThroughTimestamp: deps.state().frontier.frozenThroughTimestamp,
      api: ctx.model.api,
      modelId: ctx.model.id,
      ...(previous ? { previous: { seamMessageIndex: previous.seamMessageIndex, messagePrefixes: previous.messagePrefixes } } : {}),
    });
  }

  function coldVerdict(ctx: ExtensionContext): ColdCacheVerdict {
    const verdict = detectColdCache({ previous: lastKey, current: snapshot(ctx, now()), longRetention: longRetention() });
    return compacted && !verdict.cold ? { ...verdict, cold: true } : verdict;
  }

  return {
    restore(ctx, branch) {
      requestTimes = [];
      lastKey = undefined;
      compacted = false;
      pending = undefined;
      rewroteSinceLast = false;
      seamPlaced = false;
      losses = emptyObservedLosses();
      inFlight = undefined;
      // A resumed session: its recorded requests feed the horizon; the last one may still be cached.
      for (const m of branch) {
        const t = timestampOf(m);
        if (!isAssistant(m) || t === undefined || !(m as { usage?: unknown }).usage) continue;
        requestTimes.push(t);
        lastKey = { ...snapshot(ctx, t), model: `${m.provider}/${m.model}` };
      }
    },
    onCompaction() {
      compacted = true;
    },
    onContextRendered(messages) {
      rendered = messages;
    },
    onBeforeProviderRequest(payload, ctx) {
      const settings = deps.settings();
      if (!settings.enabled) return undefined;
      const at = now();
      const warmPing = (payload as { max_tokens?: unknown } | null)?.max_tokens === 1;
      const key = snapshot(ctx, at);
      if (!warmPing) {
        requestTimes.push(at);
        compacted = false;
      }
      const previousKey = lastKey;
      lastKey = warmPing && lastKey ? { ...lastKey, at } : key;
      if (!isWireBody(payload)) return undefined;
      const placed = placeSeam(payload, ctx);
      if (warmPing) return unchangedOr(payload, placed.body);
      seamPlaced = placed.seam >= 0;

      const fp = fingerprintLayers(placed.body, { at, model: key.model, thinkingLevel: key.thinkingLevel, seamMessageIndex: placed.seam });
      const previous = fingerprints.entries[fingerprints.entries.length - 1];
      let extended = false;
      if (previous && previousKey) {
        const verdict = attributeBust(previous, fp, {
          ttlMs: ttlMs(),
          ttl: longRetention() ? "1h" : "5m",
          keeperRewroteSinceLast: rewroteSinceLast,
          toolsChanged: previousKey.toolsDigest !== key.toolsDigest,
        });
        attributions = appendToRing(attributions, verdict, ATTRIBUTION_CAPACITY);
        extended = verdict.cause === "none";
      }
      fingerprints = recordFingerprint(fingerprints, fp);
      rewroteSinceLast = false;
      const last = rendered[rendered.length - 1];
      inFlight = { kind: last !== undefined && isUser(last) ? "prompt" : "loop", countable: extended && lastPromptTokens > 0 };
      return unchangedOr(payload, placed.body);
    },
    onAssistantMessage(message) {
      const u = (message as { usage?: { input?: number; cacheRead?: number; cacheWrite?: number } }).usage;
      if (!isAssistant(message) || !u) return;
      const prompt = (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
      if (prompt === 0) return;
      if (inFlight?.countable) losses = recordObservation(losses, inFlight.kind, (u.cacheRead ?? 0) < LOSS_READ_SHARE * lastPromptTokens);
      inFlight = undefined;
      lastPromptTokens = prompt;
    },
    onCacheWarmingDecision(event) {
      const s = deps.settings();
      if (!s.enabled || !s.cache.discipline || !pending) return undefined;
      const o = warmingOverride({ event, pendingRewrite: pending });
      return o ? { action: "stop" } : undefined;
    },
    coldVerdict,
    facts(ctx) {
      const verdict = coldVerdict(ctx);
      const usage = ctx.getContextUsage();
      return {
        requestTimes,
        cold: verdict.cold,
        ttl: verdict.ttlMs >= TTL_1H_MS ? "1h" : "5m",
        ttlMs: verdict.ttlMs,
        ...(usage?.tokens != null && usage.contextWindow ? { context: { tokens: usage.tokens, window: usage.contextWindow } } : {}),
        seamActive: seamPlaced,
        observedLosses: losses,
      };
    },
    recordFlush(outcome, rewrote) {
      for (const e of outcome.log) gateLog = appendGateDecision(gateLog, e);
      pending = outcome.pending;
      if (rewrote) rewroteSinceLast = true;
    },
    whyText: () => formatWhyReport(gateLog),
    cacheText: () => formatCacheReport({ fingerprints: fingerprints.entries, attributions }),
  };
}

/** `undefined` (payload unchanged) when the transform returned the same object. */
function unchangedOr(original: unknown, next: unknown): unknown {
  return next === original ? undefined : next;
}
