/**
 * Pi's compactions in a replayed arm, and what their summary requests cost.
 *
 * - The arm the session was recorded with (`simulate: false`) compacts where the recording
 *   shows; each recorded compaction its contexts start from is charged the usage Pi recorded
 *   on the compaction entry (Pi 1.6 stores its summary requests' usage there; an entry without
 *   usage is charged nothing).
 * - Every other arm (`simulate: true`) gets Pi's own threshold compaction simulated
 *   (`pi-compaction.ts`) around its hooks: before each request the simulation gives the arm's
 *   context (the recorded one while nothing differs from it), the arm renders it as it would
 *   the recorded one (the keeper arm's engine sees a compaction where a context starts with a
 *   new summary, and steps `compacted` as for a recorded one), and after the body is built its
 *   prompt tokens — what this arm's provider would report — are what Pi measures at the next
 *   request. A simulated compaction's summary requests are priced at the request model's rates,
 *   uncached; a recorded one the arm keeps (the user's `/compact`) is charged its recorded usage.
 *
 * A compaction's dollars count with the request it came before (a time window sums them with it).
 */
import { dollarsOf, type CostModel } from "../cache/cost-model.ts";
import { billedEquivalent } from "../cache/pricing.ts";
import type { WireRequestBody } from "../cache/wire-types.ts";
import type { SessionEntry } from "../compaction/primitives.ts";
import { isAssistant, timestampOf, type ContextMessage } from "../session/messages.ts";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ArmRun, ArmRunTotals, CompactionTotals } from "./arms.ts";
import type { KeeperRequestInfo } from "./keeper-engine.ts";
import {
  initialPiCompactionSim,
  PI_COMPACTION_DEFAULTS,
  stepPiCompaction,
  userCompaction,
  type PiCompactionSettings,
  type PiCompactionSim,
  type PiReplayPrimitives,
  type SimulatedCompaction,
} from "./pi-compaction.ts";
import { compactionAt } from "./recorded-events.ts";
import type { ReadRecording, ReplayRequestInfo } from "./replay.ts";

export interface PiCompactionArmOptions {
  recording: ReadRecording;
  /** Simulate Pi's threshold compaction (an arm the recording does not show), or only charge the recorded ones. */
  simulate: boolean;
  prims: PiReplayPrimitives;
  /** Context window of a request's model. */
  contextWindow: (info: { provider: string; model: string }) => number;
  /** Pi's compaction settings for a request's model; default Pi's defaults. */
  settings?: (info: { provider: string; model: string }) => PiCompactionSettings;
  /** The prompt tokens of the arm's request body (the estimator the session was calibrated with); needed to simulate. */
  promptTokens?: (body: WireRequestBody, info: KeeperRequestInfo) => number;
}

/** Recent answers' prompt tokens in the arm (Pi reads the last answer's; a branch switch may read an older one). */
const REMEMBERED = 16;

interface Charge {
  requestIndex: number;
  simulated: boolean;
  requests: number;
  inputTokens: number;
  outputTokens: number;
  billed: number;
  usd: number;
}

interface RecordedUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** A recorded compaction's summary requests at the request model's prices (nothing when Pi recorded no usage). */
function recordedCharge(entry: SessionEntry, requestIndex: number, cost: CostModel | undefined): Charge {
  const u = (entry as { usage?: RecordedUsage }).usage ?? {};
  const tokens = { uncached: u.input ?? 0, read: u.cacheRead ?? 0, write5m: u.cacheWrite ?? 0, write1h: 0, output: u.output ?? 0 };
  return {
    requestIndex,
    simulated: false,
    requests: 0,
    inputTokens: tokens.uncached + tokens.read + tokens.write5m,
    outputTokens: tokens.output,
    billed: cost ? billedEquivalent(tokens, cost.pricing) : 0,
    usd: cost ? dollarsOf(tokens, cost) : 0,
  };
}

function simulatedCharge(c: SimulatedCompaction, requestIndex: number, cost: CostModel | undefined): Charge {
  const { requests, inputTokens, outputTokens } = c.call;
  const tokens = { uncached: inputTokens, read: 0, write5m: 0, write1h: 0, output: outputTokens };
  return { requestIndex, simulated: true, requests, inputTokens, outputTokens, billed: cost ? billedEquivalent(tokens, cost.pricing) : 0, usd: cost ? dollarsOf(tokens, cost) : 0 };
}

export function compactionTotals(charges: readonly Charge[]): CompactionTotals {
  const sum = (f: (c: Charge) => number) => charges.reduce((n, c) => n + f(c), 0);
  return {
    count: charges.length,
    simulated: charges.filter((c) => c.simulated).length,
    requests: sum((c) => c.requests),
    inputTokens: sum((c) => c.inputTokens),
    outputTokens: sum((c) => c.outputTokens),
    billed: sum((c) => c.billed),
    usd: sum((c) => c.usd),
    byRequest: charges.map((c) => ({ requestIndex: c.requestIndex, usd: c.usd })),
  };
}

export function withPiCompaction(run: ArmRun, o: PiCompactionArmOptions): ArmRun & { compactions(): readonly SimulatedCompaction[] } {
  const settingsOf = o.settings ?? (() => PI_COMPACTION_DEFAULTS);
  const entries = o.recording.points.entries as unknown as SessionEntry[];
  // The recorded compactions by their summary's time; each measured against the window of the model whose answer came before it.
  const recordedAt = new Map<number, SessionEntry>();
  const userMade = new Set<string>();
  let model: { provider: string; model: string } | undefined;
  for (const e of entries) {
    if (e.type === "message" && isAssistant(e.message as ContextMessage)) {
      const a = e.message as { provider: string; model: string };
      model = { provider: a.provider, model: a.model };
    }
    if (e.type !== "compaction") continue;
    recordedAt.set(Date.parse(e.timestamp), e);
    if (model && userCompaction(e, o.contextWindow(model), settingsOf(model))) userMade.add(e.id);
  }
  let sim: PiCompactionSim = initialPiCompactionSim(entries, (c) => userMade.has(c.id));
  const pointByLine = new Map(o.recording.points.points.map((p) => [p.line, p]));
  const parentOf = new Map(entries.map((e) => [e.id, e.parentId]));
  let prompts: Array<{ answerAt: number; tokens: number }> = [];
  let lastCompaction: number | undefined;
  const charges: Charge[] = [];

  const armUsage = (answer: ContextMessage) => {
    const at = timestampOf(answer);
    return prompts.find((p) => p.answerAt === at)?.tokens;
  };

  return {
    transformContext(messages, requestIndex, info) {
      let context = messages as ContextMessage[];
      if (o.simulate) {
        const point = pointByLine.get((info as Partial<ReplayRequestInfo>).line ?? -1);
        const leafId = point ? (parentOf.get(point.entryId) ?? null) : null;
        const ref = { provider: info.provider, model: info.model };
        const step = stepPiCompaction(sim, { requestIndex, leafId, recorded: context, at: info.timestamp, contextWindow: o.contextWindow(ref), settings: settingsOf(ref), armUsage }, o.prims);
        sim = step.sim;
        context = step.context;
        if (step.compaction) charges.push(simulatedCharge(step.compaction, requestIndex, info.costModel));
      }
      // A recorded compaction the context starts from, the first time: its recorded usage.
      const at = compactionAt(context);
      const simulated = sim.compactions.some((c) => Date.parse(c.entry.timestamp) === at);
      const recorded = at !== undefined && at !== lastCompaction && !simulated ? recordedAt.get(at) : undefined;
      if (recorded) charges.push(recordedCharge(recorded, requestIndex, info.costModel));
      lastCompaction = at;
      const out = context as AgentMessage[];
      return run.transformContext ? run.transformContext(out, requestIndex, info) : out;
    },
    transformBody(body, requestIndex, info) {
      const sent = run.transformBody ? run.transformBody(body, requestIndex, info) : body;
      if (o.simulate && o.promptTokens) prompts = [{ answerAt: info.timestamp, tokens: o.promptTokens(sent, info) }, ...prompts].slice(0, REMEMBERED);
      return sent;
    },
    totals(): ArmRunTotals {
      return { ...run.totals(), compactions: compactionTotals(charges) };
    },
    compactions: () => sim.compactions,
  };
}
