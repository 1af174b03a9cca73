/**
 * The facts a summary of a tool call must never lose: the commands and paths in its
 * arguments, its exit status, the error lines and the file paths in its output.
 *
 * One extractor serves both the extractive summary (which prints them) and the fidelity
 * check (which looks for them in any summary), so the two cannot drift apart.
 */
import type { CapturedCall } from "./batch.ts";
import { splitLines, truncateWithEllipsis, utf8ByteLength } from "./text-measure.ts";

/** Error lines longer than this are kept as their first characters plus an ellipsis. */
export const MAX_ERROR_LINE_CHARS = 400;

const COMMAND_KEYS = new Set(["command", "cmd"]);
const PATH_KEYS = new Set(["path", "paths", "file", "file_path", "filePath", "filename", "cwd", "dir", "directory"]);

export type ExitStatus =
  | { kind: "exit"; code: number; line: string }
  | { kind: "timeout"; seconds: number; code?: number; line: string }
  | { kind: "aborted"; line: string }
  | { kind: "no-exit-code"; line: string };

/** A status fact in a form a summary can be checked against. */
export type ExitFact = { kind: "code"; code: number } | { kind: "timeout" } | { kind: "aborted" } | { kind: "no-exit-code" };

export interface CallFacts {
  commands: string[];
  /** Paths named by the call's arguments (never cut). */
  argumentPaths: string[];
  /** Paths mentioned in the output, deduplicated, in order of first mention. */
  outputPaths: string[];
  /** Error lines of the output, trimmed, deduplicated, each cut to MAX_ERROR_LINE_CHARS. */
  errorLines: string[];
  status: ExitStatus | undefined;
  exitFacts: ExitFact[];
  lineCount: number;
  byteCount: number;
}

export function isCommandKey(key: string): boolean {
  return COMMAND_KEYS.has(key);
}

export function isPathKey(key: string): boolean {
  return PATH_KEYS.has(key);
}

/** A string argument that is a single path-looking token (kept whole even under a non-path key). */
export function looksLikePathValue(value: string): boolean {
  return value.length <= 1024 && value.includes("/") && !/\s/.test(value);
}

function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [];
}

// ---------------------------------------------------------------- exit status

const PI_EXIT = /^Command exited with code (-?\d+)$/;
const PI_TIMEOUT = /^Command timed out after (\d+(?:\.\d+)?) seconds(?:\. The shell exited with code (-?\d+))?/;
const PI_ABORTED = /^Command aborted$/;
const PI_NO_EXIT = /^Command terminated without an exit code$/;
/** `exit code 2`, `exited with code 2`, `exit status: 2`, `exit_code=2` anywhere in the output. */
const EXIT_MENTION = /\b(?:exit(?:ed)?\s+(?:with\s+)?(?:code|status)|exit_code|exitcode)\s*[:=]?\s*(-?\d+)\b/gi;

/** Pi's bash tool appends its status as the last line of the result text. */
export function parseExitStatus(text: string): ExitStatus | undefined {
  const lines = splitLines(text);
  let i = lines.length - 1;
  while (i >= 0 && lines[i].trim() === "") i--;
  if (i < 0) return undefined;
  const line = lines[i].trim();
  let m = PI_EXIT.exec(line);
  if (m) return { kind: "exit", code: Number(m[1]), line };
  m = PI_TIMEOUT.exec(line);
  if (m) return m[2] === undefined ? { kind: "timeout", seconds: Number(m[1]), line } : { kind: "timeout", seconds: Number(m[1]), code: Number(m[2]), line };
  if (PI_ABORTED.test(line)) return { kind: "aborted", line };
  if (PI_NO_EXIT.test(line)) return { kind: "no-exit-code", line };
  return undefined;
}

function exitFactsOf(text: string, status: ExitStatus | undefined): ExitFact[] {
  const facts: ExitFact[] = [];
  const codes = new Set<number>();
  if (status?.kind === "exit") codes.add(status.code);
  if (status?.kind === "timeout") facts.push({ kind: "timeout" });
  if (status?.kind === "timeout" && status.code !== undefined) codes.add(status.code);
  if (status?.kind === "aborted") facts.push({ kind: "aborted" });
  if (status?.kind === "no-exit-code") facts.push({ kind: "no-exit-code" });
  for (const m of text.matchAll(EXIT_MENTION)) codes.add(Number(m[1]));
  for (const code of codes) facts.push({ kind: "code", code });
  return facts;
}

export function exitFactLabel(fact: ExitFact): string {
  switch (fact.kind) {
    case "code":
      return `exit code ${fact.code}`;
    case "timeout":
      return "timed out";
    case "aborted":
      return "aborted";
    case "no-exit-code":
      return "terminated without an exit code";
  }
}

/** Whether a summary states the fact (wording may vary; the number must be there). */
export function summaryStatesExitFact(summary: string, fact: ExitFact): boolean {
  switch (fact.kind) {
    case "code":
      return new RegExp(`\\b(?:exit(?:ed)?(?:\\s+with)?(?:\\s+(?:code|status))?|exit_code|exitcode|code)\\s*[:=]?\\s*${escapeRegExp(String(fact.code))}(?![\\d.])`, "i").test(summary);
    case "timeout":
      return /timed out|time-?out/i.test(summary);
    case "aborted":
      return /abort/i.test(summary);
    case "no-exit-code":
      return /without an exit code|no exit code/i.test(summary);
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
}

// ---------------------------------------------------------------- error lines

const ERROR_WORDS =
  /\b(?:errors?|exception|failed|failure|fatal|traceback|panic(?:ked)?|segmentation fault)\b|ERR!|\bFAIL(?:ED)?\b|no such file|not found|permission denied/i;
const ERRNO_CODES = /\b(?:ENOENT|EACCES|EPERM|EEXIST|EISDIR|ENOTDIR|ENOTEMPTY|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EADDRINUSE)\b/;

export function isErrorLine(line: string): boolean {
  return ERROR_WORDS.test(line) || ERRNO_CODES.test(line);
}

/** Tools whose successful output is file content: a line saying "error" there is code, not a failure. */
const FILE_CONTENT_TOOLS = new Set(["read"]);

function errorLinesOf(lines: string[], isError: boolean, status: ExitStatus | undefined, toolName: string): string[] {
  if (!isError && FILE_CONTENT_TOOLS.has(toolName)) return [];
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (raw: string) => {
    const line = truncateWithEllipsis(raw.trim(), MAX_ERROR_LINE_CHARS);
    if (line !== "" && !seen.has(line)) {
      seen.add(line);
      out.push(line);
    }
  };
  for (const line of lines) if (isErrorLine(line)) add(line);
  // A failed non-shell tool (edit, read ...) states its error in prose: its first line is the error.
  if (isError && out.length === 0 && status === undefined) {
    const first = lines.find((l) => l.trim() !== "");
    if (first !== undefined) add(first);
  }
  return out;
}

// ---------------------------------------------------------------- paths

const SOURCE_EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|py|rs|go|java|kt|c|h|cc|cpp|hpp|cs|rb|php|swift|css|scss|html|vue|svelte|yml|yaml|toml|ini|sh|bash|zsh|txt|lock|sql|xml|csv|gradle|proto";
/** A token with at least one slash, or a bare file name with a common source extension. */
const PATH_TOKEN = new RegExp(
  `(?<![\\w.@+~/:\\\\-])(?:(?:~|\\.{1,2})?/?(?:[\\w.@+-]+/)+[\\w.@+-]*|[\\w@+-][\\w.@+-]*\\.(?:${SOURCE_EXTENSIONS}))(?![\\w/])`,
  "g",
);

function acceptPath(token: string): string | undefined {
  const path = token.replace(/[.,:;]+$/, "");
  if (!/[A-Za-z]/.test(path)) return undefined;
  if (/^(?:~|\.{1,2})?\/*$/.test(path)) return undefined;
  if (!path.includes("/")) return path; // bare name: matched only with a known extension
  if (/^(?:~|\.{1,2})?\//.test(path) || path.endsWith("/")) return path;
  const segments = path.split("/");
  const last = segments[segments.length - 1];
  if (segments.length >= 3 || /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(last)) return path;
  return undefined;
}

/** File paths mentioned in a text, deduplicated, in order of first mention. */
export function findPaths(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const m of text.matchAll(PATH_TOKEN)) {
    const path = acceptPath(m[0]);
    if (path !== undefined && !seen.has(path)) {
      seen.add(path);
      out.push(path);
    }
  }
  return out;
}

// ---------------------------------------------------------------- per call

export function extractCallFacts(call: CapturedCall): CallFacts {
  const commands: string[] = [];
  const argumentPaths: string[] = [];
  for (const [key, value] of Object.entries(call.arguments ?? {})) {
    if (isCommandKey(key)) commands.push(...stringsOf(value));
    else if (isPathKey(key)) argumentPaths.push(...stringsOf(value));
  }
  const lines = splitLines(call.resultText);
  const status = parseExitStatus(call.resultText);
  return {
    commands: commands.filter((c) => c !== ""),
    argumentPaths: argumentPaths.filter((p) => p !== ""),
    outputPaths: findPaths(call.resultText),
    errorLines: errorLinesOf(lines, call.isError, status, call.toolName),
    status,
    exitFacts: exitFactsOf(call.resultText, status),
    lineCount: lines.length,
    byteCount: utf8ByteLength(call.resultText),
  };
}
