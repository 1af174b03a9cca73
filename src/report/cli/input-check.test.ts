import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probeFileSystem } from "./file-probe.ts";
import { readErrorReason, unreadableInputs, type FileProbe } from "./input-check.ts";

const tmp = mkdtempSync(join(tmpdir(), "keeper-input-check-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("unreadableInputs", () => {
  test("one plain line per bad file, in argument order; none for good files", () => {
    const probe: FileProbe = (p) => (p === "gone.jsonl" ? { ok: false, code: "ENOENT" } : p === "locked.jsonl" ? { ok: false, code: "EACCES" } : { ok: true });
    expect(unreadableInputs(["a.jsonl", "gone.jsonl", "locked.jsonl"], probe)).toEqual([
      "cannot read gone.jsonl: no such file",
      "cannot read locked.jsonl: permission denied",
    ]);
    expect(unreadableInputs(["a.jsonl"], probe)).toEqual([]);
  });

  test("an unknown error code is named rather than hidden", () => {
    expect(readErrorReason("EIO")).toBe("cannot be read (EIO)");
  });
});

describe("probeFileSystem", () => {
  test("a readable file, a missing one, a directory", () => {
    const file = join(tmp, "s.jsonl");
    writeFileSync(file, "{}\n");
    expect(probeFileSystem(file)).toEqual({ ok: true });
    expect(probeFileSystem(join(tmp, "missing.jsonl"))).toEqual({ ok: false, code: "ENOENT" });
    const dir = probeFileSystem(tmp);
    expect(dir.ok).toBe(false);
    expect(unreadableInputs([tmp], probeFileSystem)[0]).toMatch(/directory/);
  });
});
