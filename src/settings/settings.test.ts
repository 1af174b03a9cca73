import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { DEFAULT_SETTINGS, formatDiagnostic, parseKeeperSection } from "./parse.ts";
import { loadKeeperSettings } from "./load.ts";

const readIfExists = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : undefined);

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "keeper-settings-"));
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("settings defaults", () => {
  test("every field has a default and the extension is on by default", () => {
    expect(DEFAULT_SETTINGS.enabled).toBe(true);
    expect(DEFAULT_SETTINGS.thinkingStrip.mode).toBe("auto");
    expect(DEFAULT_SETTINGS.thinkingStrip.keepLastTurns).toBe(1);
    expect(DEFAULT_SETTINGS.pruning.chainCompression.rollingWindow).toBe(0);
    expect(DEFAULT_SETTINGS.summarizer.model).toBe("");
  });

  test("no settings files gives the defaults and no diagnostics", () => {
    const loaded = loadKeeperSettings({ files: ["/nonexistent/a.json"], read: readIfExists });
    expect(loaded.settings).toEqual(DEFAULT_SETTINGS);
    expect(loaded.diagnostics).toEqual([]);
  });
});

describe("bad input falls back per key, names key and value, leaves the file untouched", () => {
  test("wrong type", () => {
    const text = JSON.stringify({ theme: "dark", contextKeeper: { enabled: "yes", statusLine: false } }, null, 2);
    const path = tempFile("settings.json", text);
    const loaded = loadKeeperSettings({ files: [path], read: readIfExists });
    expect(loaded.settings.enabled).toBe(true); // default for that key
    expect(loaded.settings.statusLine).toBe(false); // valid sibling kept
    expect(loaded.diagnostics).toHaveLength(1);
    const line = formatDiagnostic(loaded.diagnostics[0]!);
    expect(line).toContain("contextKeeper.enabled");
    expect(line).toContain('"yes"');
    expect(line).toContain(path);
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  test("unknown enum value", () => {
    const text = JSON.stringify({ contextKeeper: { thinkingStrip: { mode: "sometimes", keepLastTurns: 8 } } });
    const path = tempFile("settings.json", text);
    const loaded = loadKeeperSettings({ files: [path], read: readIfExists });
    expect(loaded.settings.thinkingStrip.mode).toBe("auto");
    expect(loaded.settings.thinkingStrip.keepLastTurns).toBe(8);
    expect(loaded.diagnostics).toHaveLength(1);
    expect(loaded.diagnostics[0]!.key).toBe("thinkingStrip.mode");
    expect(loaded.diagnostics[0]!.value).toBe('"sometimes"');
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  test("unparsable JSON: one diagnostic naming the file, defaults used, file untouched", () => {
    const text = '{ "contextKeeper": { "enabled": false, }';
    const path = tempFile("settings.json", text);
    const loaded = loadKeeperSettings({ files: [path], read: readIfExists });
    expect(loaded.settings).toEqual(DEFAULT_SETTINGS);
    expect(loaded.diagnostics).toHaveLength(1);
    expect(formatDiagnostic(loaded.diagnostics[0]!)).toContain(path);
    expect(formatDiagnostic(loaded.diagnostics[0]!)).toContain("unparsable JSON");
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  test("out of range number and a group of the wrong type", () => {
    const { partial, diagnostics } = parseKeeperSection({ pruning: { minBatchChars: -5 }, recall: 3 }, "x.json");
    expect(partial).toEqual({ pruning: {} });
    expect(diagnostics.map((d) => d.key).sort()).toEqual(["pruning.minBatchChars", "recall"]);
  });

  test("unknown keys are reported as likely typos and ignored", () => {
    const { partial, diagnostics } = parseKeeperSection({ enabeld: false }, "x.json");
    expect(partial).toEqual({});
    expect(diagnostics[0]!.key).toBe("enabeld");
    expect(diagnostics[0]!.message).toContain("unknown");
    expect(diagnostics[0]!.message).toContain('Did you mean "enabled"?');
    const group = parseKeeperSection({ pruneing: { enabled: false } }, "x.json").diagnostics[0]!;
    expect(group.message).toContain('Did you mean "pruning"?');
  });
});

describe("layering", () => {
  test("project settings override agent settings key by key", () => {
    const agent = tempFile("settings.json", JSON.stringify({ contextKeeper: { statusLine: false, thinkingStrip: { mode: "off", keepLastTurns: 4 } } }));
    const project = tempFile("settings.json", JSON.stringify({ contextKeeper: { thinkingStrip: { mode: "flush-gated" } } }));
    const loaded = loadKeeperSettings({ files: [agent, project], read: readIfExists });
    expect(loaded.settings.statusLine).toBe(false);
    expect(loaded.settings.thinkingStrip).toEqual({ mode: "flush-gated", keepLastTurns: 4 });
    expect(loaded.sources).toEqual([agent, project]);
  });

  test("a bad value in the project layer keeps the agent layer's value for that key", () => {
    const agent = tempFile("settings.json", JSON.stringify({ contextKeeper: { thinkingStrip: { keepLastTurns: 32 } } }));
    const project = tempFile("settings.json", JSON.stringify({ contextKeeper: { thinkingStrip: { keepLastTurns: "many" } } }));
    const loaded = loadKeeperSettings({ files: [agent, project], read: readIfExists });
    expect(loaded.settings.thinkingStrip.keepLastTurns).toBe(32);
    expect(loaded.diagnostics).toHaveLength(1);
  });
});

describe("doc/settings.md stays true to the schema", () => {
  test("every settings key and its default appear in the table", () => {
    const doc = readFileSync(join(import.meta.dir, "../../doc/settings.md"), "utf8");
    const rows: string[] = [];
    const walk = (value: unknown, prefix: string) => {
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k);
      } else rows.push(`| \`${prefix}\` | \`${JSON.stringify(value)}\` |`);
    };
    walk(DEFAULT_SETTINGS, "");
    for (const row of rows) expect(doc).toContain(row);
  });
});

describe("a contextKeeper value that is not an object", () => {
  test('"on" is reported as contextKeeper = "on", not contextKeeper.contextKeeper', () => {
    const { partial, diagnostics } = parseKeeperSection("on", "x.json");
    expect(partial).toEqual({});
    const line = formatDiagnostic(diagnostics[0]!);
    expect(line).toContain('contextKeeper = "on"');
    expect(line).not.toContain("contextKeeper.contextKeeper");
  });
});

describe("an untrusted project's settings file", () => {
  test("is not read, but noted: its path, why, and whether it sets contextKeeper; a missing one is not noted", () => {
    const project = tempFile("settings.json", JSON.stringify({ contextKeeper: { enabled: false } }));
    const agent = tempFile("settings.json", JSON.stringify({ contextKeeper: { pruning: { minBatchChars: 2000 } } }));
    const loaded = loadKeeperSettings({ files: [agent], read: readIfExists, skipped: [{ path: project, reason: "project not trusted" }, { path: "/nonexistent/p.json", reason: "project not trusted" }] });
    expect(loaded.settings.enabled).toBe(true);
    expect(loaded.settings.pruning.minBatchChars).toBe(2000);
    expect(loaded.sources).toEqual([agent]);
    expect(loaded.ignored).toEqual([{ source: project, reason: "project not trusted", setsKeeper: true }]);
    const other = tempFile("settings.json", JSON.stringify({ theme: "dark" }));
    expect(loadKeeperSettings({ files: [], read: readIfExists, skipped: [{ path: other, reason: "project not trusted" }] }).ignored).toEqual([{ source: other, reason: "project not trusted", setsKeeper: false }]);
    expect(loadKeeperSettings({ files: [], read: readIfExists }).ignored).toBeUndefined();
  });
});
