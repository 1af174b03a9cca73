import { describe, expect, test } from "bun:test";
import { toolChangesInPlace, toolsKeyDigest, transcriptToolNames } from "./tool-changes.ts";

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
  test("the key's digest: the sorted tools when a change rewrites, constant when it does not", () => {
    expect(toolsKeyDigest(false, ["read", "bash"])).toBe("bash,read");
    expect(toolsKeyDigest(false, ["read", "bash", "late"])).not.toBe(toolsKeyDigest(false, ["read", "bash"]));
    expect(toolsKeyDigest(true, ["read", "bash", "late"])).toBe(toolsKeyDigest(true, ["read", "bash"]));
  });
  test("the tools a transcript declares: Pi's system messages, additions and removals in order", () => {
    const transcript = [
      { role: "system", content: "p", toolsAdded: [{ name: "read" }, { name: "bash" }] },
      { role: "user", content: "go" },
      { role: "system", content: "", toolsAdded: [{ name: "late" }] },
      { role: "system", content: "", toolsRemoved: [{ name: "bash" }] },
    ];
    expect(transcriptToolNames(transcript).sort()).toEqual(["late", "read"]);
    expect(transcriptToolNames([{ role: "user", content: "old recording" }])).toEqual([]);
  });
});
