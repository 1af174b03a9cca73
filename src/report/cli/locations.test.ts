import { describe, expect, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contextWindowLookup, piAiModelDataDir } from "./locations.ts";

describe("pi-ai model data for context windows", () => {
  test("found through pi-ai's resolved entry: a 1M-window model reads 1M, an unknown one 200k", () => {
    expect(piAiModelDataDir()).toMatch(/pi-ai[/\\]dist[/\\]providers[/\\]data$/);
    const lookup = contextWindowLookup();
    expect(lookup({ provider: "anthropic", model: "claude-opus-4-6" })).toBe(1_000_000);
    expect(lookup({ provider: "anthropic", model: "no-such-model" })).toBe(200_000);
    expect(contextWindowLookup(join(tmpdir(), "keeper-no-such-dir"))({ provider: "anthropic", model: "claude-opus-4-6" })).toBe(200_000);
  });
});
