import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { CapturedCall } from "../summarize/batch.ts";
import { sha256Hex } from "../summarize/text-measure.ts";
import { emptyRecallIndex, occurrencesOf, recallIndexSchema, recordOriginals, withoutFailedSpills, writeSpills } from "./recall-index.ts";

function captured(id: string, assistantTs: number, k: number, text: string, toolName = "bash"): CapturedCall {
  return { occurrenceKey: `${id}@${assistantTs}#${k}`, toolCallId: id, toolName, arguments: {}, resultText: text, isError: false, assistantTimestamp: assistantTs, resultTimestamp: assistantTs + 1 };
}

describe("recall index", () => {
  test("zod schema round-trips every field (property)", () => {
    const entry = fc.record(
      {
        // Occurrence keys have the form toolCallId@timestamp#n (src/prune/occurrence.ts): never a bare
        // "__proto__", which a plain-object record cannot hold as data.
        occurrenceKey: fc.tuple(fc.string(), fc.integer(), fc.nat(9)).map(([id, ts, n]) => `${id}@${ts}#${n}`),
        toolCallId: fc.string(),
        toolName: fc.string(),
        entryId: fc.string(),
        timestamp: fc.integer(),
        assistantTimestamp: fc.integer(),
        isError: fc.boolean(),
        bytes: fc.nat(),
        chars: fc.nat(),
        sha256: fc.stringMatching(/^[0-9a-f]{64}$/),
        spillPath: fc.string(),
        preview: fc.string({ unit: "grapheme" }),
      },
      { requiredKeys: ["occurrenceKey", "toolCallId", "toolName", "timestamp", "assistantTimestamp", "isError", "bytes", "chars", "sha256"] },
    );
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 5 }), (entries) => {
        const index = { version: 1 as const, entries: Object.fromEntries(entries.map((e) => [e.occurrenceKey, e])) };
        const back = recallIndexSchema.parse(JSON.parse(JSON.stringify(index)));
        expect(back).toEqual(index);
        // every key of every entry survives, none is dropped by a whitelist
        for (const [k, e] of Object.entries(index.entries)) expect(Object.keys(back.entries[k]).sort()).toEqual(Object.keys(e).sort());
      }),
    );
  });

  test("the schema rejects a malformed hash", () => {
    const bad = { version: 1, entries: { a: { occurrenceKey: "a", toolCallId: "a", toolName: "x", timestamp: 1, assistantTimestamp: 1, isError: false, bytes: 1, chars: 1, sha256: "nope" } } };
    expect(recallIndexSchema.safeParse(bad).success).toBe(false);
  });

  test("records size and hash, and is idempotent", () => {
    const text = "héllo 🚀\n";
    const { index } = recordOriginals(emptyRecallIndex(), { calls: [captured("t1", 100, 0, text)], entryIdOf: () => "e42" });
    const entry = index.entries["t1@100#0"];
    // h(1) é(2) l l o(3) space(1) 🚀(4) \n(1) = 12 bytes; 9 UTF-16 units (🚀 is a pair)
    expect(entry).toMatchObject({ bytes: 12, chars: 9, sha256: sha256Hex(text), entryId: "e42", timestamp: 101, toolName: "bash" });
    expect(entry.spillPath).toBeUndefined();
    const again = recordOriginals(index, { calls: [captured("t1", 100, 0, "changed")] });
    expect(again.index.entries["t1@100#0"].sha256).toBe(sha256Hex(text));
  });

  test("spills originals at or above the threshold, to the injected path, with a preview", () => {
    const big = "x".repeat(1000);
    const small = "y".repeat(999);
    const { index, spills } = recordOriginals(emptyRecallIndex(), {
      calls: [captured("a", 1, 0, big), captured("b", 2, 0, small), captured("c", 3, 0, big)],
      spill: { thresholdBytes: 1000, pathFor: (_c, sha) => `/sessions/s1.keeper/${sha}.txt`, previewChars: 10 },
    });
    expect(index.entries["a@1#0"].spillPath).toBe(`/sessions/s1.keeper/${sha256Hex(big)}.txt`);
    expect(index.entries["a@1#0"].preview).toBe("x".repeat(10));
    expect(index.entries["b@2#0"].spillPath).toBeUndefined();
    expect(spills).toEqual([{ path: `/sessions/s1.keeper/${sha256Hex(big)}.txt`, text: big }]); // a and c share one file
  });

  test("writeSpills hands each write to the injected writer", async () => {
    const written: [string, string][] = [];
    await writeSpills([{ path: "/p1", text: "one" }, { path: "/p2", text: "two" }], async (p, t) => {
      written.push([p, t]);
    });
    expect(written).toEqual([["/p1", "one"], ["/p2", "two"]]);
  });

  test("a failed spill write is reported, not thrown, and the other writes still happen", async () => {
    const written: string[] = [];
    const outcome = await writeSpills([{ path: "/p1", text: "one" }, { path: "/full", text: "two" }, { path: "/p3", text: "three" }], async (p) => {
      if (p === "/full") throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      written.push(p);
    });
    expect(written).toEqual(["/p1", "/p3"]);
    expect(outcome.written).toEqual(["/p1", "/p3"]);
    expect(outcome.failed).toEqual([{ path: "/full", error: "ENOSPC: no space left on device, write" }]);
  });

  test("entries whose spill failed keep their session-backed fields and lose only the spill", () => {
    const big = "x".repeat(100);
    const { index, spills } = recordOriginals(emptyRecallIndex(), {
      calls: [captured("a", 1, 0, big), captured("b", 2, 0, "y".repeat(100)), captured("c", 3, 0, "small")],
      spill: { thresholdBytes: 50, pathFor: (_c, sha) => `/spill/${sha}.txt` },
    });
    expect(spills).toHaveLength(2);
    const failedPath = index.entries["a@1#0"].spillPath!;
    const after = withoutFailedSpills(index, [{ path: failedPath, error: "EACCES" }]);
    const { spillPath: _s, preview: _p, ...sessionBacked } = index.entries["a@1#0"];
    expect(after.entries["a@1#0"]).toEqual(sessionBacked);
    expect(after.entries["b@2#0"]).toEqual(index.entries["b@2#0"]);
    expect(after.entries["c@3#0"]).toEqual(index.entries["c@3#0"]);
    expect(recallIndexSchema.parse(after)).toEqual(after);
    // nothing failed: the very same index
    expect(withoutFailedSpills(index, [])).toBe(index);
  });

  test("occurrences of a repeated provider id come newest first", () => {
    const { index } = recordOriginals(emptyRecallIndex(), {
      calls: [captured("dup", 100, 0, "first"), captured("dup", 300, 0, "third"), captured("dup", 200, 1, "second"), captured("other", 400, 0, "x")],
    });
    expect(occurrencesOf(index, "dup").map((e) => e.occurrenceKey)).toEqual(["dup@300#0", "dup@200#1", "dup@100#0"]);
  });
});
