/**
 * The replay keys the cache on the tools the recorded transcript declares, as the live host keys
 * it on Pi's active tools: a tool change is a lost cache only on models where it rewrites the
 * prefix (src/cache/tool-changes.ts).
 */
import { describe, expect, test } from "bun:test";
import { costModelFor } from "../cache/cost-model.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { keeperReplayConfig } from "./keeper-config.ts";
import { initialKeeperReplayState, replayCacheFacts, stepKeeperSeam } from "./keeper-engine.ts";

const REF = { provider: "anthropic", api: "anthropic-messages", model: "claude-opus-4-8" };
const FOLDED = costModelFor({ ref: REF });
const IN_PLACE = costModelFor({ ref: REF, compat: { supportsMidConvoSystemMessages: true, supportsMidConvoToolChanges: true } });
const lead = { role: "system", content: "p", toolsAdded: [{ name: "read" }], timestamp: 1 } as unknown as ContextMessage;
const late = { role: "system", content: "", toolsAdded: [{ name: "late" }], timestamp: 3 } as unknown as ContextMessage;
const user = { role: "user", content: "go", timestamp: 2 } as unknown as ContextMessage;

function coldAfterToolChange(costModel: typeof FOLDED): boolean {
  const info = (at: number) => ({ timestamp: at, provider: "anthropic", api: REF.api, model: REF.model, costModel });
  const config = keeperReplayConfig(DEFAULT_SETTINGS);
  // The first request goes out (its key read off its transcript, as the replay sends it) ...
  const state = { ...initialKeeperReplayState(), lastContext: [lead, user] };
  const sent = stepKeeperSeam(state, { messages: [{ role: "user", content: "go" }] }, info(1_000), { config }).state;
  // ... then the next one declares a tool more.
  return replayCacheFacts(sent, { messages: [lead, user, late], requestIndex: 1, info: info(2_000) }, 200_000).cold;
}

describe("the replay's cache key and tool changes", () => {
  test("a model that carries the tool list at its head: the cache is lost at the change", () => {
    expect(FOLDED.toolChangesInPlace).toBeUndefined();
    expect(coldAfterToolChange(FOLDED)).toBe(true);
  });
  test("a model that takes tool changes in place: still warm", () => {
    expect(IN_PLACE.toolChangesInPlace).toBe(true);
    expect(coldAfterToolChange(IN_PLACE)).toBe(false);
  });
});
