/**
 * The keeper arm of a recording made with the keeper: what it sent, rebuilt from what it wrote.
 * Before each recorded request the keeper's state is restored from the branch as the host
 * restores it (`restoreReconciled`, then the state outside the context dropped) and the request
 * renders with the live `keeperRender`; its body then goes through the engine's send (the seam
 * and the cache ledger, as the host steps it). So the arm
 * follows the recording whatever the keeper ran with: model summaries, flushes that landed
 * while a later request was in flight, cold re-plans, settings that shaped its flushes.
 *
 * Which of the keeper's entries a request saw: those on its branch written before it was sent
 * (pi-ai stamps an answer when its request starts); one written later — a flush that finished
 * while the request was in flight — counts from the next request on. Except a cold re-plan's:
 * it is appended in `before_provider_request`, after the stamp, and the request carries it; it
 * is the flush entry without summaries that closes the branch (no message after it) and was
 * decided at the request's render (its frontier's `lastFlushAt` at or before the stamp). The
 * flush of the request's own answer is appended there too (at `message_end`, before Pi stores the
 * answer) and may summarize nothing when flushes inside the loop took every batch already: it
 * was decided after the answer came, and the request did not carry it.
 * Render-time settings are the defaults (the recording does not hold them).
 */
import { toolsKeyDigest, transcriptToolNames } from "../cache/tool-changes.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { initialEngineState, keeperRender, step, type EngineState } from "../engine/index.ts";
import { liveOccurrenceKeys } from "../prune/occurrence.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { dropStateOutsideContext } from "../state/drop-outside-context.ts";
import type { KeeperState } from "../state/schema.ts";
import { restoreReconciled } from "../state/torn-flush.ts";
import type { ArmRun, ArmRunTotals } from "./arms.ts";
import type { KeeperRequestInfo, ReplayFlush } from "./keeper-engine.ts";
import { KEEPER_ENTRY_PREFIX } from "./recorded-with.ts";
import type { ReadRecording, ReplayRequestInfo } from "./replay.ts";

export interface BranchEntry {
  id: string;
  parentId: string | null;
  type: string;
  customType?: string;
  timestamp?: string;
  data?: unknown;
}

/** When a flush entry's flush decided (its frontier's `lastFlushAt`), when it says. */
function decidedAt(e: BranchEntry): number | undefined {
  const d = e.data as { frontier?: { lastFlushAt?: unknown }; frontierDelta?: { lastFlushAt?: unknown } } | undefined;
  const at = d?.frontier?.lastFlushAt ?? d?.frontierDelta?.lastFlushAt;
  return typeof at === "number" ? at : undefined;
}

/** A cold re-plan's entry for the request stamped `sentAt`: a flush entry that summarized nothing, decided by then. */
function isColdReplan(e: BranchEntry, sentAt: number): boolean {
  if (e.customType !== `${KEEPER_ENTRY_PREFIX}flush` || ((e.data as { summaries?: unknown[] } | undefined)?.summaries?.length ?? 0) > 0) return false;
  const at = decidedAt(e);
  return at === undefined || at <= sentAt;
}

const isKeeperEntry = (e: BranchEntry) => e.type === "custom" && typeof e.customType === "string" && e.customType.startsWith(KEEPER_ENTRY_PREFIX);

/** The branch from the root to `leafId`, oldest first. */
function branchTo(leafId: string | null, byId: ReadonlyMap<string, BranchEntry>): BranchEntry[] {
  const path: BranchEntry[] = [];
  const seen = new Set<string>();
  for (let id = leafId; id !== null && !seen.has(id); ) {
    seen.add(id);
    const e = byId.get(id);
    if (!e) break;
    path.push(e);
    id = e.parentId;
  }
  return path.reverse();
}

/**
 * `outputPrice`: the session model's output price over its input price, for the summarizer's
 * billed units; `summarizerUsd`: what the recording's entries say the summarizer cost;
 * `unappliedCompactionUsd`: what they say the background summaries never applied cost.
 */
/**
 * The branch as the request stamped `sentAt` saw it: every entry but the keeper's written after
 * the stamp, a cold re-plan's closing the branch excepted (see above).
 */
export function entriesSeenAt<T extends BranchEntry>(branch: readonly T[], sentAt: number): T[] {
  let lastMessage = branch.length - 1;
  while (lastMessage >= 0 && isKeeperEntry(branch[lastMessage]!)) lastMessage--;
  return branch.filter((e, i) => !isKeeperEntry(e) || !(Date.parse(e.timestamp ?? "") > sentAt) || (i > lastMessage && isColdReplan(e, sentAt)));
}

export function recordedKeeperRun(recording: ReadRecording, options: { outputPrice?: number; summarizerUsd?: number; unappliedCompactionUsd?: number; settings?: KeeperSettings } = {}): ArmRun {
  const settings = options.settings ?? DEFAULT_SETTINGS;
  const outputPrice = options.outputPrice ?? 5;
  const entries = recording.points.entries as unknown as BranchEntry[];
  const byId = new Map(entries.map((e) => [e.id, e]));
  const pointByLine = new Map(recording.points.points.map((p) => [p.line, p]));
  let engine: EngineState = initialEngineState();
  let restoredKey: string | undefined;
  let keeper: KeeperState = engine.keeper;
  const flushes: ReplayFlush[] = [];
  let summarizer = { calls: 0, inputTokens: 0, outputTokens: 0, billed: 0 };

  /** The keeper's state when the request of `info` went out. */
  const stateAt = (messages: ContextMessage[], requestIndex: number, info: KeeperRequestInfo): KeeperState => {
    const point = pointByLine.get((info as Partial<ReplayRequestInfo>).line ?? -1);
    const parentId = point ? (byId.get(point.entryId)?.parentId ?? null) : null;
    const seen = entriesSeenAt(branchTo(parentId, byId), info.timestamp);
    const keeperEntries = seen.filter(isKeeperEntry);
    const key = keeperEntries.map((e) => e.id).join(",");
    if (key !== restoredKey) {
      const flushEntries = keeperEntries.filter((e) => e.customType === `${KEEPER_ENTRY_PREFIX}flush`).length;
      if (restoredKey !== undefined || keeperEntries.length > 0) {
        for (let n = flushes.length; n < flushEntries; n++) flushes.push({ requestIndex, reason: "request-end", batches: 0, modelBatches: 0, rewrote: true, summarizerBilled: 0 });
      }
      restoredKey = key;
      keeper = restoreReconciled(seen).state;
      const s = keeper.stats;
      summarizer = { calls: 0, inputTokens: s.summarizerInputTokens, outputTokens: s.summarizerOutputTokens, billed: s.summarizerInputTokens + s.summarizerOutputTokens * outputPrice };
    }
    return dropStateOutsideContext(keeper, liveOccurrenceKeys(messages));
  };

  let sent: { keeper: KeeperState; raw: ContextMessage[]; rendered: ContextMessage[] } | undefined;
  return {
    transformContext(messages, requestIndex, info) {
      const state = stateAt(messages as ContextMessage[], requestIndex, info);
      const rendered = keeperRender({ messages: messages as ContextMessage[], state, settings, model: { provider: info.provider, id: info.model, api: info.api } });
      sent = { keeper: state, raw: messages as ContextMessage[], rendered };
      return rendered;
    },
    transformBody(body: WireRequestBody, _requestIndex: number, info: KeeperRequestInfo): WireRequestBody {
      // The engine's send places the seam from the keeper's frontier on the messages the request
      // rendered: hand it the state this request rendered with, and that render.
      if (sent) engine = step(engine, { type: "recorded-state", keeper: sent.keeper, render: { raw: sent.raw, rendered: sent.rendered } }).state;
      const key = {
        at: info.timestamp,
        model: info.model,
        thinkingLevel: info.thinkingLevel ?? "",
        toolsDigest: toolsKeyDigest(info.costModel?.toolChangesInPlace === true, transcriptToolNames(sent?.raw ?? [])),
      };
      const out = step(engine, {
        type: "before-request",
        payload: body,
        key,
        settings,
        model: { api: info.api, id: info.model },
      });
      // The request is built: cold re-plans its render adopted are committed, as the host does.
      engine = step(out.state, { type: "request-built" }).state;
      return out.request?.body ?? body;
    },
    totals: (): ArmRunTotals => ({
      flushes,
      summarizer,
      ...(options.summarizerUsd !== undefined ? { summarizerUsd: options.summarizerUsd } : {}),
      ...(options.unappliedCompactionUsd ? { unappliedCompactionUsd: options.unappliedCompactionUsd } : {}),
    }),
  };
}
