import { describe, expect, test } from "bun:test";
import { DIGEST_HEADING } from "./catch-up.ts";
import { LATE_DIGEST_HEADING, lateDigestCompaction, upgradedSummary } from "./late-digest.ts";
import type { AgentMessage } from "./primitives.ts";

const user = (text: string) => ({ role: "user", content: text, timestamp: 1 }) as unknown as AgentMessage;
const callRead = (path: string) => ({ role: "assistant", content: [{ type: "toolCall", id: "c", name: "read", arguments: { path } }], timestamp: 2 }) as unknown as AgentMessage;
const ops = (read: string[], edited: string[] = []) => ({ read: new Set(read), written: new Set<string>(), edited: new Set(edited) });

describe("lateDigestCompaction", () => {
  test("the previous summary, then a digest of what Pi would summarize, then Pi's file tags; Pi's cut", () => {
    const d = lateDigestCompaction({
      firstKeptEntryId: "k1",
      messagesToSummarize: [user("fix the parser"), callRead("src/p.ts")],
      turnPrefixMessages: [user("and the lexer")],
      previousSummary: "Earlier: set up the repo.",
      fileOps: ops(["src/p.ts", "src/l.ts"], ["src/l.ts"]),
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
    const d = lateDigestCompaction({ firstKeptEntryId: "k", messagesToSummarize: [user(task)], turnPrefixMessages: [], previousSummary: undefined, fileOps: ops([]) });
    const line = d.summary.split("\n").find((l) => l.startsWith("- user: "))!;
    expect(task.trim().length).toBeGreaterThan(1_000);
    expect(line).toBe(`- user: ${task.trim()}`);
  });

  test("no previous summary, nothing to digest: still a summary Pi accepts (non-empty)", () => {
    const d = lateDigestCompaction({ firstKeptEntryId: "k", messagesToSummarize: [], turnPrefixMessages: [], previousSummary: undefined, fileOps: ops([]) });
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
