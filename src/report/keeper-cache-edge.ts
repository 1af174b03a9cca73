/**
 * The keeper arm's view of the cache edge, as the live shell (`src/shell/cache-runtime.ts`)
 * sees it in `before_provider_request`:
 * - the cache facts a flush decides with: cold when the TTL expired or the model or thinking
 *   level changed since the previous request (`detectColdCache`), whether that request
 *   carried the seam, the context pressure and the losses the recording shows;
 * - the seam mark on the serialized request, placed by the shell's own function
 *   (`placeSeamAtFrozenBoundary`) from the persisted frozen boundary and the keeper's render.
 * Pure: reducers over `KeeperReplayState`.
 */
import { TTL_5M_MS } from "../cache/pricing.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { detectColdCache, type CacheKeySnapshot } from "../discipline/cold-cache.ts";
import { observedLossesInHistory } from "../discipline/observed-loss.ts";
import { messagePrefixesOf, placeSeamAtFrozenBoundary } from "../discipline/seam-placement.ts";
import type { DisciplineFacts } from "../keeper/discipline.ts";
import type { KeeperReplayDeps, KeeperReplayRequest, KeeperReplayState, KeeperRequestInfo } from "./keeper-engine.ts";

/** What the cache was keyed on at the previous request (undefined: no request yet). */
function previousKeyOf(state: KeeperReplayState, info: KeeperRequestInfo): CacheKeySnapshot | undefined {
  const at = state.requestTimes[state.requestTimes.length - 1];
  if (at === undefined) return undefined;
  return { at, model: state.previousModel ?? info.model, thinkingLevel: state.previousThinkingLevel ?? info.thinkingLevel ?? "", toolsDigest: "" };
}

/** Cache facts at a request, from the recorded timestamps, model and thinking level, as the live shell derives them. */
export function replayCacheFacts(state: KeeperReplayState, request: KeeperReplayRequest, contextWindow: number): DisciplineFacts {
  const current: CacheKeySnapshot = { at: request.info.timestamp, model: request.info.model, thinkingLevel: request.info.thinkingLevel ?? state.previousThinkingLevel ?? "", toolsDigest: "" };
  const { cold } = detectColdCache({ previous: previousKeyOf(state, request.info), current, ttlMs: TTL_5M_MS });
  return {
    requestTimes: state.requestTimes,
    cold,
    ttl: "5m",
    ttlMs: TTL_5M_MS,
    // What the last request carried (rendered), as Pi's usage reports it live.
    context: { tokens: state.previousContextTokens, window: contextWindow },
    seamActive: state.seam.placed,
    // The recording's usage is bare Pi's: every low read within the TTL is an unannounced loss.
    observedLosses: observedLossesInHistory(request.messages, TTL_5M_MS),
  };
}

/**
 * The seam for the serialized request `stepKeeperReplay` just rendered, as the live
 * `before_provider_request` places it (only with the extension, cache discipline and
 * `cache.seam` on). Records what the request carried for the next one.
 */
export function stepKeeperSeam(
  state: KeeperReplayState,
  body: WireRequestBody,
  info: KeeperRequestInfo,
  deps: Pick<KeeperReplayDeps, "config" | "discipline">,
): { state: KeeperReplayState; body: WireRequestBody } {
  if (!deps.config.enabled || !deps.discipline?.discipline || !deps.discipline.seam) return { state, body };
  const placed = placeSeamAtFrozenBoundary({
    body,
    rendered: state.rendered,
    frozenThroughTimestamp: state.keeper.frontier.frozenThroughTimestamp,
    api: info.api,
    modelId: info.model,
    ...(state.seam.previous ? { previous: state.seam.previous } : {}),
  });
  const seamMessageIndex = Math.min(placed.seam, placed.body.messages.length - 1);
  return {
    state: { ...state, seam: { previous: { seamMessageIndex, messagePrefixes: messagePrefixesOf(placed.body) }, placed: placed.seam >= 0 } },
    body: placed.body,
  };
}

