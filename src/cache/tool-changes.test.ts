import { describe, expect, test } from "bun:test";
import { toolChangesInPlace, toolsKeyDigest } from "./tool-changes.ts";

describe("tool changes and the cache key", () => {
  test("Anthropic: in place only with mid-conversation system messages and tool changes (Pi's native tool_addition blocks)", () => {
    expect(toolChangesInPlace({ api: "anthropic-messages", compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true } })).toBe(true);
    // Section patches in place, but the tool list is sent whole: a change rewrites.
    expect(toolChangesInPlace({ api: "anthropic-messages", compat: { supportsMidConvoSystemMessages: true } })).toBe(false);
    expect(toolChangesInPlace({ api: "anthropic-messages", compat: { supportsMidConvoToolChanges: true } })).toBe(false);
    expect(toolChangesInPlace({ api: "anthropic-messages" })).toBe(false);
  });
  test("OpenAI: Responses and Codex with additional_tools items, Chat Completions with mid-conversation additions", () => {
    for (const api of ["openai-responses", "openai-codex-responses", "azure-openai-responses"]) {
      expect(toolChangesInPlace({ api, compat: { supportsMidConvoSystemMessages: true, supportsAdditionalTools: true } })).toBe(true);
      expect(toolChangesInPlace({ api, compat: { supportsMidConvoSystemMessages: true } })).toBe(false);
    }
    expect(toolChangesInPlace({ api: "openai-completions", compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolAdditions: true } })).toBe(true);
    expect(toolChangesInPlace({ api: "openai-completions", compat: { supportsMidConvoSystemMessages: true } })).toBe(false);
    expect(toolChangesInPlace({ api: "google-generative-ai", compat: { supportsMidConvoSystemMessages: true, supportsAdditionalTools: true } })).toBe(false);
    expect(toolChangesInPlace(undefined)).toBe(false);
  });
  test("the key's digest: the sorted active tools when a change rewrites, constant when it does not", () => {
    const folded = { api: "anthropic-messages" };
    const inPlace = { api: "anthropic-messages", compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true } };
    expect(toolsKeyDigest(folded, ["read", "bash"])).toBe("bash,read");
    expect(toolsKeyDigest(folded, ["read", "bash", "late"])).not.toBe(toolsKeyDigest(folded, ["read", "bash"]));
    expect(toolsKeyDigest(inPlace, ["read", "bash", "late"])).toBe(toolsKeyDigest(inPlace, ["read", "bash"]));
  });
});
