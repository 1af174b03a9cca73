/**
 * `before_provider_request`: the serialized request about to go out. The cache ledger records
 * it (time, key, seam placement — the seam when cache discipline and `cache.seam` are on);
 * with the session model's cache rule, the wire log fingerprints what goes out and
 * attributes a bust (`/keeper cache`).
 */
import { cacheBodyOf } from "../cache/flatten.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import type { CacheKeySnapshot } from "../discipline/cold-cache.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { seamThroughOf } from "../state/schema.ts";
import { ledgerExtended, ledgerOnSend } from "./cache-ledger.ts";
import type { EngineState } from "./session.ts";
import { digestRequest, wireLogOnSend, type CacheRuleFacts, type RequestDigest } from "./wire-log.ts";

export interface SendInput {
  settings: KeeperSettings;
  model: { api: string; id: string } | undefined;
  /** The provider payload as Pi built it. */
  payload: unknown;
  /** What the cache is keyed on at this request (its send time included). */
  key: CacheKeySnapshot;
  /** The session model's cache rule: with it the request is fingerprinted and a bust attributed (the live host's `/keeper cache`). */
  rule?: CacheRuleFacts;
}

export interface SendOutput {
  state: EngineState;
  /** The body to send; undefined: keep the payload. */
  body: WireRequestBody | undefined;
  /** Index in the body's messages of the last frozen message (−1: no seam). */
  seam: number;
}

export function sendRequest(state: EngineState, input: SendInput): SendOutput {
  const s = input.settings;
  if (!s.enabled) return { state, body: undefined, seam: -1 };
  const { payload, key } = input;
  const warmPing = (payload as { max_tokens?: unknown } | null)?.max_tokens === 1;
  // A Responses or Google payload is read through a view (src/cache/flatten.ts), never sent:
  // only a body that is the payload itself may come back changed.
  const body = cacheBodyOf(payload);
  let wire = state.wire;
  let digested: RequestDigest | undefined;
  // Digested against the last body (only what changed is hashed): the seam's placement and the fingerprints share it.
  if (body && !warmPing) ({ log: wire, digested } = digestRequest(wire, body));
  const seamOn = s.cache.discipline && s.cache.seam && input.model !== undefined;
  const previousKey = state.ledger.lastKey;
  const rewroteSinceLast = state.ledger.rewroteSinceLast;
  const sent = ledgerOnSend(state.ledger, {
    body,
    key,
    warmPing,
    rendered: state.lastRender?.rendered ?? [],
    seam: seamOn && input.model ? { frozenThroughTimestamp: seamThroughOf(state.keeper.frontier), api: input.model.api, modelId: input.model.id } : undefined,
    ...(digested ? { messagePrefixes: digested.messagePrefixes, flat: digested.digest.blocks, flatTokens: digested.digest.tokens } : {}),
  });
  let ledger = sent.ledger;
  if (body && sent.body && !warmPing && input.rule) {
    const logged = wireLogOnSend(wire, { body: sent.body, seam: sent.seam, key, previousKey, rewroteSinceLast, rule: input.rule, digested });
    wire = logged.log;
    ledger = ledgerExtended(ledger, logged.extended);
  }
  const changed = body !== undefined && body === payload && sent.body !== undefined && sent.body !== body;
  return { state: { ...state, ledger, wire }, body: changed ? sent.body : undefined, seam: sent.seam };
}
