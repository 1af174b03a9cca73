import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withOverride } from "../settings/overrides.ts";
import { saveOverridesToFile } from "./settings-file-write.ts";

const overrides = withOverride({}, "cache.seam", false);

describe("/keeper save on disk", () => {
  test("creates the folder and file when missing; merges into an existing file; leaves no temporary file", () => {
    const dir = mkdtempSync(join(tmpdir(), "keeper-save-"));
    const fresh = join(dir, "project", ".pi", "settings.json");
    expect(saveOverridesToFile(fresh, overrides)).toEqual({ ok: true, written: ["cache.seam = false"] });
    expect(JSON.parse(readFileSync(fresh, "utf8"))).toEqual({ contextKeeper: { cache: { seam: false } } });
    const existing = join(dir, "settings.json");
    writeFileSync(existing, JSON.stringify({ theme: "dark", contextKeeper: { enabled: true } }));
    expect(saveOverridesToFile(existing, overrides).ok).toBe(true);
    expect(JSON.parse(readFileSync(existing, "utf8"))).toEqual({ theme: "dark", contextKeeper: { enabled: true, cache: { seam: false } } });
    expect(readdirSync(dir).filter((n) => n.includes(".tmp"))).toEqual([]);
  });

  test("an unparsable file or a path that cannot be read is refused and left as it is", () => {
    const dir = mkdtempSync(join(tmpdir(), "keeper-save-"));
    const broken = join(dir, "settings.json");
    writeFileSync(broken, "{ not json");
    const r = saveOverridesToFile(broken, overrides);
    expect(r.ok).toBe(false);
    expect(readFileSync(broken, "utf8")).toBe("{ not json");
    const aDirectory = join(dir, "sub");
    mkdirSync(aDirectory);
    const d = saveOverridesToFile(aDirectory, overrides);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.message).toContain("nothing written");
  });
});
