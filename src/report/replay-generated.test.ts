/**
 * The replay's reconstruction pinned against Pi's own `buildSessionContext` on generated
 * sessions (compactions, `/tree` branches, model changes, context edits, custom entries and
 * messages ...; see support/session-generator.ts), written to disk by Pi's SessionManager.
 *
 * For every assistant message of a generated file (the active branch and abandoned ones:
 * each was a real request), three views must agree:
 *  - live: `sessionManager.buildSessionContext()` snapshotted just before the assistant was
 *    appended (what Pi's agent held);
 *  - Pi: `buildSessionContext(entries, assistant.parentId)` over the in-memory entries;
 *  - replay: `recordedRequestPoints` over the file text, and the context `replaySession`
 *    hands to `transformContext` / serializes.
 * The one normalization: Pi's in-memory messages are compared as JSON (`asWritten`), since
 * the replay reads the file and a key holding `undefined` (a custom message without
 * `details`, say) is not written. Nothing else is normalized.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionContext, convertToLlm, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { DEFAULT_ESTIMATOR_OPTIONS } from "../cache/token-estimator.ts";
import { serializeForAnthropic } from "./anthropic-wire.ts";
import { recordedRequestPoints } from "./pi-session-contexts.ts";
import { DEFAULT_UNKNOWN_PROMPT, replaySession, unknownPromptText, type ReplayResult } from "./replay.ts";
import { parseSessionText } from "./session-file.ts";
import { asWritten, generateSession, sessionPlanArb, type ExpectedRequest, type GeneratedSession } from "../../test/support/report/session-generator.ts";

const dir = mkdtempSync(join(tmpdir(), "keeper-replay-gen-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SEED = 20251107;
const RUNS = 60;
const UNKNOWN_PROMPT = unknownPromptText(DEFAULT_UNKNOWN_PROMPT, DEFAULT_ESTIMATOR_OPTIONS);

const billed = (e: ExpectedRequest) => {
  const u = e.assistant.usage;
  return u.input + u.output + u.cacheRead + u.cacheWrite > 0;
};

/** 1-based line of each entry id in the file text. */
function linesById(text: string): Map<string, number> {
  const out = new Map<string, number>();
  text.split("\n").forEach((raw, i) => {
    if (raw.trim()) out.set((JSON.parse(raw) as { id: string }).id, i + 1);
  });
  return out;
}

function replayCapturing(file: string, text: string): { replay: ReplayResult; seen: AgentMessage[][] } {
  const seen: AgentMessage[][] = [];
  const replay = replaySession({
    file,
    text,
    ttlOnlyAnalysis: false,
    transformContext: (messages, i) => {
      seen[i] = structuredClone(messages);
      return messages;
    },
  });
  return { replay, seen };
}

/** Every check of the module doc for one generated session. */
function checkAgainstPi(gen: GeneratedSession): void {
  const { file, text, sessionManager: sm, expected } = gen;
  const entries = sm.getEntries();
  const byId = new Map<string, SessionEntry>(entries.map((e) => [e.id, e]));
  const lines = linesById(text);

  const parsed = parseSessionText(text, file);
  expect(parsed.diagnostics).toEqual([]);
  const { points, userMessages, diagnostics } = recordedRequestPoints(parsed);
  expect(diagnostics).toEqual([]);
  expect(points.map((p) => p.entryId)).toEqual(expected.map((e) => e.entryId));
  expect(userMessages).toBe(entries.filter((e) => e.type === "message" && e.message.role === "user").length);
  points.forEach((point, i) => {
    const want = expected[i];
    const pi = buildSessionContext(entries, byId.get(want.entryId)!.parentId, byId);
    expect(asWritten(pi.messages)).toEqual(asWritten(want.context.messages));
    expect(pi.thinkingLevel).toBe(want.context.thinkingLevel);
    expect(point.context).toEqual(asWritten(pi.messages));
    expect(point.thinkingLevel).toBe(pi.thinkingLevel);
    expect(point.assistant).toEqual(asWritten([want.assistant as AgentMessage])[0] as typeof point.assistant);
    expect(point.line).toBe(lines.get(want.entryId)!);
  });

  // The active branch (path to the last leaf) is covered like the abandoned branches.
  const active = sm.getBranch().filter((e) => e.type === "message" && e.message.role === "assistant");
  const pointIds = new Set(points.map((p) => p.entryId));
  expect(active.every((e) => pointIds.has(e.id))).toBe(true);

  const { replay, seen } = replayCapturing(file, text);
  const sent = expected.filter((e) => billed(e));
  expect(replay.diagnostics).toEqual([]);
  expect(replay.requests.map((r) => r.entryId)).toEqual(sent.map((e) => e.entryId));
  expect(replay.skipped).toEqual({ unbilled: expected.filter((e) => !billed(e)).length });
  expect(replay.userPrompts).toBe(userMessages);
  replay.requests.forEach((request, i) => {
    const want = sent[i];
    const context = asWritten(want.context.messages);
    expect(seen[i]).toEqual(context);
    expect(request.contextMessages).toBe(context.length);
    expect(request.line).toBe(lines.get(want.entryId)!);
    expect(request.timestamp).toBe(want.assistant.timestamp);
    const a = want.assistant;
    const body = serializeForAnthropic(convertToLlm(context), {
      model: { provider: a.provider, api: a.api, id: a.model },
      cacheRetention: "short",
      unknownPrompt: UNKNOWN_PROMPT,
    });
    expect(request.body).toEqual(body);
  });
  // Every tool_use in every rebuilt request is answered (Pi's synthetic results included).
  expect(replay.summary.pairingViolations).toBe(0);
}

describe("generated sessions: replay matches Pi's buildSessionContext", () => {
  test("coverage of the generator (fixed seed): every feature occurs", () => {
    const totals: Record<string, number> = {};
    let sessions = 0;
    let lines = 0;
    for (const plan of fc.sample(sessionPlanArb, { seed: SEED, numRuns: RUNS })) {
      const gen = generateSession(plan, dir);
      sessions++;
      lines += gen.text.split("\n").filter((l) => l.trim()).length;
      for (const [k, v] of Object.entries(gen.counts)) totals[k] = (totals[k] ?? 0) + v;
    }
    const features = [
      "system_message", "system_update", "user", "assistant_ok", "assistant_aborted", "assistant_error", "assistant_non_anthropic",
      "tool_result", "model_change", "thinking_change", "custom_entry", "custom_message", "bash_execution", "label",
      "session_info", "usage_entry", "compaction", "compaction_retain_none", "branch", "branch_with_summary",
      "context_edit_omit", "context_edit_replace",
    ];
    for (const f of features) expect([f, totals[f] ?? 0]).not.toEqual([f, 0]);
    if (process.env.REPLAY_GEN_STATS) console.log(JSON.stringify({ sessions, lines, totals }));
  });

  test("property: every recorded assistant's rebuilt context equals Pi's", () => {
    fc.assert(
      fc.property(sessionPlanArb, (plan) => {
        checkAgainstPi(generateSession(plan, dir));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

/** Non-empty lines of `text` as [line number, raw] pairs. */
const contentLines = (text: string): Array<[number, string]> =>
  text.split("\n").flatMap((raw, i): Array<[number, string]> => (raw.trim() ? [[i + 1, raw]] : []));

/** Requests of a replay, reduced to what identifies and what was sent. */
const sentRequests = (r: ReplayResult) => r.requests.map((q) => ({ entryId: q.entryId, line: q.line, body: q.body }));

describe("generated sessions, damaged on disk", () => {
  const damagedArb = fc.tuple(sessionPlanArb, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }));

  test("truncated last line: named by file and line; every other request replays unchanged", () => {
    fc.assert(
      fc.property(damagedArb, ([plan]) => {
        const gen = generateSession(plan, dir);
        const full = replaySession({ file: gen.file, text: gen.text, ttlOnlyAnalysis: false });
        const [lastLine, raw] = contentLines(gen.text).at(-1)!;
        const text = `${gen.text.split("\n").slice(0, lastLine - 1).join("\n")}\n${raw.slice(0, Math.floor(raw.length / 2))}`;
        const cut = replaySession({ file: gen.file, text, ttlOnlyAnalysis: false });
        expect(cut.diagnostics).toEqual([{ file: gen.file, line: lastLine, message: "not valid JSON (truncated last line?); skipped" }]);
        expect(sentRequests(cut)).toEqual(sentRequests(full).filter((q) => q.line !== lastLine));
      }),
      { seed: SEED, numRuns: 25 },
    );
  });

  test("unknown entry type spliced into the parent chain: reported, contexts unchanged", () => {
    fc.assert(
      fc.property(damagedArb, ([plan, where]) => {
        const gen = generateSession(plan, dir);
        const full = replaySession({ file: gen.file, text: gen.text, ttlOnlyAnalysis: false });
        const lines = gen.text.split("\n");
        // Re-parent a random entry (not the header) onto a new entry of an unknown type.
        const at = 1 + Math.floor(where * (contentLines(gen.text).length - 1));
        const child = JSON.parse(lines[at]) as { id: string; parentId: string | null };
        const odd = JSON.stringify({ type: "future_feature", id: "fut00001", parentId: child.parentId, timestamp: "2025-01-01T00:00:00Z", blob: [1, 2] });
        lines[at] = JSON.stringify({ ...child, parentId: "fut00001" });
        lines.splice(at, 0, odd);
        const r = replaySession({ file: gen.file, text: lines.join("\n"), ttlOnlyAnalysis: false });
        expect(r.diagnostics).toEqual([{ file: gen.file, line: at + 1, message: 'unknown entry type "future_feature"; kept, contributes nothing to context' }]);
        const shifted = sentRequests(full).map((q) => ({ ...q, line: q.line > at ? q.line + 1 : q.line }));
        expect(sentRequests(r)).toEqual(shifted);
      }),
      { seed: SEED, numRuns: 25 },
    );
  });

  test("unreadable middle line: its descendants are reported and skipped, the rest replays unchanged", () => {
    fc.assert(
      fc.property(damagedArb, ([plan, where]) => {
        const gen = generateSession(plan, dir);
        const numbered = contentLines(gen.text);
        fc.pre(numbered.length >= 4);
        // Any entry line but the header and the last line.
        const [badLine, raw] = numbered[1 + Math.floor(where * (numbered.length - 2))];
        const lost = (JSON.parse(raw) as { id: string }).id;
        const lines = gen.text.split("\n");
        lines[badLine - 1] = raw.slice(0, 25);
        const full = replaySession({ file: gen.file, text: gen.text, ttlOnlyAnalysis: false });
        const r = replaySession({ file: gen.file, text: lines.join("\n"), ttlOnlyAnalysis: false });

        const sm = gen.sessionManager;
        const below = (id: string) => sm.getBranch(id).some((e) => e.id === lost);
        const affected = gen.expected.filter((e) => e.entryId !== lost && below(e.entryId));
        const lineOf = linesById(gen.text);
        const expectedDiagnostics = [{ file: gen.file, line: badLine, message: "not valid JSON; skipped" }];
        if (affected.length > 0) {
          const n = affected.length;
          expectedDiagnostics.push({
            file: gen.file,
            line: lineOf.get(affected[0].entryId)!,
            message: `${n} recorded request${n === 1 ? " descends" : "s descend"} from entry "${lost}", which is not in the file (unreadable line?); context cannot be rebuilt, skipped`,
          });
        }
        expect(r.diagnostics).toEqual(expectedDiagnostics);
        const gone = new Set([lost, ...affected.map((e) => e.entryId)]);
        expect(sentRequests(r)).toEqual(sentRequests(full).filter((q) => !gone.has(q.entryId)));
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  test("parent links that loop: reported once, no hang, the sound branch replays", () => {
    const gen = generateSession(fc.sample(sessionPlanArb, { seed: SEED, numRuns: 1 })[0], dir);
    const full = replaySession({ file: gen.file, text: gen.text, ttlOnlyAnalysis: false });
    const msg = (id: string, parentId: string, message: object) => JSON.stringify({ type: "message", id, parentId, timestamp: "2025-01-01T00:00:00Z", message });
    const a = full.requests[0];
    const assistantLine = gen.text.split("\n")[a.line - 1];
    const looped = [
      msg("loop0001", "loop0002", { role: "user", content: "one", timestamp: 1 }),
      msg("loop0002", "loop0001", { role: "user", content: "two", timestamp: 2 }),
      JSON.stringify({ ...JSON.parse(assistantLine), id: "loop0003", parentId: "loop0002" }),
    ];
    const text = `${gen.text.trimEnd()}\n${looped.join("\n")}\n`;
    const loopLine = gen.text.trimEnd().split("\n").length + 3;
    const r = replaySession({ file: gen.file, text, ttlOnlyAnalysis: false });
    expect(r.diagnostics).toEqual([
      { file: gen.file, line: loopLine, message: '1 recorded request has parent links that loop through entry "loop0002"; context cannot be rebuilt, skipped' },
    ]);
    expect(sentRequests(r)).toEqual(sentRequests(full));
  });

  test("not JSONL (the session pretty-printed as one JSON document): clear diagnostics, nothing replayed", () => {
    const gen = generateSession(fc.sample(sessionPlanArb, { seed: SEED, numRuns: 1 })[0], dir);
    const pretty = JSON.stringify(contentLines(gen.text).map(([, raw]) => JSON.parse(raw)), null, 2);
    const r = replaySession({ file: gen.file, text: pretty });
    expect(r.requests).toEqual([]);
    expect(r.diagnostics[0]).toEqual({ file: gen.file, line: 1, message: "not valid JSON; skipped" });
    expect(r.diagnostics.at(-1)).toEqual({ file: gen.file, line: 0, message: "no session entries found: not a Pi session JSONL file?" });
  });
});
