import { describe, expect, test } from "bun:test";
import { reasoningBoundToPrefix } from "./reasoning-binding.ts";

describe("reasoning bound to its prefix", () => {
  test("Anthropic: the managed-effort models pi-ai sends block_binding drop_block for", () => {
    expect(reasoningBoundToPrefix({ api: "anthropic-messages", id: "claude-opus-5", compat: { supportsMidConvoEffort: true } })).toBe(true);
    expect(reasoningBoundToPrefix({ api: "anthropic-messages", id: "claude-opus-4-8", compat: { supportsMidConvoSystemMessages: true } })).toBe(false);
    expect(reasoningBoundToPrefix({ api: "anthropic-messages", id: "claude-sonnet-4-5" })).toBe(false);
  });
  test("OpenAI Responses and Codex: GPT-6.2 and later", () => {
    for (const api of ["openai-responses", "openai-codex-responses", "azure-openai-responses"]) {
      expect(reasoningBoundToPrefix({ api, id: "gpt-6.2-sol" })).toBe(true);
      expect(reasoningBoundToPrefix({ api, id: "gpt-7" })).toBe(true);
      expect(reasoningBoundToPrefix({ api, id: "gpt-6.1-terra" })).toBe(false);
      expect(reasoningBoundToPrefix({ api, id: "gpt-5.6-terra" })).toBe(false);
      expect(reasoningBoundToPrefix({ api, id: "o3" })).toBe(false);
    }
    expect(reasoningBoundToPrefix({ api: "openai-completions", id: "gpt-6.2-sol" })).toBe(false);
    expect(reasoningBoundToPrefix(undefined)).toBe(false);
  });
});
