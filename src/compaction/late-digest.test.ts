import { describe, expect, test } from "bun:test";
import { DIGEST_HEADING } from "./catch-up.ts";
import { LATE_DIGEST_HEADING, lateDigestCompaction, lateDigestMaxChars, upgradedSummary } from "./late-digest.ts";
import type { AgentMessage } from "./primitives.ts";

const user = (text: string) => ({ role: "user", content: text, timestamp: 1 }) as unknown as AgentMessage;
const callRead = (path: string) => ({ role: "assistant", content: [{ type: "toolCall", id: "c", name: "read", arguments: { path } }], timestamp: 2 }) as unknown as AgentMessage;
const SETTINGS = { reserveTokens: 16_384 };
const ops = (read: string[], edited: string[] = []) => ({ read: new Set(read), written: new Set<string>(), edited: new Set(edited) });

describe("lateDigestCompaction", () => {
  test("the previous summary, then a digest of what Pi would summarize, then Pi's file tags; Pi's cut", () => {
    const d = lateDigestCompaction({
      firstKeptEntryId: "k1",
      messagesToSummarize: [user("fix the parser"), callRead("src/p.ts")],
      turnPrefixMessages: [user("and the lexer")],
      previousSummary: "Earlier: set up the repo.",
      fileOps: ops(["src/p.ts", "src/l.ts"], ["src/l.ts"]),
      settings: SETTINGS,
    });
    expect(d.firstKeptEntryId).toBe("k1");
    expect(d.summary).toBe(
      [
        "Earlier: set up the repo.",
        "---",
        LATE_DIGEST_HEADING,
        "- user: fix the parser\n- called read(path: src/p.ts)\n- user: and the lexer",
        "<read-files>\nsrc/p.ts\n</read-files>",
        "<modified-files>\nsrc/l.ts\n</modified-files>",
      ].join("\n\n"),
    );
    expect(d.details).toEqual({ readFiles: ["src/p.ts"], modifiedFiles: ["src/l.ts"] });
  });

  test("the user's messages (where the task is stated) are kept up to 2,000 characters, not the catch-up's 300", () => {
    const task = `Refactor the parser: ${"keep the grammar intact and ".repeat(40)}`;
    const d = lateDigestCompaction({ firstKeptEntryId: "k", messagesToSummarize: [user(task)], turnPrefixMessages: [], previousSummary: undefined, fileOps: ops([]), settings: SETTINGS });
    const line = d.summary.split("\n").find((l) => l.startsWith("- user: "))!;
    expect(task.trim().length).toBeGreaterThan(1_000);
    expect(line).toBe(`- user: ${task.trim()}`);
  });

  test("never larger than Pi's own summary may be (0.8 × reserve tokens at 4 characters): the newest lines and the task kept", () => {
    const settings = { reserveTokens: 5_000 }; // 16,000 characters
    const max = lateDigestMaxChars(settings.reserveTokens);
    const many = [user("the task: port the build to bun"), ...Array.from({ length: 390 }, (_, i) => callRead(`src/module-${i}/${"deep/".repeat(12)}file.ts`))];
    const d = lateDigestCompaction({ firstKeptEntryId: "k", messagesToSummarize: many, turnPrefixMessages: [], previousSummary: "P".repeat(3_000), fileOps: ops([]), settings });
    const body = d.summary.slice(0, d.summary.indexOf("\n\n<read-files>") >= 0 ? d.summary.indexOf("\n\n<read-files>") : undefined);
    expect(body.length).toBeLessThanOrEqual(max + LATE_DIGEST_HEADING.length + 8);
    expect(body).toContain("- user: the task: port the build to bun");
    expect(body).toMatch(/- \(\d+ earlier lines of the digest left out\)/);
    expect(body).toContain("module-389/");
    expect(body).not.toContain("module-0/");
  });

  test("late digests in a row do not grow: an over-long previous summary keeps its head", () => {
    const settings = { reserveTokens: 5_000 };
    const max = lateDigestMaxChars(settings.reserveTokens);
    let previous: string | undefined;
    for (let round = 0; round < 6; round++) {
      const msgs = Array.from({ length: 200 }, (_, i) => callRead(`r${round}/f${i}-${"x".repeat(60)}.ts`));
      previous = lateDigestCompaction({ firstKeptEntryId: "k", messagesToSummarize: msgs, turnPrefixMessages: [], previousSummary: previous, fileOps: ops([]), settings }).summary;
      expect(previous.length).toBeLessThanOrEqual(max + LATE_DIGEST_HEADING.length + 8);
    }
    expect(previous).toContain("characters of earlier digests left out");
  });

  test("no previous summary, nothing to digest: still a summary Pi accepts (non-empty)", () => {
    const d = lateDigestCompaction({ firstKeptEntryId: "k", messagesToSummarize: [], turnPrefixMessages: [], previousSummary: undefined, fileOps: ops([]), settings: SETTINGS });
    expect(d.summary.startsWith(LATE_DIGEST_HEADING)).toBe(true);
    expect(d.summary.trim().length).toBeGreaterThan(LATE_DIGEST_HEADING.length);
  });
});

describe("upgradedSummary", () => {
  test("the late summary caught up to the digest's cut: the gap digested after it, its file tags extended", () => {
    const result = { summary: "Model summary.\n\n<read-files>\na.ts\n</read-files>", firstKeptEntryId: "job-cut", tokensBefore: 1, details: { readFiles: ["a.ts"], modifiedFiles: [] } };
    const up = upgradedSummary(result, { cutEntryId: "pi-cut", gap: [callRead("b.ts")] });
    expect(up).toBe(`Model summary.\n\n---\n\n${DIGEST_HEADING}\n\n- called read(path: b.ts)\n\n<read-files>\na.ts\nb.ts\n</read-files>`);
    expect(upgradedSummary(result, { cutEntryId: "job-cut", gap: [] })).toBe(result.summary);
  });
});
