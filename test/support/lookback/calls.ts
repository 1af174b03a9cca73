/**
 * The tool calls of the lookback scenario, each with the facts its output holds: reads and cats
 * of files, `grep -n` / `grep -rn`, `sed -n` ranges, `tail`, the test / typecheck / lint scripts,
 * and calls that fail (missing files, a grep with no match). A call's facts are the recorded
 * facts of the lines its output shows (the fake model checks at run time that they are there).
 */
import type { ScriptedToolCall } from "../fake-anthropic/types.ts";
import type { Prng } from "../scenario-prng.ts";
import type { Fact, LineFact } from "./facts.ts";
import { linesOf } from "./facts.ts";
import type { LookbackProject, ProjectFile } from "./project.ts";

export interface CallSpec {
  call: ScriptedToolCall & { id: string };
  /** Facts the call's output shows. */
  facts: Fact[];
  fails: boolean;
  /** The path or command that names the call. */
  target: string;
}

export type Theme = "tests" | "review" | "logs" | "config" | "build";
export const THEMES: readonly Theme[] = ["tests", "review", "logs", "config", "build"];

type Make = () => Omit<CallSpec, "call"> & { call: ScriptedToolCall };

const strip = (fs: readonly LineFact[]): Fact[] => fs.map(({ kind, text, cue }) => ({ kind, text, cue }));

export class CallMaker {
  private n = 0;
  constructor(
    private readonly prng: Prng,
    private readonly project: LookbackProject,
    private readonly idPrefix: string,
  ) {}

  private file(prefix: string): ProjectFile {
    const fs = this.project.readable.filter((f) => f.path.startsWith(prefix));
    return this.prng.pick(fs.length > 0 ? fs : this.project.readable);
  }

  private read(f: ProjectFile): ReturnType<Make> {
    const cat = this.prng.chance(0.3);
    return { call: cat ? { name: "bash", input: { command: `cat ${f.path}` } } : { name: "read", input: { path: f.path } }, facts: strip(f.facts), fails: false, target: f.path };
  }

  private range(f: ProjectFile): ReturnType<Make> {
    const total = linesOf(f.text).length;
    const from = this.prng.int(1, Math.max(1, total - 20));
    const to = Math.min(total, from + this.prng.int(20, 80));
    const command = `sed -n '${from},${to}p' ${f.path}`;
    return { call: { name: "bash", input: { command } }, facts: strip(f.facts.filter((x) => x.line >= from && x.line <= to)), fails: false, target: command };
  }

  private tail(f: ProjectFile): ReturnType<Make> {
    const total = linesOf(f.text).length;
    const n = this.prng.int(30, 80);
    const command = `tail -n ${n} ${f.path}`;
    return { call: { name: "bash", input: { command } }, facts: strip(f.facts.filter((x) => x.line > total - n)), fails: false, target: command };
  }

  /** `grep -n <word> <file>` for a word the file has (else a cue of one of its facts). */
  private grep(files: ProjectFile[], recursive: boolean): ReturnType<Make> {
    const f = this.prng.pick(files);
    const word = f.facts.length > 0 ? this.prng.pick(f.facts).cue.replace(/^"|"$/g, "").split(" ")[0]! : "export";
    const safe = word.replace(/[^\w.-]/g, "");
    const scope = recursive ? f.path.slice(0, f.path.indexOf("/") + 1 || undefined) : f.path;
    const command = recursive ? `grep -rn ${safe} ${scope}` : `grep -n ${safe} ${f.path}`;
    const hit = (x: LineFact, in_: ProjectFile) => linesOf(in_.text)[x.line - 1]?.includes(safe) ?? false;
    const over = recursive ? this.project.readable.filter((p) => p.path.startsWith(scope)) : [f];
    return { call: { name: "bash", input: { command } }, facts: over.flatMap((p) => strip(p.facts.filter((x) => hit(x, p)))), fails: false, target: command };
  }

  private script(prefix: string): ReturnType<Make> {
    const ss = this.project.scripts.filter((s) => s.command.startsWith(prefix));
    const s = this.prng.pick(ss);
    return { call: { name: "bash", input: { command: s.command } }, facts: s.report.facts, fails: s.report.status !== 0, target: s.command };
  }

  private failing(): ReturnType<Make> {
    const mod = this.prng.pick(this.project.sources).name;
    switch (this.prng.int(0, 3)) {
      case 0:
        return { call: { name: "read", input: { path: `src/${mod}/index.ts` } }, facts: [], fails: true, target: `src/${mod}/index.ts` };
      case 1:
        return { call: { name: "bash", input: { command: `cat lib/${mod}.js` } }, facts: [], fails: true, target: `lib/${mod}.js` };
      case 2:
        return { call: { name: "bash", input: { command: `ls packages/${mod}` } }, facts: [], fails: true, target: `packages/${mod}` };
      default:
        return { call: { name: "bash", input: { command: `grep -n TODO_${mod.toUpperCase()} src/${mod}.ts` } }, facts: [], fails: true, target: `src/${mod}.ts` };
    }
  }

  /** One call for a prompt on `theme`. */
  next(theme: Theme): CallSpec {
    const p = this.prng;
    const src = () => this.file("src/");
    const options: Array<[number, Make]> = [
      [theme === "review" ? 4 : 2, () => this.read(src())],
      [2, () => this.range(src())],
      [theme === "review" ? 2 : 1, () => this.grep(this.project.readable.filter((f) => f.path.startsWith("src/")), p.chance(0.5))],
      [theme === "tests" ? 3 : 0.5, () => this.script("sh scripts/test.sh")],
      [theme === "tests" ? 1.5 : 0.3, () => this.read(this.file("test/"))],
      [theme === "build" ? 3 : 0.4, () => this.script(p.chance(0.5) ? "sh scripts/typecheck.sh" : "sh scripts/lint.sh")],
      [theme === "config" ? 3 : 0.5, () => this.read(this.file(p.chance(0.25) ? ".env" : "config/"))],
      [theme === "config" ? 1 : 0.2, () => this.grep(this.project.readable.filter((f) => f.path.startsWith("config/") || f.path.startsWith(".env")), false)],
      [theme === "logs" ? 2.5 : 0.4, () => (p.chance(0.5) ? this.tail(this.file("logs/")) : this.grep(this.project.readable.filter((f) => f.path.startsWith("logs/")), false))],
      [1, () => this.failing()],
    ];
    const total = options.reduce((n, [w]) => n + w, 0);
    let r = p.next() * total;
    let made: ReturnType<Make> | undefined;
    for (const [w, make] of options) {
      r -= w;
      if (r <= 0) {
        made = make();
        break;
      }
    }
    made ??= options[0]![1]();
    return { ...made, call: { ...made.call, id: `${this.idPrefix}${this.n++}` } };
  }
}
