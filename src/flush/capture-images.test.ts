/**
 * A tool result with an image: captured with what the image is (type, size) but not its data,
 * never trivial (an image weighs what the estimator charges for it); the extractive summary
 * says the image was left out and how to get it back, never the length of Pi's note as the
 * output; a collapsed chain's call line says so too; fidelity counts that note as a fact.
 * The e2e twin is test/e2e/recall-image.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { captureBatches } from "./capture.ts";
import { proposeChains } from "./plan-chains.ts";
import { pairToolCalls } from "../prune/occurrence.ts";
import { protectionMatcher } from "../prune/protection.ts";
import { emptyState, type SummaryRecord } from "../state/schema.ts";
import type { ContextMessage } from "../session/messages.ts";
import { imageNote, resultWeight } from "../summarize/batch.ts";
import { extractiveSummaryText, summarizeExtractively } from "../summarize/extractive.ts";
import { findMissingFacts } from "../summarize/fidelity.ts";
import { appendMissingFacts } from "../summarize/summary-prompt.ts";
import { assistant, call, imageResult, text, user } from "../../test/support/message-factory.ts";
import { flushConfig } from "../../test/support/flush/session.ts";

const DATA = Buffer.alloc(3000, 7).toString("base64");
const messages: ContextMessage[] = [user("look", 1), assistant([call("i", "read", { path: "chart.png" })], 2), imageResult("i", "read", "image/png", DATA, 3), assistant([text("a chart")], 4)];

describe("a read of a picture", () => {
  test("captured with its image's type and size, not trivial, its summary shorter than what it replaces", () => {
    const r = captureBatches({ branchMessages: messages, state: emptyState(), config: flushConfig });
    expect(r.skipped).toEqual([]);
    const [captured] = r.batches[0]!.calls;
    expect(captured!.images).toEqual([{ mimeType: "image/png", bytes: 3000 }]);
    expect(resultWeight(captured!)).toBeGreaterThan(flushConfig.minBatchChars);
    const summary = summarizeExtractively(r.batches[0]!);
    expect(summary.source).toBe("extractive");
    expect(summary.text).toContain("status: ok · 1 image left out (image/png, 2.9 KB): keeper_recall of this ref returns it");
    expect(summary.text).not.toContain("27 bytes");
  });

  test("a model summary that drops the image note gets it back from the fidelity repair", () => {
    const batch = captureBatches({ branchMessages: messages, state: emptyState(), config: flushConfig }).batches[0]!;
    const note = imageNote(batch.calls[0]!.images)!;
    expect(findMissingFacts(batch, extractiveSummaryText(batch)).images).toEqual([]);
    const missing = findMissingFacts(batch, "Read a chart.");
    expect(missing.images).toEqual([note]);
    expect(appendMissingFacts("Read a chart.", missing)).toContain(`images:\n  ${note}`);
  });

  test("a collapsed chain's call line says the image was left out; unsummarized, the image holds its chain back", () => {
    const config = { ...flushConfig, chainCompression: { enabled: true, rollingWindow: 0 } };
    const input = { messages, pairing: pairToolCalls(messages), summaries: {}, aliases: {}, existingChainKeys: new Set<string>(), config, protection: protectionMatcher(config) };
    // Not summarized, the image alone weighs more than a trivial batch: the chain waits for its summary.
    expect(proposeChains(input)).toEqual([]);
    const record: SummaryRecord = { version: 1, batchKey: "batch:i@2", summary: { batchKey: "batch:i@2", text: "a chart", source: "extractive", inputTokens: 0, outputTokens: 0, cost: 0 }, coveredKeys: ["i@2#0"], outputHashes: {}, flushSeq: 1 };
    const [chain] = proposeChains({ ...input, summaries: { "batch:i@2": record } });
    expect(chain!.text.split("\n")[1]).toBe("- read(path=chart.png) → 1 image left out (image/png, 2.9 KB): keeper_recall of this ref returns it ref=i@2#0");
  });
});
