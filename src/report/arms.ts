/**
 * Arms of a replay: the same recorded session sent through different context transforms.
 * `bare` is Pi as recorded; `keeper` is this extension with default settings (cache
 * discipline on, the seam mark placed on the serialized requests as live); every other
 * arm is the defaults with one settings change, so its difference to `keeper` is that
 * feature's contribution.
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { WireRequestBody } from "../cache/wire-types.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import { applySettingsOverride, keeperReplayConfig, type KeeperReplayConfig, type SettingsOverride } from "./keeper-config.ts";
import { createKeeperReplayEngine, type KeeperRequestInfo, type ReplayFlush, type SummarizerTotals } from "./keeper-engine.ts";
import { replaySummarizer, type ReplaySummarySource } from "./replay-summaries.ts";

export interface ArmStartOptions {
  summaries: ReplaySummarySource;
  /** Context window of a request's model (budget trigger, Pi's compaction threshold). */
  contextWindow?: (info: { provider: string; model: string }) => number;
  /** The session model's output price in units of its input price (the size model's summary cost); default 5. */
  outputPrice?: number;
}

/** What an arm did besides transforming contexts. */
export interface ArmRunTotals {
  flushes: ReplayFlush[];
  summarizer: SummarizerTotals;
  /** The summarizer's dollars as recorded (a keeper recording's); absent: its tokens at the session model's rates. */
  summarizerUsd?: number;
  /** Pi's compactions the arm paid for (its summary requests); absent: none. */
  compactions?: CompactionTotals;
  /** A keeper recording's background compaction summaries the keeper never applied, as their entries record them (dollars). */
  unappliedCompactionUsd?: number;
}

/** Pi's compactions in an arm: their summary requests, priced at the request model's rates. */
export interface CompactionTotals {
  count: number;
  /** Of those, simulated at the arm's own threshold (`pi-compaction.ts`); the others are the recording's, at their recorded usage. */
  simulated: number;
  /** Summary requests (a split turn's prefix is a request of its own). */
  requests: number;
  inputTokens: number;
  outputTokens: number;
  /** Billed-equivalent units (uncached input tokens of the request's model). */
  billed: number;
  usd: number;
  /** Dollars by the request each compaction came before (a time window sums them with it). */
  byRequest: Array<{ requestIndex: number; usd: number }>;
}

/** One replay of one arm: the hook handed to `replaySession` and the totals afterwards. */
export interface ArmRun {
  /** Absent: the recorded context is serialized unchanged. */
  transformContext?: (messages: AgentMessage[], requestIndex: number, info: KeeperRequestInfo) => AgentMessage[];
  /** Absent: the serialized request goes to the analyzer unchanged. Called after `transformContext` of the same request. */
  transformBody?: (body: WireRequestBody, requestIndex: number, info: KeeperRequestInfo) => WireRequestBody;
  totals(): ArmRunTotals;
}

export interface Arm {
  name: string;
  description: string;
  /** Settings the arm runs with (absent for `bare`). */
  settings?: KeeperSettings;
  start(options: ArmStartOptions): ArmRun;
}

const NO_TOTALS: ArmRunTotals = { flushes: [], summarizer: { calls: 0, inputTokens: 0, outputTokens: 0, billed: 0 } };

export const bareArm: Arm = {
  name: "bare",
  description: "Pi as recorded: the context Pi built, unchanged",
  start: () => ({ totals: () => NO_TOTALS }),
};

export function keeperArm(name: string, description: string, override: SettingsOverride = {}): Arm {
  const settings = applySettingsOverride(DEFAULT_SETTINGS, override);
  const config: KeeperReplayConfig = keeperReplayConfig(settings);
  return {
    name,
    description,
    settings,
    start(options) {
      const engine = createKeeperReplayEngine({
        config,
        summarize: replaySummarizer(options.summaries, options.outputPrice),
        ...(options.contextWindow ? { contextWindow: options.contextWindow } : {}),
        ...(settings.cache.discipline ? { discipline: settings.cache } : {}),
      });
      return {
        transformContext: (messages, requestIndex, info) => engine.transformContext(messages, requestIndex, info),
        transformBody: (body, requestIndex, info) => engine.transformBody(body, requestIndex, info),
        totals: () => ({ flushes: engine.state().flushes, summarizer: engine.state().summarizer }),
      };
    },
  };
}

export const ARMS: readonly Arm[] = [
  bareArm,
  keeperArm("keeper", "this extension, default settings"),
  keeperArm("summarizer-model", 'defaults, summarizer.mode "model" (a model summary for every batch, whether it pays or not)', { summarizer: { mode: "model" } }),
  keeperArm("discipline-off", "defaults, cache discipline off (every flush applies everything it proposes; no seam)", { cache: { discipline: false } }),
  keeperArm("no-seam", "defaults, cache discipline on without the seam mark at the end of the frozen history", { cache: { seam: false } }),
  keeperArm("no-pruning", "defaults, pruning off (no stubs, purges or chain compression)", { pruning: { enabled: false } }),
  keeperArm("thinking-off", "defaults, thinking strip mode off", { thinkingStrip: { mode: "off" } }),
  keeperArm("thinking-flush-gated", "defaults, thinking strip forced on (flush-gated) whatever the model", { thinkingStrip: { mode: "flush-gated" } }),
  keeperArm("no-chain-compression", "defaults, closed tool chains never collapse", { pruning: { chainCompression: { enabled: false } } }),
  keeperArm("no-error-purge", "defaults, failed calls keep their arguments", { pruning: { errorPurge: { enabled: false } } }),
  keeperArm("budget-trigger-off", "defaults, flush only at the end of a user request", { pruning: { budgetTrigger: { enabled: false } } }),
  keeperArm("budget-trigger-tight", "defaults, budget trigger at 4% of the window or 8k tokens", {
    pruning: { budgetTrigger: { fraction: 0.04, maxTokens: 8_000 } },
  }),
  keeperArm("loop-flush-off", "defaults, no flush inside a tool loop when it pays (only the budget trigger's)", { pruning: { loopFlush: { enabled: false } } }),
];

/** Other accepted names. */
export const ARM_ALIASES: Readonly<Record<string, string>> = { "no-thinking-strip": "thinking-off", defaults: "keeper" };

/**
 * The arms for a comma-separated selection (aliases allowed). `bare` and `keeper` are always
 * included (ratios are to `bare`), first, in that order; unknown names are returned apart.
 */
export function selectArms(selection: string | undefined): { arms: Arm[]; unknown: string[] } {
  if (selection === undefined || selection.trim() === "" || selection.trim() === "all") return { arms: [...ARMS], unknown: [] };
  const wanted = new Set(["bare", "keeper"]);
  const unknown: string[] = [];
  for (const raw of selection.split(",").map((s) => s.trim()).filter(Boolean)) {
    const name = ARM_ALIASES[raw] ?? raw;
    if (ARMS.some((a) => a.name === name)) wanted.add(name);
    else unknown.push(raw);
  }
  return { arms: ARMS.filter((a) => wanted.has(a.name)), unknown };
}
