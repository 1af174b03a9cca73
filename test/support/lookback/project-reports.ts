/**
 * What the lookback sandbox's scripts print: test runs (one of three runner styles per sandbox)
 * with failing tests pointing at real lines of the test and source files, a typecheck and a lint
 * with errors at real lines, and service logs with error lines. Each report records its facts.
 */
import type { Prng } from "../scenario-prng.ts";
import type { Fact } from "./facts.ts";
import type { SourceModule, TestModule } from "./project-code.ts";

export type RunnerStyle = "vitest" | "jest" | "tap";

export interface Report {
  text: string;
  /** Exit status of the script that prints it. */
  status: number;
  facts: Fact[];
}

interface Failure {
  suite: TestModule;
  title: string;
  testLine: number;
  sourcePath: string;
  sourceLine: number;
  expected: number;
  received: number;
}

/** The failing tests of a sandbox: 2–5, in 1–3 suites. */
export function pickFailures(prng: Prng, suites: readonly TestModule[], modules: readonly SourceModule[]): Failure[] {
  const out: Failure[] = [];
  const failing = [...suites].sort(() => prng.next() - 0.5).slice(0, prng.int(1, Math.min(3, suites.length)));
  for (const suite of failing) {
    const mod = modules.find((m) => m.name === suite.module)!;
    for (let k = prng.int(1, 2); k > 0; k--) {
      const t = prng.pick(suite.tests);
      if (out.some((f) => f.title === t.title && f.suite === suite)) continue;
      const fn = mod.functions.find((f) => f.name === t.target) ?? mod.functions[0];
      const sourceLine = fn ? prng.pick(fn.bodyLines.length > 0 ? fn.bodyLines : [fn.line]) : 1;
      const expected = prng.int(0, 64);
      let received = prng.int(0, 900);
      if (received === expected) received++;
      out.push({ suite, title: t.title, testLine: t.line + 2, sourcePath: mod.path, sourceLine, expected, received });
    }
  }
  return out;
}

const ms = (prng: Prng) => prng.int(1, 40);

/** One test run over `suites` in `style`; `failures` beyond these suites are left out. */
export function testReport(prng: Prng, style: RunnerStyle, suites: readonly TestModule[], failures: readonly Failure[]): Report {
  const facts: Fact[] = [];
  const lines: string[] = [];
  const fails = failures.filter((f) => suites.includes(f.suite));
  const failed = (s: TestModule, title: string) => fails.find((f) => f.suite === s && f.title === title);
  let passed = 0;
  const total = suites.reduce((n, s) => n + s.tests.length, 0);
  if (style === "vitest") lines.push("", " RUN  v1.6.0 /project", "");
  if (style === "tap") lines.push("TAP version 13");
  let n = 0;
  for (const s of suites) {
    if (style === "jest") lines.push(`${s.tests.some((t) => failed(s, t.title)) ? "FAIL" : "PASS"} ${s.path}`);
    for (const t of s.tests) {
      n++;
      const f = failed(s, t.title);
      if (!f) passed++;
      if (style === "vitest") lines.push(` ${f ? "×" : "✓"} ${s.path} > ${s.module} > ${t.title} ${ms(prng)}ms`);
      else if (style === "jest") lines.push(`  ${f ? "✕" : "✓"} ${t.title} (${ms(prng)} ms)`);
      else {
        lines.push(`${f ? "not ok" : "ok"} ${n} - ${s.module} ${t.title}`);
        if (f) {
          // The failing test's name as the runner prints it (what the model needs, whatever line shows it).
          facts.push({ kind: "test-failure", text: `${s.module} ${t.title}`, cue: t.title });
          const msg = `message: 'Expected values to be strictly equal: ${f.received} !== ${f.expected}'`;
          lines.push("  ---", `  ${msg}`, `  at: ${f.sourcePath}:${f.sourceLine}:${prng.int(3, 30)}`, `  location: ${s.path}:${f.testLine}:5`, "  ...");
          facts.push({ kind: "error", text: msg, cue: "strictly equal" });
        }
      }
    }
  }
  lines.push("");
  if (style === "vitest" && fails.length > 0) lines.push(`⎯⎯⎯⎯⎯⎯ Failed Tests ${fails.length} ⎯⎯⎯⎯⎯⎯⎯`, "");
  for (const f of fails) {
    if (style === "vitest") {
      const head = `FAIL  ${f.suite.path} > ${f.suite.module} > ${f.title}`;
      const msg = `AssertionError: expected ${f.received} to be ${f.expected} // Object.is equality`;
      lines.push(` ${head}`, msg, "", ` ❯ ${f.suite.path}:${f.testLine}:20`, ` ❯ ${f.sourcePath}:${f.sourceLine}:${prng.int(3, 30)}`, "");
      facts.push({ kind: "test-failure", text: `${f.suite.module} > ${f.title}`, cue: f.title }, { kind: "error", text: msg, cue: "AssertionError" });
    } else if (style === "jest") {
      const head = `● ${f.suite.module} › ${f.title}`;
      lines.push(`  ${head}`, "", "    expect(received).toBe(expected) // Object.is equality", "", `    Expected: ${f.expected}`, `    Received: ${f.received}`, "", `      at Object.<anonymous> (${f.suite.path}:${f.testLine}:20)`, `      at ${f.sourcePath}:${f.sourceLine}:${prng.int(3, 30)}`, "");
      facts.push({ kind: "test-failure", text: `${f.suite.module} › ${f.title}`, cue: f.title });
    }
  }
  const nFailed = total - passed;
  if (style === "vitest") lines.push(` Test Files  ${new Set(fails.map((f) => f.suite)).size} failed | ${suites.length - new Set(fails.map((f) => f.suite)).size} passed (${suites.length})`, `      Tests  ${nFailed} failed | ${passed} passed (${total})`);
  else if (style === "jest") lines.push(`Tests:       ${nFailed} failed, ${passed} passed, ${total} total`, `Time:        ${(prng.next() * 9 + 1).toFixed(3)} s`);
  else lines.push(`1..${total}`, `# tests ${total}`, `# pass ${passed}`, `# fail ${nFailed}`);
  return { text: lines.join("\n") + "\n", status: nFailed > 0 ? 1 : 0, facts };
}

const TS_ERRORS: Array<[string, string]> = [
  ["TS2345", "Argument of type 'string' is not assignable to parameter of type 'number'."],
  ["TS2339", "Property 'weight' does not exist on type 'Options'."],
  ["TS2532", "Object is possibly 'undefined'."],
  ["TS2322", "Type 'number | undefined' is not assignable to type 'number'."],
  ["TS7030", "Not all code paths return a value."],
  ["TS2554", "Expected 3 arguments, but got 2."],
];

export function typecheckReport(prng: Prng, modules: readonly SourceModule[]): Report {
  const pretty = prng.chance(0.5);
  const facts: Fact[] = [];
  const lines: string[] = [];
  const files = new Set<string>();
  const count = prng.int(2, 6);
  for (let i = 0; i < count; i++) {
    const mod = prng.pick(modules);
    const fn = prng.pick(mod.functions);
    const line = fn ? prng.pick(fn.bodyLines.length > 0 ? fn.bodyLines : [fn.line]) : 1;
    const [code, msg] = prng.pick(TS_ERRORS);
    const col = prng.int(3, 40);
    const text = pretty ? `${mod.path}:${line}:${col} - error ${code}: ${msg}` : `${mod.path}(${line},${col}): error ${code}: ${msg}`;
    if (lines.includes(text)) continue;
    files.add(mod.path);
    lines.push(text);
    if (pretty) lines.push("", `${line} ${mod.text.split("\n")[line - 1] ?? ""}`, "");
    facts.push({ kind: "error", text, cue: code });
  }
  lines.push("", `Found ${facts.length} errors in ${files.size} files.`);
  return { text: lines.join("\n") + "\n", status: 2, facts };
}

const LINT_RULES: Array<[string, (name: string) => string]> = [
  ["no-unused-vars", (n) => `'${n}' is assigned a value but never used`],
  ["prefer-const", (n) => `'${n}' is never reassigned. Use 'const' instead`],
  ["eqeqeq", () => "Expected '===' and instead saw '=='"],
  ["no-shadow", (n) => `'${n}' is already declared in the upper scope`],
];

export function lintReport(prng: Prng, modules: readonly SourceModule[]): Report {
  const facts: Fact[] = [];
  const lines: string[] = [];
  let errors = 0;
  let warnings = 0;
  for (const mod of [...modules].sort(() => prng.next() - 0.5).slice(0, prng.int(1, 3))) {
    lines.push(mod.path);
    const found: Array<{ line: number; text: string; isError: boolean }> = [];
    for (let k = prng.int(1, 3); k > 0; k--) {
      const code = mod.facts.filter((f) => f.kind === "code");
      const at = code.length > 0 ? prng.pick(code) : { line: 1, cue: "input" };
      const [rule, message] = prng.pick(LINT_RULES);
      const isError = prng.chance(0.6);
      const text = `${at.line}:${prng.int(3, 30)}  ${isError ? "error  " : "warning"}  ${message(at.cue)}  ${rule}`;
      found.push({ line: at.line, text, isError });
      if (isError) {
        errors++;
        facts.push({ kind: "error", text, cue: rule });
      } else warnings++;
    }
    lines.push(...found.sort((a, b) => a.line - b.line).map((f) => `  ${f.text}`), "");
  }
  lines.push(`✖ ${errors + warnings} problems (${errors} errors, ${warnings} warnings)`);
  return { text: lines.join("\n") + "\n", status: errors > 0 ? 1 : 0, facts };
}

const LOG_EVENTS = ["request served", "lease renewed", "batch committed", "cache warmed", "snapshot written", "cursor advanced"];
const LOG_FAILURES = ["write timeout after 3000ms", "connection reset by peer", "lease expired before commit", "quota exceeded for tenant", "checksum mismatch in frame", "deadline exceeded while draining"];

/** A service log of about `bytes`, ERROR lines (facts) among INFO, DEBUG and WARN. */
export function serviceLog(prng: Prng, modules: readonly SourceModule[], bytes: number): Report {
  const lines: string[] = [];
  const facts: Fact[] = [];
  for (let n = 0; lines.join("\n").length < bytes; n++) {
    const ts = `2026-03-${String(prng.int(1, 28)).padStart(2, "0")}T${String(prng.int(0, 23)).padStart(2, "0")}:${String(n % 60).padStart(2, "0")}:${String(prng.int(0, 59)).padStart(2, "0")}.${String(prng.int(0, 999)).padStart(3, "0")}Z`;
    const mod = prng.pick(modules);
    const component = `${mod.name}.${mod.functions.length > 0 ? prng.pick(mod.functions).name : "run"}`;
    const id = `req_${prng.int(0x100000, 0xffffff).toString(16)}`;
    const r = prng.next();
    if (r < 0.08) {
      const text = `ERROR ${component} failed: ${prng.pick(LOG_FAILURES)} (attempt ${prng.int(1, 5)}/5) request_id=${id}`;
      lines.push(`${ts} ${text}`);
      facts.push({ kind: "error", text, cue: `ERROR ${component}` });
    } else if (r < 0.2) lines.push(`${ts} WARN  ${component} slow: took=${prng.int(500, 4000)}ms request_id=${id}`);
    else if (r < 0.35) lines.push(`${ts} DEBUG ${component} state=${prng.pick(["idle", "busy", "draining"])} queue=${prng.int(0, 99)}`);
    else lines.push(`${ts} INFO  ${component} ${prng.pick(LOG_EVENTS)} took=${prng.int(1, 400)}ms request_id=${id}`);
  }
  return { text: lines.join("\n") + "\n", status: 0, facts };
}
