/**
 * All Pi runtime (value) imports live in the host (and the report's session loader): every
 * other module under src/ imports only types from Pi, so the engine and the leaves run
 * without Pi (the replay, the tests, other hosts).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { sourceFiles, valueImports } from "../../test/support/value-imports.ts";

const SRC = join(import.meta.dir, "..");
const PI_PACKAGES = /^@earendil-works\/pi-(coding-agent|ai|agent-core|tui)(\/|$)/;

/** Where a Pi value import is allowed, and why. */
const ALLOWED: ReadonlyArray<{ path: RegExp; why: string }> = [
  { path: /^host\//, why: "the host: Pi's runtime is its job" },
  { path: /^report\/pi-session-contexts\.ts$/, why: "the report's session loader rebuilds contexts with Pi's own functions" },
  { path: /^report\/cli\/main\.ts$/, why: "the report CLI finds Pi's agent dir (where sessions are)" },
];

/** Module specifiers of Pi packages this source imports or re-exports as values. */
export function piValueImports(fileName: string, text: string): string[] {
  return valueImports(fileName, text, (spec) => PI_PACKAGES.test(spec));
}

describe("Pi runtime imports", () => {
  test("the detector tells value imports from type-only ones", () => {
    expect(piValueImports("a.ts", 'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";')).toEqual([]);
    expect(piValueImports("a.ts", 'import { type ExtensionAPI, type ExtensionContext } from "@earendil-works/pi-coding-agent";')).toEqual([]);
    expect(piValueImports("a.ts", 'import { type ExtensionAPI, SettingsManager } from "@earendil-works/pi-coding-agent";')).toEqual(["@earendil-works/pi-coding-agent"]);
    expect(piValueImports("a.ts", 'import { getModel } from "@earendil-works/pi-ai";')).toEqual(["@earendil-works/pi-ai"]);
    expect(piValueImports("a.ts", 'import * as pi from "@earendil-works/pi-agent-core";')).toEqual(["@earendil-works/pi-agent-core"]);
    expect(piValueImports("a.ts", 'export { compact } from "@earendil-works/pi-coding-agent";')).toEqual(["@earendil-works/pi-coding-agent"]);
    expect(piValueImports("a.ts", 'const m = await import("@earendil-works/pi-tui");')).toEqual(["@earendil-works/pi-tui"]);
    expect(piValueImports("a.ts", 'import { z } from "zod";')).toEqual([]);
  });

  test("no module under src/ outside the host (and the report's session loader) imports a Pi value", () => {
    const offenders: string[] = [];
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const rel = relative(SRC, file).split("\\").join("/");
      if (ALLOWED.some((a) => a.path.test(rel))) continue;
      for (const spec of piValueImports(file, readFileSync(file, "utf8"))) offenders.push(`src/${rel} imports a value from ${spec}`);
    }
    expect(offenders).toEqual([]);
  });
});
