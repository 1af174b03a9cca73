import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { replaySession } from "./replay.ts";
import { parseSessionText } from "./session-file.ts";

const dir = mkdtempSync(join(tmpdir(), "keeper-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const usage = (input: number, cacheRead: number, cacheWrite: number) => ({ input, output: 5, cacheRead, cacheWrite, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const line = (o: unknown) => JSON.stringify(o);
const header = line({ type: "session", version: 3, id: "s1", timestamp: "2025-01-01T00:00:00Z", cwd: "/p" });
const msg = (id: string, parentId: string | null, message: unknown) => line({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:00Z", message });
const u1 = msg("u1", null, { role: "user", content: "first question", timestamp: 1000 });
const a1 = msg("a1", "u1", { role: "assistant", content: [{ type: "text", text: "answer" }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(3, 0, 1700), stopReason: "stop", timestamp: 2000 });
const u2 = msg("u2", "a1", { role: "user", content: "second", timestamp: 3000 });
const a2 = msg("a2", "u2", { role: "assistant", content: [{ type: "text", text: "again" }], api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage: usage(3, 1700, 20), stopReason: "stop", timestamp: 4000 });

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe("malformed session files", () => {
  test("truncated last line: named by file and line, the rest replays", () => {
    const file = write("truncated.jsonl", [header, u1, a1, u2, a2.slice(0, 40)].join("\n"));
    const r = replaySession({ file });
    expect(r.diagnostics).toEqual([{ file, line: 5, message: "not valid JSON (truncated last line?); skipped" }]);
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0].line).toBe(3);
  });

  test("two complete records glued on one line (a lost line break): both read, said once", () => {
    const file = write("glued.jsonl", [header, u1, a1 + u2, a2].join("\n"));
    const r = replaySession({ file });
    expect(r.diagnostics).toEqual([{ file, line: 3, message: "2 JSON records on one line (a missing line break); all read" }]);
    expect(r.requests).toHaveLength(2);
    expect(r.requests.map((q) => q.body.messages.length)).toEqual([1, 3]);
  });

  test("glued records whose braces and quotes sit inside strings still split where the records end", () => {
    const tricky = msg("u2", "a1", { role: "user", content: 'a "quoted} {brace" and \\ backslash \\"}{', timestamp: 3000 });
    const parsed = parseSessionText([header, u1, a1 + "  " + tricky, a2].join("\n"), "f");
    expect(parsed.entries.map((e) => e.id)).toEqual(["s1", "u1", "a1", "u2", "a2"]);
    expect(parsed.entries[3]!.message).toMatchObject({ content: 'a "quoted} {brace" and \\ backslash \\"}{' });
    expect(parsed.lineOf).toEqual([1, 2, 3, 3, 4]);
  });

  test("a complete record glued to a truncated last one: the complete one read, the truncation still named", () => {
    const file = write("glued-truncated.jsonl", [header, u1, a1, u2 + a2.slice(0, 50)].join("\n"));
    const r = replaySession({ file });
    expect(r.diagnostics).toEqual([{ file, line: 4, message: "1 complete JSON record read; the rest of the line is not valid JSON (truncated last line?), skipped" }]);
    expect(r.requests).toHaveLength(1);
  });

  test("a truncated record with a complete one appended to the same line: the complete one read", () => {
    const file = write("truncated-then-more.jsonl", [header, u1, a1.slice(0, 60) + u2, a2].join("\n"));
    const r = replaySession({ file });
    // a1 is lost, so u2's parent is missing: the second request cannot be rebuilt (and says so).
    expect(r.diagnostics.map((d) => [d.line, d.message])).toEqual([
      [3, "a truncated record followed by 1 complete one on one line: the truncated part skipped, the rest read"],
      [4, '1 recorded request descends from entry "a1", which is not in the file (unreadable line?); context cannot be rebuilt, skipped'],
    ]);
    expect(parseSessionText([header, u1, a1.slice(0, 60) + u2, a2].join("\n"), "f").entries.map((e) => e.id)).toEqual(["s1", "u1", "u2", "a2"]);
  });

  test("unknown entry type: reported, kept in the chain, both requests replay", () => {
    const odd = line({ type: "telemetry_blob", id: "t1", parentId: "a1", timestamp: "x" });
    const u2b = msg("u2", "t1", { role: "user", content: "second", timestamp: 3000 });
    const file = write("unknown.jsonl", [header, u1, a1, odd, u2b, a2].join("\n"));
    const r = replaySession({ file });
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ file, line: 4 });
    expect(r.diagnostics[0].message).toContain('unknown entry type "telemetry_blob"');
    expect(r.requests.map((q) => q.body.messages.length)).toEqual([1, 3]);
  });

  test("a bad line in the middle of a v3 file does not throw", () => {
    const file = write("middle.jsonl", [header, u1, "{not json", a1, u2, a2].join("\n"));
    const r = replaySession({ file });
    expect(r.diagnostics.map((d) => [d.line, d.message])).toEqual([[3, "not valid JSON; skipped"]]);
    expect(r.requests).toHaveLength(2);
  });

  test("non-JSONL file: clear whole-file message, nothing replayed", () => {
    const file = write("notes.md", "# Notes\n\nsome prose\nmore prose\n");
    const r = replaySession({ file });
    expect(r.requests).toEqual([]);
    expect(r.diagnostics.map((d) => d.line)).toEqual([1, 3, 4, 0]);
    expect(r.diagnostics.at(-1)?.message).toContain("not a Pi session JSONL file");
    expect(r.calibration.total_error).toBe(0);
  });

  test("missing file is a diagnostic, not an exception", () => {
    const file = join(dir, "absent.jsonl");
    const r = replaySession({ file });
    expect(r.diagnostics[0]).toMatchObject({ file, line: 0 });
    expect(r.diagnostics[0].message).toContain("cannot read file");
  });

  test("JSON that is not an object, or has no type", () => {
    const p = parseSessionText([header, "[1,2]", '{"id":"x"}', u1].join("\n"), "f.jsonl");
    expect(p.diagnostics.map((d) => [d.line, d.message])).toEqual([
      [2, "not a JSON object; skipped"],
      [3, "entry has no string `type`; skipped"],
    ]);
    expect(p.entries).toHaveLength(2);
    expect(p.lineOf).toEqual([1, 4]);
  });

  test("a long garbage file lists the first 20 bad lines and counts the rest", () => {
    const p = parseSessionText(Array.from({ length: 30 }, (_, i) => `garbage ${i}`).join("\n"), "g.txt");
    expect(p.diagnostics).toHaveLength(22); // 20 lines + "10 more" + "no entries"
    expect(p.diagnostics[20].message).toBe("10 more bad lines not listed");
  });
});
