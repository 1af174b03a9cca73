/**
 * Source and test files of the lookback sandbox: TypeScript modules made of functions, classes
 * with methods, interfaces, types and constants with plausible bodies, and one test file per
 * module whose test titles the test reports name. Every definition and some body lines are
 * recorded as facts at their line.
 */
import type { Prng } from "../scenario-prng.ts";
import { type LineFact, linesOf } from "./facts.ts";

export interface FunctionInfo {
  name: string;
  /** 1-based line of the definition, and of its body lines. */
  line: number;
  bodyLines: number[];
}

export interface SourceModule {
  name: string;
  path: string;
  text: string;
  /** Definitions and code lines, at their line. */
  facts: LineFact[];
  functions: FunctionInfo[];
  /** Identifiers the module defines (what a grep would look for). */
  identifiers: string[];
}

export interface TestCase {
  title: string;
  line: number;
  /** The function of the module the test exercises. */
  target: string;
}

export interface TestModule {
  module: string;
  path: string;
  text: string;
  tests: TestCase[];
}

export const MODULE_NAMES = ["cache", "ledger", "router", "parser", "session", "budget", "scheduler", "billing", "tokenizer", "metrics", "queue", "auth"] as const;
const VERBS = ["compute", "flush", "parse", "resolve", "evict", "merge", "load", "render", "validate", "schedule", "encode", "decode", "apply", "collect", "normalize", "restore", "track", "split", "reserve", "settle", "drain", "rebalance"];
const NOUNS = ["Budget", "Ledger", "Header", "Entry", "Window", "Batch", "Token", "Cursor", "Offset", "Policy", "Route", "Session", "Marker", "Quota", "Snapshot", "Frame", "Chunk", "Record", "Span", "Limit", "Lease", "Digest"];
const SUFFIXES = ["Count", "Limit", "Delay", "Total", "Index", "Size", "Ratio", "Key", "Deadline", "Budget", "Weight", "Floor"];
const TYPES = ["number", "string", "boolean", "Entry[]", "Map<string, number>", "readonly string[]", "Date"];
const ERRORS = ["is past its deadline", "exceeds the quota", "has no owner", "was already settled", "is out of range", "cannot be negative"];

const lower = (s: string) => s[0]!.toLowerCase() + s.slice(1);
const snake = (s: string) => s.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();

/** Names used once per sandbox, so a definition line is never ambiguous. */
export class NameBook {
  private used = new Set<string>();
  constructor(private prng: Prng) {}
  fresh(make: () => string): string {
    for (let i = 0; i < 50; i++) {
      const name = make();
      if (!this.used.has(name)) {
        this.used.add(name);
        return name;
      }
    }
    const name = `${make()}${this.used.size}`;
    this.used.add(name);
    return name;
  }
  fn(): string {
    return this.fresh(() => `${this.prng.pick(VERBS)}${this.prng.pick(NOUNS)}`);
  }
  /** A local name (may repeat across functions). */
  variable(): string {
    return `${lower(this.prng.pick(NOUNS))}${this.prng.pick(SUFFIXES)}`;
  }
  type(): string {
    return this.fresh(() => `${this.prng.pick(NOUNS)}${this.prng.pick(["Options", "State", "Config", "Result", "Stats", "Plan"])}`);
  }
}

interface Draft {
  lines: string[];
  facts: LineFact[];
  functions: FunctionInfo[];
  identifiers: string[];
}

function def(d: Draft, text: string, cue: string): void {
  d.lines.push(text);
  d.facts.push({ kind: "definition", text: text.trim().replace(/ \{$/, ""), cue, line: d.lines.length });
}

/** Body statements; `const` and `throw` lines are recorded as code facts (their variable or message word as cue). */
function body(d: Draft, prng: Prng, names: NameBook, indent: string, returns: string): number[] {
  const at: number[] = [];
  const vars: string[] = [];
  const push = (line: string, cue?: string) => {
    d.lines.push(indent + line);
    at.push(d.lines.length);
    if (cue && line.length >= 24) d.facts.push({ kind: "code", text: line, cue, line: d.lines.length });
  };
  const n = prng.int(3, 9);
  for (let i = 0; i < n; i++) {
    let v = names.variable();
    for (let k = 0; k < 10 && vars.includes(v); k++) v = names.variable();
    const prev = vars.length > 0 ? prng.pick(vars) : "input";
    switch (prng.int(0, 5)) {
      case 0:
        push(`const ${v} = Math.min(${prev} * ${prng.int(2, 9)}, ${prng.int(100, 90000)});`, v);
        break;
      case 1:
        push(`const ${v} = ${prev} > ${prng.int(0, 500)} ? ${prng.int(1, 64)} : ${prev} % ${prng.int(2, 17)};`, v);
        break;
      case 2:
        push(`if (${prev} > ${prng.int(1000, 60000)}) {`);
        {
          const word = prng.pick(ERRORS);
          push(`  throw new RangeError(\`${lower(prng.pick(NOUNS))} \${${prev}} ${word}\`);`, word.split(" ").slice(-1)[0]);
        }
        push("}");
        break;
      case 3:
        push(`const ${v} = options.${lower(prng.pick(NOUNS))}${prng.pick(SUFFIXES)} ?? ${prng.int(1, 5000)};`, v);
        break;
      case 4:
        push(`let ${v} = ${prng.int(0, 9)};`);
        push(`for (const item of entries) ${v} += item.weight * ${(prng.next() * 4).toFixed(2)};`, v);
        break;
      default:
        push(`const ${v} = entries.filter((e) => e.deadline > now - ${prng.int(10, 9000)}).length;`, v);
    }
    vars.push(v);
  }
  push(`return ${returns === "boolean" ? `${prng.pick(vars)} > 0` : returns === "string" ? `String(${prng.pick(vars)})` : prng.pick(vars)};`);
  return at;
}

function addFunction(d: Draft, prng: Prng, names: NameBook, exported: boolean): void {
  const name = names.fn();
  const ret = prng.pick(["number", "number", "boolean", "string"]);
  const params = `input: number, entries: Entry[], options: ${prng.pick(["Options", "Partial<Options>"])}, now = Date.now()`;
  const line = d.lines.length + 1;
  const async = prng.chance(0.2);
  def(d, `${exported ? "export " : ""}${async ? "async " : ""}function ${name}(${params}): ${async ? `Promise<${ret}>` : ret} {`, name);
  const bodyLines = body(d, prng, names, "  ", ret);
  d.lines.push("}", "");
  d.functions.push({ name, line, bodyLines });
  d.identifiers.push(name);
}

function addClass(d: Draft, prng: Prng, names: NameBook): void {
  const cls = names.fresh(() => `${prng.pick(NOUNS)}${prng.pick(["Store", "Tracker", "Pool", "Planner", "Queue", "Guard"])}`);
  def(d, `export class ${cls} {`, cls);
  d.identifiers.push(cls);
  d.lines.push(`  private readonly ${lower(prng.pick(NOUNS))}s = new Map<string, number>();`, "", `  constructor(private readonly options: Options) {}`, "");
  for (let m = prng.int(2, 4); m > 0; m--) {
    const name = names.fn();
    const ret = prng.pick(["number", "boolean"]);
    const line = d.lines.length + 1;
    def(d, `  ${name}(input: number, entries: Entry[], now = Date.now()): ${ret} {`, name);
    const bodyLines = body(d, prng, names, "    ", ret);
    d.lines.push("  }", "");
    d.functions.push({ name, line, bodyLines });
    d.identifiers.push(name);
  }
  d.lines.push("}", "");
}

function addInterface(d: Draft, prng: Prng, names: NameBook): void {
  const name = names.type();
  def(d, `export interface ${name} {`, name);
  d.identifiers.push(name);
  for (let f = prng.int(2, 6); f > 0; f--) d.lines.push(`  ${names.variable()}${prng.chance(0.3) ? "?" : ""}: ${prng.pick(TYPES)};`);
  d.lines.push("}", "");
}

function addConstant(d: Draft, prng: Prng, names: NameBook): void {
  const name = snake(names.variable());
  def(d, `export const ${name} = ${prng.chance(0.5) ? prng.int(2, 90000) : `${prng.int(1, 60)} * 1000`};`, name);
  d.identifiers.push(name);
}

export function generateSourceModule(o: { prng: Prng; names: NameBook; name: string; bytes: number; imports: string[] }): SourceModule {
  const { prng, names } = o;
  const d: Draft = { lines: [], facts: [], functions: [], identifiers: [] };
  d.lines.push(`import type { Entry, Options } from "./types.ts";`);
  for (const i of o.imports) d.lines.push(`import { ${i} } from "./${prng.pick(MODULE_NAMES)}.ts";`);
  d.lines.push("");
  while (d.lines.join("\n").length < o.bytes) {
    const r = prng.next();
    if (r < 0.45) addFunction(d, prng, names, prng.chance(0.85));
    else if (r < 0.65) addClass(d, prng, names);
    else if (r < 0.82) addInterface(d, prng, names);
    else addConstant(d, prng, names);
  }
  const text = d.lines.join("\n") + "\n";
  return { name: o.name, path: `src/${o.name}.ts`, text, facts: d.facts, functions: d.functions, identifiers: d.identifiers };
}

const TITLE_VERBS = ["keeps", "drops", "rejects", "merges", "returns", "flushes", "retries", "rounds", "caps", "parses", "settles", "reorders"];
const TITLE_OBJECTS = ["the oldest entry", "an empty batch", "the cursor", "a stale lease", "the quota", "negative offsets", "the last frame", "duplicate records", "the digest", "expired tokens"];
const TITLE_CONDITIONS = ["when the window is full", "after a restart", "across two sessions", "under the quota", "at the boundary", "when the clock skews", "with a zero budget", "on the second attempt", "for unicode input", "in strict mode"];

export function generateTestModule(prng: Prng, mod: SourceModule): TestModule {
  const lines = [`import { describe, expect, test } from "vitest";`, `import { ${mod.functions.slice(0, 4).map((f) => f.name).join(", ")} } from "../src/${mod.name}.ts";`, "", `describe("${mod.name}", () => {`];
  const tests: TestCase[] = [];
  const titles = new Set<string>();
  const count = Math.min(14, Math.max(3, mod.functions.length + prng.int(0, 3)));
  for (let i = 0; i < count; i++) {
    let title = "";
    for (let k = 0; k < 20 && (title === "" || titles.has(title)); k++) title = `${prng.pick(TITLE_VERBS)} ${prng.pick(TITLE_OBJECTS)} ${prng.pick(TITLE_CONDITIONS)}`;
    titles.add(title);
    const target = mod.functions.length > 0 ? prng.pick(mod.functions).name : "noop";
    lines.push(`  test("${title}", () => {`);
    tests.push({ title, line: lines.length, target });
    lines.push(`    const result = ${target}(${prng.int(0, 900)}, [], {});`, `    expect(result).toBe(${prng.int(0, 64)});`, "  });", "");
  }
  lines.push("});");
  return { module: mod.name, path: `test/${mod.name}.test.ts`, text: lines.join("\n") + "\n", tests };
}

/** The shared types file every module imports. */
export function typesFile(): string {
  return [
    "export interface Entry {",
    "  key: string;",
    "  weight: number;",
    "  deadline: number;",
    "}",
    "",
    "export interface Options {",
    "  [name: string]: number | undefined;",
    "}",
    "",
  ].join("\n");
}

export { linesOf };
