import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spillPathFor, writeSpillFile } from "./spill-files.ts";

const root = mkdtempSync(join(tmpdir(), "keeper-spill-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("spill files on disk", () => {
  test("a spill is written whole, once, under <session>.jsonl.keeper/, with no temporary file left", async () => {
    const session = join(root, "ok.jsonl");
    const path = spillPathFor(session, "a".repeat(64));
    await writeSpillFile(path, "verbatim ✓");
    await writeSpillFile(path, "ignored: the content is its own name");
    expect(readFileSync(path, "utf8")).toBe("verbatim ✓");
    expect(readdirSync(`${session}.keeper`)).toEqual([`${"a".repeat(64)}.txt`]);
  });

  test("a regular file where the spill folder should be: the write rejects with the cause (the flush reports it)", async () => {
    const session = join(root, "blocked.jsonl");
    writeFileSync(`${session}.keeper`, "not a folder");
    await expect(writeSpillFile(spillPathFor(session, "b".repeat(64)), "text")).rejects.toThrow(/EEXIST|ENOTDIR/);
    expect(readFileSync(`${session}.keeper`, "utf8")).toBe("not a folder");
  });
});
