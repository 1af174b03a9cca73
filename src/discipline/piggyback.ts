/**
 * Piggybacking: once a flush must rewrite the prefix from some position, every other due
 * mutation at or after that position rides along for free (those bytes are written anyway).
 * Mutations before it would pull the rewrite further back; they go only when the extra part
 * pays on its own, priced by the gate.
 *
 *   p = earliest position among the forced mutations (none forced: p = end, nothing is paid yet)
 *   apply every due mutation with position >= p
 *   for each earlier start q (a due position < p): price moving the first change from p to q:
 *     tokensRemoved   = removal of the due mutations in [q, p)
 *     rewrittenTokens = cachedTokensFrom(q) − cachedTokensFrom(p) − tokensRemoved
 *   take the q with the largest positive net saving, if any, and apply everything from q on.
 * On models with reasoning bound to its prefix, moving the start from p to q also drops the
 * thinking in between (`reasoningDroppedAfter(q) − reasoningDroppedAfter(p)`), priced by the gate.
 *
 * Positions are indices of the first changed message in the array sent to the provider (or
 * any monotone unit) and `cachedTokensFrom` must use the same unit.
 */
import { priceFlush, type GateInput } from "./gate.ts";
import type { GateDecision } from "./schema.ts";

export type MutationKind = "stub" | "purge-error" | "collapse-chain" | "strip-thinking";

export interface DueMutation {
  id: string;
  kind: MutationKind;
  /** First changed message. */
  position: number;
  tokensRemoved: number;
  /** Must happen this flush (context pressure, already paid for, ...). */
  forced?: boolean;
}

export interface PiggybackInput {
  due: readonly DueMutation[];
  /** Ids forced in addition to those flagged `forced`. */
  forcedIds?: readonly string[];
  /** Tokens of the previously cached prefix at and after `position`, before any removal (non-increasing). */
  cachedTokensFrom: (position: number) => number;
  /** Everything the gate needs except the figures piggybacking computes. */
  gate: Omit<GateInput, "tokensRemoved" | "rewrittenTokens" | "reasoningDropped">;
  /**
   * Reasoning bound to its prefix (reasoning-cost.ts): thinking tokens dropped when history first
   * changes at a position. A start q is charged what it drops beyond the forced start p.
   */
  reasoningDroppedAfter?: (position: number) => number;
}

export type PiggybackRole = "forced" | "rides-along" | "pays-alone" | "deferred";

export interface PricedStart {
  position: number;
  mutationIds: string[];
  decision: GateDecision;
}

export interface PiggybackPlan {
  apply: DueMutation[];
  defer: DueMutation[];
  roles: Record<string, PiggybackRole>;
  /** p: earliest forced position, if anything is forced. */
  forcedFrom: number | undefined;
  /** First changed position of the applied set (undefined when nothing applies). */
  firstChange: number | undefined;
  /** Every earlier start the gate priced, earliest first. */
  priced: PricedStart[];
  /** The start that was taken, if an earlier one paid. */
  chosen: PricedStart | undefined;
}

function sumRemoved(ms: readonly DueMutation[]): number {
  return ms.reduce((s, m) => s + Math.max(0, m.tokensRemoved), 0);
}

export function planPiggyback(input: PiggybackInput): PiggybackPlan {
  const forcedIds = new Set(input.forcedIds ?? []);
  const isForced = (m: DueMutation): boolean => m.forced === true || forcedIds.has(m.id);
  const forced = input.due.filter(isForced);
  const forcedFrom = forced.length > 0 ? Math.min(...forced.map((m) => m.position)) : undefined;
  const roles: Record<string, PiggybackRole> = {};

  const earlier = input.due.filter((m) => forcedFrom === undefined || m.position < forcedFrom).sort((a, b) => a.position - b.position);
  const tokensAfterP = forcedFrom === undefined ? 0 : input.cachedTokensFrom(forcedFrom);
  const starts = [...new Set(earlier.map((m) => m.position))];
  const priced: PricedStart[] = starts.map((q) => {
    const group = earlier.filter((m) => m.position >= q);
    const removed = sumRemoved(group);
    const rewrittenTokens = Math.max(0, input.cachedTokensFrom(q) - tokensAfterP - removed);
    const dropped = input.reasoningDroppedAfter;
    const reasoning = dropped ? { reasoningDropped: Math.max(0, dropped(q) - (forcedFrom === undefined ? 0 : dropped(forcedFrom))) } : {};
    return {
      position: q,
      mutationIds: group.map((m) => m.id),
      decision: priceFlush({ ...input.gate, tokensRemoved: removed, rewrittenTokens, ...reasoning }),
    };
  });
  let chosen: PricedStart | undefined;
  for (const p of priced) {
    if (p.decision.apply && (chosen === undefined || p.decision.numbers.net > chosen.decision.numbers.net)) chosen = p;
  }

  const start = chosen?.position ?? forcedFrom;
  const apply: DueMutation[] = [];
  const defer: DueMutation[] = [];
  for (const m of input.due) {
    if (start !== undefined && m.position >= start) {
      apply.push(m);
      roles[m.id] = isForced(m) ? "forced" : forcedFrom !== undefined && m.position >= forcedFrom ? "rides-along" : "pays-alone";
    } else {
      defer.push(m);
      roles[m.id] = "deferred";
    }
  }
  const firstChange = apply.length > 0 ? Math.min(...apply.map((m) => m.position)) : undefined;
  return { apply, defer, roles, forcedFrom, firstChange, priced, chosen };
}
