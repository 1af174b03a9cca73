/**
 * The seam for one request, end to end: from the persisted frozen boundary and the messages
 * the `context` handler rendered to the payload with (or without) the seam mark. Shared by
 * the live shell (`before_provider_request`) and the replay report, so both place it alike.
 *
 *   frozen timestamp → last frozen rendered message → its wire message (seam-target.ts)
 *   → lazy move against the previous request's seam (chooseSeamIndex) → planSeamMark
 *
 * Pure: returns the very same payload object when no mark is added.
 */
import type { FlatBlock } from "../cache/flatten.ts";
import { fingerprintRequest, type LayerFingerprints } from "../cache/fingerprints.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import type { ContextMessage } from "../session/messages.ts";
import { applySeamPlan, planSeamMark, type SeamPlan } from "./seam.ts";
import { chooseSeamIndex, minCacheableTokensFor, renderedIndexThrough, wireIndexOfRendered } from "./seam-target.ts";

/** Length of the per-message prefix hashes kept between requests (as in attribution.ts). */
const PREFIX_HASH_CHARS = 12;

/** What the previous request carried, as far as the seam's lazy move needs it. */
export interface PreviousSeam {
  /** Wire message index of the previous request's seam (−1: none). */
  seamMessageIndex: number;
  /** Short prefix hashes per message of the previous request (`messagePrefixesOf`). */
  messagePrefixes: readonly string[];
}

export interface SeamPlacementInput {
  body: WireRequestBody;
  /** The messages the `context` handler returned for this request. */
  rendered: readonly ContextMessage[];
  /** Persisted `frontier.frozenThroughTimestamp` (undefined: nothing frozen yet). */
  frozenThroughTimestamp: number | undefined;
  /** The request's API and model id (only "anthropic-messages" gets a seam). */
  api: string | undefined;
  modelId: string;
  previous?: PreviousSeam;
  /** `messagePrefixesOf(body)` and `flattenRequest(body)` when the caller already has them (saves hashing the body again). */
  currentPrefixes?: readonly string[];
  flat?: readonly FlatBlock[];
  /** With `flat`: the default token estimate of each block (saves estimating them again). */
  flatTokens?: readonly number[];
}

export interface SeamPlacement {
  body: WireRequestBody;
  /** Wire message index the seam mark sits on (or already sat on); −1: no seam. */
  seam: number;
  plan?: SeamPlan;
}

/** Short per-message prefix hashes of a payload (marks do not change them). */
export function messagePrefixesOf(body: WireRequestBody, fingerprint: LayerFingerprints = fingerprintRequest(body)): string[] {
  return fingerprint.messages.map((h) => h.slice(0, PREFIX_HASH_CHARS));
}

export function placeSeamAtFrozenBoundary(input: SeamPlacementInput): SeamPlacement {
  const { body, rendered, frozenThroughTimestamp: frozen, api } = input;
  if (frozen === undefined || api !== "anthropic-messages") return { body, seam: -1 };
  const at = renderedIndexThrough(rendered, frozen);
  const target = at < 0 ? undefined : wireIndexOfRendered(rendered, at, body);
  let seam = target;
  if (input.previous) {
    seam = chooseSeamIndex({
      target,
      previousSeam: input.previous.seamMessageIndex,
      previousPrefixes: input.previous.messagePrefixes,
      currentPrefixes: input.currentPrefixes ?? messagePrefixesOf(body),
    });
  }
  if (seam === undefined || seam < 0) return { body, seam: -1 };
  const plan = planSeamMark(body, { api, seamMessageIndex: seam, minCacheableTokens: minCacheableTokensFor(input.modelId), ...(input.flat ? { flat: input.flat, ...(input.flatTokens ? { flatTokens: input.flatTokens } : {}) } : {}) });
  const placed = plan.kind === "place" || plan.reason === "already-marked";
  return { body: applySeamPlan(body, plan), seam: placed ? seam : -1, plan };
}
