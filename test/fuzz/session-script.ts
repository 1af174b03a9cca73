/**
 * A fuzzed session as plain data (so a failing one shrinks and saves as a JSON fixture):
 * the settings, the faults its flushes meet, and a list of user-level actions — prompts that
 * run tool loops, model and thinking-level switches, `/tree` navigation, compactions (Pi's
 * and the extension's), restarts (clean or torn mid-flush) and `/keeper now`.
 */
import fc from "fast-check";
import { SUMMARY_FAULTS, type SummaryFault } from "./summarizer-faults.ts";
import { settingsChoice, type SettingsChoice } from "./settings-extremes.ts";

export const OUTPUT_SIZES = ["empty", "tiny", "small", "medium", "large", "huge"] as const;
export type OutputSize = (typeof OUTPUT_SIZES)[number];
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];
/** A flush's fault: one of the summarizer's, or a spill write that fails. */
export type FlushFault = SummaryFault | "spill-fail";

export interface CallScript {
  /** Index into the tool names (read, bash, edit, grep, keeper_recall). */
  tool: number;
  /** Index into the paths (one of them protected in some settings). */
  path: number;
  size: OutputSize;
  isError: boolean;
  /** Repeat the output of the previous call on the same path (aliases). */
  repeat: boolean;
  /** Reuse an earlier provider tool-call id (providers do). */
  reuseId: boolean;
}

export interface StepScript {
  thinking: boolean;
  /** Parallel calls of one assistant turn. */
  calls: CallScript[];
  reverseResults: boolean;
  /** `/keeper now` right after this step's results (a flush inside the tool loop). */
  flushAfter: boolean;
}

export type Action =
  | { kind: "prompt"; steps: StepScript[]; end: "stop" | "aborted" | "error"; gapMs: number }
  | { kind: "model"; to: number }
  | { kind: "thinking"; level: ThinkingLevel }
  | { kind: "tree"; back: number; summary: boolean }
  | { kind: "compact"; by: "pi" | "keeper"; keepRecentTokens: number }
  | { kind: "restart" }
  | { kind: "crash"; keep: number }
  | { kind: "flushNow" };

export interface SessionScript {
  settings: SettingsChoice;
  /** Flush i meets `faults[i % faults.length]`. */
  faults: FlushFault[];
  /** Context window of every model (small windows fire the budget trigger often). */
  contextWindow: number;
  startModel: number;
  startThinking: ThinkingLevel;
  actions: Action[];
}

const callScript: fc.Arbitrary<CallScript> = fc.record({
  tool: fc.integer({ min: 0, max: 4 }),
  path: fc.integer({ min: 0, max: 5 }),
  size: fc.oneof(
    ...OUTPUT_SIZES.map((size, i) => ({ arbitrary: fc.constant(size), weight: [2, 3, 3, 3, 2, 1][i] })),
  ),
  isError: fc.integer({ min: 0, max: 6 }).map((n) => n === 0),
  repeat: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  reuseId: fc.integer({ min: 0, max: 12 }).map((n) => n === 0),
});

const stepScript: fc.Arbitrary<StepScript> = fc.record({
  thinking: fc.boolean(),
  calls: fc.array(callScript, { minLength: 1, maxLength: 4 }),
  reverseResults: fc.boolean(),
  flushAfter: fc.integer({ min: 0, max: 8 }).map((n) => n === 0),
});

const GAPS = [1_000, 30_000, 4 * 60_000, 6 * 60_000, 2 * 3_600_000];

const prompt: fc.Arbitrary<Action> = fc.record({
  kind: fc.constant("prompt" as const),
  steps: fc.array(stepScript, { minLength: 0, maxLength: 5 }),
  end: fc.constantFrom("stop", "stop", "stop", "stop", "aborted", "error") as fc.Arbitrary<"stop" | "aborted" | "error">,
  gapMs: fc.constantFrom(...GAPS),
});

const action: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: prompt, weight: 12 },
  { arbitrary: fc.record({ kind: fc.constant("model" as const), to: fc.integer({ min: 0, max: 3 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("thinking" as const), level: fc.constantFrom(...THINKING_LEVELS) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("tree" as const), back: fc.integer({ min: 0, max: 6 }), summary: fc.boolean() }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant("compact" as const), by: fc.constantFrom("pi", "keeper") as fc.Arbitrary<"pi" | "keeper">, keepRecentTokens: fc.constantFrom(1, 500, 4_000, 20_000) }),
    weight: 1,
  },
  { arbitrary: fc.constant({ kind: "restart" as const }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant("crash" as const), keep: fc.integer({ min: 0, max: 8 }) }), weight: 1 },
  { arbitrary: fc.constant({ kind: "flushNow" as const }), weight: 1 },
);

const flushFault: fc.Arbitrary<FlushFault> = fc.oneof(
  { arbitrary: fc.constant("ok" as const), weight: 6 },
  { arbitrary: fc.constantFrom(...SUMMARY_FAULTS, "spill-fail" as const), weight: 4 },
);

export const sessionScript: fc.Arbitrary<SessionScript> = fc.record({
  settings: settingsChoice,
  faults: fc.array(flushFault, { minLength: 1, maxLength: 6 }),
  contextWindow: fc.constantFrom(8_000, 32_000, 200_000, 1_000_000),
  startModel: fc.integer({ min: 0, max: 3 }),
  startThinking: fc.constantFrom(...THINKING_LEVELS),
  actions: fc.array(action, { minLength: 1, maxLength: 14 }),
});
