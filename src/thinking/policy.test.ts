import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  DEFAULT_KEEP_LAST_TURNS,
  DEFAULT_THINKING_STRIP_MODE,
  KEEP_LAST_TURNS_PRESETS,
  THINKING_POLICY_TABLE,
  findThinkingPolicyRow,
  resolveThinkingPolicy,
  type ThinkingReplayBehaviour,
} from "./policy.ts";

interface Case {
  provider: string;
  api: string;
  modelId: string;
  row: string | undefined;
  behaviour: ThinkingReplayBehaviour;
}

/** One or more real catalog ids per row (ids as pi-ai 1.6's catalog spells them). */
const CASES: Case[] = [
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-3-7-sonnet-20250219", row: "claude-3", behaviour: "drops-closed-cycle" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-opus-4-1-20250805", row: "claude-opus-legacy", behaviour: "drops-closed-cycle" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-opus-4-20250514", row: "claude-opus-legacy", behaviour: "drops-closed-cycle" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-opus-4-5", row: "claude-opus-current", behaviour: "keeps-all" },
  { provider: "amazon-bedrock", api: "bedrock-converse-stream", modelId: "us.anthropic.claude-opus-4-6-v1", row: "claude-opus-current", behaviour: "keeps-all" },
  { provider: "openrouter", api: "anthropic-messages", modelId: "anthropic/claude-opus-4.8-fast", row: "claude-opus-current", behaviour: "keeps-all" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-opus-5", row: "claude-opus-current", behaviour: "keeps-all" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-sonnet-4-5", row: "claude-sonnet-legacy", behaviour: "drops-closed-cycle" },
  { provider: "amazon-bedrock", api: "bedrock-converse-stream", modelId: "anthropic.claude-sonnet-4-5-20250929-v1:0", row: "claude-sonnet-legacy", behaviour: "drops-closed-cycle" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-sonnet-4-20250514", row: "claude-sonnet-legacy", behaviour: "drops-closed-cycle" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-sonnet-4-6", row: "claude-sonnet-current", behaviour: "keeps-all" },
  { provider: "github-copilot", api: "anthropic-messages", modelId: "claude-sonnet-5", row: "claude-sonnet-current", behaviour: "keeps-all" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-haiku-4-5-20251001", row: "claude-haiku-legacy", behaviour: "drops-closed-cycle" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-haiku-5-5", row: "claude-other", behaviour: "unknown" },
  { provider: "anthropic", api: "anthropic-messages", modelId: "claude-fable-5", row: "claude-other", behaviour: "unknown" },
  { provider: "openai", api: "openai-responses", modelId: "o3", row: "openai-o-series", behaviour: "drops-closed-cycle" },
  { provider: "azure", api: "azure-openai-responses", modelId: "o4-mini", row: "openai-o-series", behaviour: "drops-closed-cycle" },
  { provider: "openai", api: "openai-responses", modelId: "gpt-5.1-codex", row: "openai-gpt-before-5.6", behaviour: "drops-closed-cycle" },
  { provider: "openai", api: "openai-responses", modelId: "gpt-5-mini", row: "openai-gpt-before-5.6", behaviour: "drops-closed-cycle" },
  { provider: "openai-codex", api: "openai-codex-responses", modelId: "gpt-5.6-sol", row: "openai-gpt-5.6-plus", behaviour: "unknown" },
  { provider: "openai", api: "openai-responses", modelId: "gpt-6.2-astra", row: "openai-gpt-5.6-plus", behaviour: "unknown" },
  { provider: "google", api: "google-generative-ai", modelId: "gemini-2.5-pro", row: "gemini", behaviour: "unknown" },
  { provider: "google-vertex", api: "google-vertex", modelId: "gemini-3.1-pro-preview", row: "gemini", behaviour: "unknown" },
  // no row: Claude through an OpenAI-compatible gateway, other vendors, local models
  { provider: "openrouter", api: "openai-completions", modelId: "anthropic/claude-sonnet-4.6", row: undefined, behaviour: "unknown" },
  { provider: "deepseek", api: "openai-completions", modelId: "deepseek-v4-pro", row: undefined, behaviour: "unknown" },
  { provider: "ollama", api: "openai-completions", modelId: "qwen3:32b", row: undefined, behaviour: "unknown" },
  { provider: "openai", api: "openai-responses", modelId: "gpt-4o", row: undefined, behaviour: "unknown" },
];

describe("thinking policy table", () => {
  test.each(CASES)("$provider / $modelId -> $row ($behaviour)", (c) => {
    const row = findThinkingPolicyRow(c);
    expect(row?.id).toBe(c.row);
    expect(resolveThinkingPolicy({ mode: "auto", ...c }).behaviour).toBe(c.behaviour);
  });

  test("every row is reached by at least one case, and every row has a source note", () => {
    const reached = new Set(CASES.map((c) => c.row));
    for (const row of THINKING_POLICY_TABLE) {
      expect(reached.has(row.id)).toBe(true);
      expect(row.source.length).toBeGreaterThan(10);
    }
  });

  test("doc/thinking-strip.md lists every row with its behaviour", () => {
    const doc = readFileSync(join(import.meta.dir, "../../doc/thinking-strip.md"), "utf8");
    for (const row of THINKING_POLICY_TABLE) {
      const line = doc.split("\n").find((l) => l.startsWith(`| \`${row.id}\` |`));
      expect(line).toBeDefined();
      expect(line).toContain(row.behaviour);
    }
  });

  test("row ids are unique and matchers are not global regexes (exec must be stateless)", () => {
    const ids = THINKING_POLICY_TABLE.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const row of THINKING_POLICY_TABLE) expect(row.match.model.global).toBe(false);
  });
});

describe("resolveThinkingPolicy", () => {
  const sonnet45 = { provider: "anthropic", api: "anthropic-messages", modelId: "claude-sonnet-4-5" };
  const opus46 = { provider: "anthropic", api: "anthropic-messages", modelId: "claude-opus-4-6" };
  const local = { provider: "lmstudio", api: "openai-completions", modelId: "gpt-oss-20b" };

  test("auto never strips on drops-closed-cycle", () => {
    const d = resolveThinkingPolicy({ mode: "auto", ...sonnet45 });
    expect(d).toMatchObject({ strip: false, behaviour: "drops-closed-cycle" });
    expect(d.row?.id).toBe("claude-sonnet-legacy");
    expect(d.reason).toContain("drops the thinking of earlier requests");
  });

  test("auto strips on keeps-all", () => {
    expect(resolveThinkingPolicy({ mode: "auto", ...opus46 })).toMatchObject({ strip: true, behaviour: "keeps-all" });
  });

  test("auto does not strip on unknown and says why", () => {
    const d = resolveThinkingPolicy({ mode: "auto", ...local });
    expect(d).toMatchObject({ strip: false, behaviour: "unknown" });
    expect(d.row).toBeUndefined();
    expect(d.reason).toContain("no evidence");
  });

  test("off never strips; flush-gated always strips", () => {
    for (const model of [sonnet45, opus46, local]) {
      expect(resolveThinkingPolicy({ mode: "off", ...model }).strip).toBe(false);
      expect(resolveThinkingPolicy({ mode: "flush-gated", ...model }).strip).toBe(true);
    }
  });

  test("a custom table replaces the default", () => {
    const table = [{ id: "all", label: "everything", match: { model: /.*/ }, behaviour: "keeps-all" as const, source: "test table row" }];
    expect(resolveThinkingPolicy({ mode: "auto", ...local, table })).toMatchObject({ strip: true, behaviour: "keeps-all" });
  });

  test("defaults: mode auto, keepLastTurns 1 out of the presets 1/4/8/16/32/64", () => {
    expect(DEFAULT_THINKING_STRIP_MODE).toBe("auto");
    expect([...KEEP_LAST_TURNS_PRESETS]).toEqual([1, 4, 8, 16, 32, 64]);
    expect(DEFAULT_KEEP_LAST_TURNS).toBe(1);
  });
});
