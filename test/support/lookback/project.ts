/**
 * The lookback sandbox: a small TypeScript service — source modules, their tests, config files
 * in four formats, service logs, and scripts that run the tests, the typecheck and the lint
 * (their outputs are fixed reports, so every arm and every re-run sees the same text). Facts
 * (definitions, code lines, failing tests, error lines, config values) are recorded where they
 * are, and kept only when their text occurs once in the whole sandbox.
 */
import type { Prng } from "../scenario-prng.ts";
import type { SandboxFiles } from "../scenario-sandbox.ts";
import { type Fact, type LineFact, occurrences } from "./facts.ts";
import { generateConfigs } from "./project-config.ts";
import { MODULE_NAMES, NameBook, type SourceModule, type TestModule, generateSourceModule, generateTestModule, typesFile } from "./project-code.ts";
import { type Report, type RunnerStyle, lintReport, pickFailures, serviceLog, testReport, typecheckReport } from "./project-reports.ts";

/** A file of the sandbox with the facts at its lines. */
export interface ProjectFile {
  path: string;
  text: string;
  facts: LineFact[];
}

/** A script the agent runs with `sh`, and what it prints. */
export interface ProjectScript {
  command: string;
  report: Report;
}

export interface LookbackProject {
  files: SandboxFiles;
  sources: SourceModule[];
  tests: TestModule[];
  /** Files whose lines the agent reads (sources, tests, configs, logs), facts unique. */
  readable: ProjectFile[];
  scripts: ProjectScript[];
  runner: RunnerStyle;
}

export interface ProjectOptions {
  prng: Prng;
  /** Source modules (default 7). */
  modules?: number;
  /** Source file sizes in bytes (default [2048, 12288]). */
  sourceBytes?: [number, number];
}

const SCRIPT_HEADER = "#!/bin/sh\nset -u\n";

function scriptFile(name: string, comment: string): string {
  return `${SCRIPT_HEADER}# ${comment}\nsuite="\${1:-all}"\ncat ".reports/${name}-$suite.txt"\nexit "$(cat ".reports/${name}-$suite.status")"\n`;
}

export function generateProject(o: ProjectOptions): LookbackProject {
  const { prng } = o;
  const names = new NameBook(prng);
  const [minBytes, maxBytes] = o.sourceBytes ?? [2048, 12288];
  const count = Math.min(MODULE_NAMES.length, o.modules ?? 7);
  const moduleNames = [...MODULE_NAMES].sort(() => prng.next() - 0.5).slice(0, count);
  const sources: SourceModule[] = [];
  for (const name of moduleNames) {
    const imports = sources.length > 0 ? [prng.pick(sources).identifiers[0]!].filter(Boolean) : [];
    sources.push(generateSourceModule({ prng, names, name, bytes: prng.int(minBytes, maxBytes), imports }));
  }
  const tests = sources.map((m) => generateTestModule(prng, m));
  const runner = prng.pick(["vitest", "jest", "tap"] as const);
  const failures = pickFailures(prng, tests, sources);

  const scripts: ProjectScript[] = [];
  const files: SandboxFiles = { "src/types.ts": typesFile() };
  const addReport = (name: string, suite: string, command: string, report: Report) => {
    files[`.reports/${name}-${suite}.txt`] = report.text;
    files[`.reports/${name}-${suite}.status`] = `${report.status}\n`;
    scripts.push({ command, report });
  };
  addReport("test", "all", "sh scripts/test.sh", testReport(prng, runner, tests, failures));
  for (const t of tests) addReport("test", t.module, `sh scripts/test.sh ${t.module}`, testReport(prng, runner, [t], failures));
  addReport("typecheck", "all", "sh scripts/typecheck.sh", typecheckReport(prng, sources));
  addReport("lint", "all", "sh scripts/lint.sh", lintReport(prng, sources));
  files["scripts/test.sh"] = scriptFile("test", "Runs the unit tests: all suites, or the one named.");
  files["scripts/typecheck.sh"] = scriptFile("typecheck", "Type-checks the sources.");
  files["scripts/lint.sh"] = scriptFile("lint", "Lints the sources.");

  const readable: ProjectFile[] = [
    ...sources.map((m) => ({ path: m.path, text: m.text, facts: m.facts })),
    ...tests.map((t) => ({ path: t.path, text: t.text, facts: [] })),
    ...generateConfigs(prng, moduleNames),
  ];
  for (const name of ["server", "worker"]) {
    const log = serviceLog(prng, sources, prng.int(4096, 12288));
    const lines = log.text.split("\n");
    readable.push({ path: `logs/${name}.log`, text: log.text, facts: log.facts.map((f) => ({ ...f, line: lines.findIndex((l) => l.includes(f.text)) + 1 })) });
  }
  for (const f of readable) files[f.path] = f.text;
  files["package.json"] = JSON.stringify({ name: "ledger-service", private: true, scripts: { test: "sh scripts/test.sh", typecheck: "sh scripts/typecheck.sh", lint: "sh scripts/lint.sh" } }, null, 2) + "\n";
  files["README.md"] = `# ledger-service\n\nModules: ${moduleNames.join(", ")}. Run \`sh scripts/test.sh [suite]\`, \`sh scripts/typecheck.sh\`, \`sh scripts/lint.sh\`.\n`;

  // A fact counts only when its text is not elsewhere: once among the files the agent reads; a
  // report's fact in no file the agent reads (a report may name a failing test twice, and a run
  // of all suites repeats a suite's failures: the same fact).
  const readText = Object.entries(files).filter(([p]) => !p.startsWith(".reports/")).map(([, t]) => t).join("\n");
  const keep = <F extends Fact>(fs: F[], ok: (f: F) => boolean) => fs.filter((f) => f.text.includes(f.cue) && ok(f));
  for (const f of readable) f.facts = keep(f.facts, (x) => x.line > 0 && occurrences(readText, x.text) === 1);
  for (const s of scripts) s.report = { ...s.report, facts: keep(s.report.facts, (x) => !readText.includes(x.text)) };
  return { files, sources, tests, readable, scripts, runner };
}
