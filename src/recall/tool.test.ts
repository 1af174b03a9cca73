import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Compile } from "typebox/compile";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CapturedCall } from "../summarize/batch.ts";
import type { ContextMessage } from "../session/messages.ts";
import { type RecallIndex, emptyRecallIndex, recordOriginals } from "./recall-index.ts";
import { createRecallToolDefinition, executeRecall, recallParameters } from "./tool.ts";
import { assistant, call, imageResult, result, text, user } from "../../test/support/message-factory.ts";

function captured(id: string, assistantTs: number, k: number, text: string, toolName = "bash"): CapturedCall {
  return { occurrenceKey: `${id}@${assistantTs}#${k}`, toolCallId: id, toolName, arguments: {}, resultText: text, isError: false, assistantTimestamp: assistantTs, resultTimestamp: assistantTs + 1 };
}

/** Index + branch holding the given originals, as the session would. */
function setup(calls: CapturedCall[]): { store: RecallIndex; branch: ContextMessage[] } {
  const { index } = recordOriginals(emptyRecallIndex(), { calls });
  return { store: index, branch: calls.map((c) => result(c.toolCallId, c.toolName, c.resultText, c.resultTimestamp)) };
}

async function readAllPages(store: RecallIndex, branch: ContextMessage[], ref: string, limit: number): Promise<string[]> {
  const pages: string[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined) {
    const r = await executeRecall({ params: { ref, offset, limit }, store, branchMessages: branch });
    expect(r.isError).toBe(false);
    pages.push(r.text.slice(r.details.bodyStart));
    if (r.details.nextOffset !== undefined && r.details.nextOffset <= offset) throw new Error("paging made no progress");
    offset = r.details.nextOffset;
  }
  return pages;
}

const hasLoneSurrogate = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

describe("executeRecall: verbatim pages", () => {
  test("a huge output comes back exactly across pages, with a byte-accurate header", async () => {
    const original = Array.from({ length: 6000 }, (_, i) => `line ${i}: ✓ ok — 数据 🚀`).join("\n") + "\n\n";
    const { store, branch } = setup([captured("big", 10, 0, original)]);
    const pages = await readAllPages(store, branch, "big@10#0", 20_000);
    expect(pages.join("")).toBe(original);
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(original.length / 20_000));
    const first = await executeRecall({ params: { ref: "big@10#0" }, store, branchMessages: branch });
    const bytesOfFirstPage = Buffer.byteLength(original.slice(0, first.details.end), "utf8");
    const totalBytes = Buffer.byteLength(original, "utf8");
    expect(first.text.split("\n")[0]).toBe(
      `[keeper_recall ref=big@10#0 tool=bash] chars 0-${first.details.end} of ${original.length} (bytes 0-${bytesOfFirstPage} of ${totalBytes}), next offset ${first.details.end}`,
    );
    expect(first.details.source).toBe("session");
  });

  test("property: any unicode text, any page size: pages concatenate to the original, none splits a pair", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", minLength: 1, maxLength: 400 }), fc.integer({ min: 1, max: 50 }), async (original, limit) => {
        const { store, branch } = setup([captured("u", 5, 0, original)]);
        const pages = await readAllPages(store, branch, "u@5#0", limit);
        expect(pages.join("")).toBe(original);
        for (const p of pages) expect(hasLoneSurrogate(p)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  test("a page end inside a surrogate pair moves to the pair's edge", async () => {
    const original = "🚀".repeat(10); // 20 UTF-16 units, 40 bytes
    const { store, branch } = setup([captured("e", 5, 0, original)]);
    // limit 3 would end inside the 2nd pair: each page shrinks to one emoji (2 units)
    expect(await readAllPages(store, branch, "e@5#0", 3)).toEqual(Array(10).fill("🚀"));
    // limit 1 cannot shrink to 0: each page grows to one whole emoji
    expect(await readAllPages(store, branch, "e@5#0", 1)).toEqual(Array(10).fill("🚀"));
  });

  test("an offset inside a surrogate pair snaps back to the pair's start", async () => {
    const original = "ab🚀cd"; // a b \uD83D \uDE80 c d
    const { store, branch } = setup([captured("s", 5, 0, original)]);
    const r = await executeRecall({ params: { ref: "s@5#0", offset: 3, limit: 2 }, store, branchMessages: branch });
    expect(r.text.slice(r.details.bodyStart)).toBe("🚀");
    expect(r.details).toMatchObject({ start: 2, end: 4, startByte: 2, endByte: 6 });
  });

  test("an offset past the end is a clear error", async () => {
    const { store, branch } = setup([captured("s", 5, 0, "short")]);
    const r = await executeRecall({ params: { ref: "s@5#0", offset: 99 }, store, branchMessages: branch });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("past the end");
  });
});

describe("executeRecall: ids, refs, spills", () => {
  const calls = [captured("toolu_dup", 100, 0, "first output"), captured("toolu_dup", 200, 0, "second output"), captured("toolu_solo", 300, 1, "solo output")];
  const { store, branch } = setup(calls);

  test("a repeated provider id is ambiguous: occurrences listed with refs, newest first", async () => {
    const r = await executeRecall({ params: { toolCallId: "toolu_dup" }, store, branchMessages: branch });
    expect(r.isError).toBe(true);
    expect(r.details.status).toBe("ambiguous");
    expect(r.details.candidates).toEqual(["toolu_dup@200#0", "toolu_dup@100#0"]);
    expect(r.text).toContain("occurs 2 times");
    expect(r.text.indexOf("toolu_dup@200#0")).toBeLessThan(r.text.indexOf("toolu_dup@100#0"));
  });

  test("each ref of a repeated id returns its own original", async () => {
    const older = await executeRecall({ params: { ref: "toolu_dup@100#0" }, store, branchMessages: branch });
    const newer = await executeRecall({ params: { ref: "toolu_dup@200#0" }, store, branchMessages: branch });
    expect(older.text.slice(older.details.bodyStart)).toBe("first output");
    expect(newer.text.slice(newer.details.bodyStart)).toBe("second output");
  });

  test("a unique id works without a ref", async () => {
    const r = await executeRecall({ params: { toolCallId: "toolu_solo" }, store, branchMessages: branch });
    expect(r.text.slice(r.details.bodyStart)).toBe("solo output");
  });

  test("an unknown ref is an error listing near matches", async () => {
    const r = await executeRecall({ params: { ref: "toolu_dup@200#1" }, store, branchMessages: branch });
    expect(r.isError).toBe(true);
    expect(r.details.status).toBe("unknown");
    expect(r.text).toContain('No pruned output has ref or tool-call id "toolu_dup@200#1"');
    expect(r.details.candidates?.[0]).toBe("toolu_dup@200#0"); // one edit away
    const far = await executeRecall({ params: { ref: "zzzzzzzzzzzzzzzzzzzzzz" }, store, branchMessages: branch });
    expect(far.details.candidates).toEqual([]);
    expect(far.text).toContain("No near matches among the 3 pruned output(s)");
  });

  test("no ref and no id is an invalid request", async () => {
    const r = await executeRecall({ params: {}, store, branchMessages: branch });
    expect(r.details.status).toBe("invalid");
  });

  test("an original missing from the branch comes from its spill file, verified by hash", async () => {
    const original = "spilled ✓ " + "z".repeat(5000);
    const { index } = recordOriginals(emptyRecallIndex(), {
      calls: [captured("sp", 7, 0, original)],
      spill: { thresholdBytes: 1024, pathFor: (_c, sha) => `/tmp/s.keeper/${sha}.txt` },
    });
    const files = new Map([[index.entries["sp@7#0"].spillPath as string, original]]);
    const readSpill = async (p: string) => {
      const t = files.get(p);
      if (t === undefined) throw new Error("ENOENT");
      return t;
    };
    const r = await executeRecall({ params: { ref: "sp@7#0" }, store: index, branchMessages: [], readSpill });
    expect(r.details.source).toBe("spill");
    expect(r.text.slice(r.details.bodyStart)).toBe(original);

    files.set(index.entries["sp@7#0"].spillPath as string, original + "tampered");
    const bad = await executeRecall({ params: { ref: "sp@7#0" }, store: index, branchMessages: [], readSpill });
    expect(bad.details.status).toBe("unavailable");
    expect(bad.text).toContain("sha256 differs");
    expect(bad.text).toContain("Preview of its start:");
  });

  test("not in the branch and never spilled: unavailable, said plainly", async () => {
    const r = await executeRecall({ params: { ref: "toolu_solo@300#1" }, store, branchMessages: [] });
    expect(r.details.status).toBe("unavailable");
    expect(r.text).toContain("not on the current branch");
  });

  test("same id, same timestamp, different bytes: the hash picks the right message", async () => {
    const twin = [result("toolu_dup", "bash", "not it", 101), ...branch];
    const r = await executeRecall({ params: { ref: "toolu_dup@100#0" }, store, branchMessages: twin });
    expect(r.text.slice(r.details.bodyStart)).toBe("first output");
  });
});

describe("createRecallToolDefinition", () => {
  const calls = [captured("toolu_x", 100, 0, "the original ✓")];
  const { store, branch } = setup(calls);
  const tool = createRecallToolDefinition({ getStore: () => store, getBranchMessages: () => branch });

  test("has Pi's registerTool shape and a valid typebox schema", () => {
    expect(tool.name).toBe("keeper_recall");
    expect(tool.promptSnippet).toContain("keeper_recall");
    const validator = Compile(recallParameters);
    expect(validator.Check({ ref: "a", offset: 0, limit: 10 })).toBe(true);
    expect(validator.Check({ offset: -1 })).toBe(false);
    expect(validator.Check({ limit: 0 })).toBe(false);
  });

  test("execute returns the verbatim text and marks failures as errors", async () => {
    const ctx = {} as ExtensionContext; // the deps above ignore it
    const ok = await tool.execute("call-1", { ref: "toolu_x@100#0" }, undefined, undefined, ctx as never);
    expect(ok.isError).toBe(false);
    expect(ok.content).toHaveLength(1);
    const text = (ok.content[0] as { text: string }).text;
    expect(text.slice(ok.details.bodyStart)).toBe("the original ✓");
    const bad = await tool.execute("call-2", { ref: "nope" }, undefined, undefined, ctx as never);
    expect(bad.isError).toBe(true);
  });
});

describe("executeRecall: a failed call whose arguments were purged", () => {
  const args = { path: "src/a.ts", content: "x".repeat(300) + " ✓ 数据", edits: [{ old: "a", new: "b" }] };
  const branch: ContextMessage[] = [
    user("go", 1),
    assistant([call("w1", "write", args)], 2),
    result("w1", "write", "Error: EACCES", 3, true),
    assistant([text("it failed")], 4),
  ];
  const { index: store } = recordOriginals(emptyRecallIndex(), {
    calls: [{ occurrenceKey: "w1@2#0", toolCallId: "w1", toolName: "write", arguments: args, resultText: "Error: EACCES", isError: true, assistantTimestamp: 2, resultTimestamp: 3 }],
  });

  test("its ref brings back what was purged: the arguments, byte-exact (the result is still in the request)", async () => {
    const r = await executeRecall({ params: { ref: "w1@2#0" }, store, branchMessages: branch, purgedArguments: new Set(["w1@2#0"]) });
    expect(r.isError).toBe(false);
    expect(r.text.slice(r.details.bodyStart)).toBe(JSON.stringify(args));
    expect(r.details.part).toBe("arguments");
    expect(r.text.split("\n")[0]).toStartWith("[keeper_recall ref=w1@2#0 tool=write arguments]");
    // By tool-call id, and with the index lost (the ref alone on the branch): the same.
    const byId = await executeRecall({ params: { toolCallId: "w1" }, store, branchMessages: branch, purgedArguments: new Set(["w1@2#0"]) });
    expect(byId.text.slice(byId.details.bodyStart)).toBe(JSON.stringify(args));
    const noIndex = await executeRecall({ params: { ref: "w1@2#0" }, store: emptyRecallIndex(), branchMessages: branch, purgedArguments: new Set(["w1@2#0"]) });
    expect(noIndex.text.slice(noIndex.details.bodyStart)).toBe(JSON.stringify(args));
  });

  test("when its output is hidden too (not in the set), the ref brings back the output, as every stub's does", async () => {
    const r = await executeRecall({ params: { ref: "w1@2#0" }, store, branchMessages: branch, purgedArguments: new Set() });
    expect(r.text.slice(r.details.bodyStart)).toBe("Error: EACCES");
    expect(r.details.part).toBe("output");
  });

  test("arguments: true brings back the arguments whatever the ref hides (a collapsed chain's failed call), paged and by part", async () => {
    const r = await executeRecall({ params: { ref: "w1@2#0", arguments: true }, store, branchMessages: branch });
    expect(r.isError).toBe(false);
    expect(r.text.slice(r.details.bodyStart)).toBe(JSON.stringify(args));
    expect(r.details.part).toBe("arguments");
    const paged = await executeRecall({ params: { ref: "w1@2#0", arguments: true, offset: 100, limit: 50 }, store, branchMessages: branch });
    expect(paged.text.slice(paged.details.bodyStart)).toBe(JSON.stringify(args).slice(100, 150));
    const byId = await executeRecall({ params: { toolCallId: "w1", arguments: true }, store: emptyRecallIndex(), branchMessages: branch });
    expect(byId.text.slice(byId.details.bodyStart)).toBe(JSON.stringify(args));
    const noIndex = await executeRecall({ params: { ref: "w1@2#0", arguments: true }, store: emptyRecallIndex(), branchMessages: branch });
    expect(noIndex.text.slice(noIndex.details.bodyStart)).toBe(JSON.stringify(args));
    const unknown = await executeRecall({ params: { ref: "nope@1#0", arguments: true }, store, branchMessages: branch });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toContain('No call with ref "nope@1#0"');
  });
});

describe("executeRecall: an output with an image", () => {
  const DATA = Buffer.alloc(600, 3).toString("base64");
  const note = "Read image file [image/png]\n" + "pixel notes\n".repeat(40);
  const branch: ContextMessage[] = [
    user("look", 1),
    assistant([call("img", "read", { path: "c.png" })], 2),
    { ...imageResult("img", "read", "image/png", DATA, 3), content: [{ type: "text", text: note }, { type: "image", data: DATA, mimeType: "image/png" }] } as ContextMessage,
    assistant([text("a chart")], 4),
  ];
  const { index: store } = recordOriginals(emptyRecallIndex(), { calls: [{ ...captured("img", 2, 0, note, "read"), resultTimestamp: 3 }] });
  const image = { type: "image" as const, data: DATA, mimeType: "image/png" };

  test("the image comes back beside the first page and a part, not with later pages; also found by ref alone", async () => {
    const first = await executeRecall({ params: { ref: "img@2#0", limit: 100 }, store, branchMessages: branch });
    expect(first.images).toEqual([image]);
    expect(first.details.images).toBe(1);
    const later = await executeRecall({ params: { ref: "img@2#0", offset: first.details.nextOffset, limit: 100 }, store, branchMessages: branch });
    expect(later.images).toBeUndefined();
    const part = await executeRecall({ params: { ref: "img@2#0", startLine: 1, endLine: 1 }, store, branchMessages: branch });
    expect(part.images).toEqual([image]);
    const noIndex = await executeRecall({ params: { ref: "img@2#0" }, store: emptyRecallIndex(), branchMessages: branch });
    expect(noIndex.images).toEqual([image]);
  });

  test("the tool returns it as an image block after the text", async () => {
    const tool = createRecallToolDefinition({ getStore: () => store, getBranchMessages: () => branch });
    const out = await tool.execute("c1", { ref: "img@2#0" }, undefined, undefined, {} as never);
    expect(out.content.map((b) => b.type)).toEqual(["text", "image"]);
    expect(out.content[1]).toEqual(image);
  });
});
