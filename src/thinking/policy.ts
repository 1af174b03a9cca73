/**
 * When is stripping old thinking worth a cache rewrite? It depends on what the provider does
 * with earlier thinking on later calls:
 * - `drops-closed-cycle`: the provider already ignores thinking from closed cycles (a user
 *   text turn happened since). It costs nothing, so stripping it only rewrites the cache.
 * - `keeps-all`: earlier thinking stays in the model's context and is billed (as cached
 *   input) on every call, so removing it can pay back the one rewrite.
 * - `unknown`: no evidence either way.
 *
 * The table is data: one row per model family, first match wins. `model-match.ts` reads it.
 */
import { matchesModel, type ModelMatcher } from "./model-match.ts";

export { DEFAULT_KEEP_LAST_TURNS, KEEP_LAST_TURNS_PRESETS, type KeepLastTurnsPreset } from "./keep-last-turns.ts";

export type ThinkingReplayBehaviour = "drops-closed-cycle" | "keeps-all" | "unknown";

export interface ThinkingPolicyRow {
  /** Stable id, for logs and tests. */
  id: string;
  /** Human label for docs and the status line. */
  label: string;
  match: ModelMatcher;
  behaviour: ThinkingReplayBehaviour;
  /** One line: where the classification comes from. */
  source: string;
}

/** APIs that put Claude's own thinking blocks (with signatures) on the wire. */
const CLAUDE_WIRE = ["anthropic-messages", "bedrock-converse-stream"] as const;
const OPENAI_RESPONSES_WIRE = ["openai-responses", "azure-openai-responses", "openai-codex-responses"] as const;
const GOOGLE_WIRE = ["google-generative-ai", "google-vertex"] as const;

/** `claude-<family>-<major>[-.<minor>]`; an 8-digit date after the major is not a minor. */
const claudeFamily = (family: string): RegExp =>
  new RegExp(`claude-${family}-(?<major>\\d+)(?:[-.](?<minor>\\d{1,2})(?!\\d))?`);

const FACTS_MODELS_DIFFER =
  "Anthropic extended-thinking docs as summarized in provider-and-pi-facts.md ('Models differ')";

export const THINKING_POLICY_TABLE: readonly ThinkingPolicyRow[] = [
  {
    id: "claude-3",
    label: "Claude 3.x (3.7 Sonnet is the one that thinks)",
    match: { apis: CLAUDE_WIRE, model: /claude-(?<major>\d+)(?:[-.](?<minor>\d)(?!\d))?-(?:opus|sonnet|haiku)/ },
    behaviour: "drops-closed-cycle",
    source: `${FACTS_MODELS_DIFFER}: pre-4.5 models drop closed-cycle thinking server-side`,
  },
  {
    id: "claude-opus-legacy",
    label: "Claude Opus <= 4.1",
    match: { apis: CLAUDE_WIRE, model: claudeFamily("opus"), maxVersion: [4, 1] },
    behaviour: "drops-closed-cycle",
    source: `${FACTS_MODELS_DIFFER}: older models drop closed-cycle thinking`,
  },
  {
    id: "claude-opus-current",
    label: "Claude Opus >= 4.5",
    match: { apis: CLAUDE_WIRE, model: claudeFamily("opus"), minVersion: [4, 5] },
    behaviour: "keeps-all",
    source: `${FACTS_MODELS_DIFFER}: Opus 4.5+ keep all prior thinking by default`,
  },
  {
    id: "claude-sonnet-legacy",
    label: "Claude Sonnet <= 4.5",
    match: { apis: CLAUDE_WIRE, model: claudeFamily("sonnet"), maxVersion: [4, 5] },
    behaviour: "drops-closed-cycle",
    source: `${FACTS_MODELS_DIFFER}; a peer measured +33% session cost from a keep-16 strip on Sonnet 4.5`,
  },
  {
    id: "claude-sonnet-current",
    label: "Claude Sonnet >= 4.6",
    match: { apis: CLAUDE_WIRE, model: claudeFamily("sonnet"), minVersion: [4, 6] },
    behaviour: "keeps-all",
    source: `${FACTS_MODELS_DIFFER}: Sonnet 4.6+ keep all prior thinking by default`,
  },
  {
    id: "claude-haiku-legacy",
    label: "Claude Haiku <= 4.5",
    match: { apis: CLAUDE_WIRE, model: claudeFamily("haiku"), maxVersion: [4, 5] },
    behaviour: "drops-closed-cycle",
    source: `${FACTS_MODELS_DIFFER}: Haiku drops closed-cycle thinking`,
  },
  {
    id: "claude-other",
    label: "Other Claude models (e.g. Haiku 5.x, Fable)",
    match: { apis: CLAUDE_WIRE, model: /claude/ },
    behaviour: "unknown",
    source: "not covered by the facts file; no published measurement",
  },
  {
    id: "openai-o-series",
    label: "OpenAI o1 / o3 / o4 (Responses API)",
    match: { apis: OPENAI_RESPONSES_WIRE, model: /(?:^|[/.])o\d+(?:-|$)/ },
    behaviour: "drops-closed-cycle",
    source: "pi-ai openai-responses-shared.js: models before GPT-5.6 use only current-turn reasoning (turn_boundary removals)",
  },
  {
    id: "openai-gpt-before-5.6",
    label: "OpenAI GPT-5 .. 5.5 (Responses API)",
    match: {
      apis: OPENAI_RESPONSES_WIRE,
      model: /gpt-(?<major>\d+)(?:\.(?<minor>\d+))?/,
      minVersion: [5, 0],
      maxVersion: [5, 5],
    },
    behaviour: "drops-closed-cycle",
    source: "pi-ai openai-responses-shared.js: models before GPT-5.6 use only current-turn reasoning (turn_boundary removals)",
  },
  {
    id: "openai-gpt-5.6-plus",
    label: "OpenAI GPT-5.6 and later (Responses API)",
    match: { apis: OPENAI_RESPONSES_WIRE, model: /gpt-(?<major>\d+)(?:\.(?<minor>\d+))?/, minVersion: [5, 6] },
    behaviour: "unknown",
    source:
      "pi-ai openai-responses-shared.js: earlier reasoning is kept, but encrypted items are id-paired and from GPT-6.2 an edit of earlier input withholds later reasoning (prefix_mismatch)",
  },
  {
    id: "gemini",
    label: "Google Gemini",
    match: { apis: GOOGLE_WIRE, model: /gemini/ },
    behaviour: "unknown",
    source: "thought signatures ride on function-call parts (kept by the strip); implicit caching, no write premium; no evidence on earlier thoughts",
  },
];

export const THINKING_STRIP_MODES = ["off", "flush-gated", "auto"] as const;
export type ThinkingStripMode = (typeof THINKING_STRIP_MODES)[number];
export const DEFAULT_THINKING_STRIP_MODE: ThinkingStripMode = "auto";

export interface ThinkingPolicyInput {
  mode: ThinkingStripMode;
  provider: string;
  modelId: string;
  /** Pi API id of the model that will receive the request (`Model.api`). */
  api: string;
  /** Defaults to THINKING_POLICY_TABLE. */
  table?: readonly ThinkingPolicyRow[];
}

export interface ThinkingPolicyDecision {
  strip: boolean;
  behaviour: ThinkingReplayBehaviour;
  /** The matched row; absent when no row matches (behaviour is then `unknown`). */
  row?: ThinkingPolicyRow;
  reason: string;
}

export function findThinkingPolicyRow(
  model: { provider: string; modelId: string; api: string },
  table: readonly ThinkingPolicyRow[] = THINKING_POLICY_TABLE,
): ThinkingPolicyRow | undefined {
  return table.find((row) => matchesModel(row.match, model));
}

const AUTO_REASONS: Record<ThinkingReplayBehaviour, { strip: boolean; reason: string }> = {
  "drops-closed-cycle": {
    strip: false,
    reason: "the provider already drops the thinking of earlier requests: stripping saves nothing and rewrites the cache",
  },
  "keeps-all": {
    strip: true,
    reason: "earlier thinking stays in context and is billed on every call: removing it pays back the one rewrite",
  },
  unknown: {
    strip: false,
    reason: "no evidence that earlier thinking is billed on later calls, and every strip rewrites cached history",
  },
};

export function resolveThinkingPolicy(input: ThinkingPolicyInput): ThinkingPolicyDecision {
  const row = findThinkingPolicyRow(input, input.table);
  const behaviour = row?.behaviour ?? "unknown";
  const base = row === undefined ? { behaviour } : { behaviour, row };
  const where = `${input.provider}/${input.modelId} (${row?.label ?? "no table row"}: ${behaviour})`;
  switch (input.mode) {
    case "off":
      return { ...base, strip: false, reason: `thinkingStrip.mode is off; ${where}` };
    case "flush-gated":
      return { ...base, strip: true, reason: `thinkingStrip.mode is flush-gated (forced); ${where}` };
    case "auto": {
      const auto = AUTO_REASONS[behaviour];
      return { ...base, strip: auto.strip, reason: `auto: ${auto.reason}; ${where}` };
    }
  }
}
