/**
 * A generated Pi session (entries as Pi writes them: a session header, then message entries
 * linked by `parentId`) for the tests of Pi's threshold compaction in the replay
 * (`src/report/pi-compaction.ts`): prompts, each a tool loop of `read` calls whose results are
 * `resultChars` characters long (Pi estimates characters / 4), then a text answer. Every
 * answer's recorded usage is what the request before it carried by Pi's estimate plus
 * `overhead`, so a recording of bare Pi is consistent with itself: as Anthropic reports it, the
 * previous request's prompt read from the cache (nothing at the first request and right after a
 * compaction, which changes the prefix), the rest written.
 *
 * Optionally a keeper entry (the file then reads as recorded with the keeper) and a recorded
 * compaction (an entry of Pi's shape after a given answer).
 */
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { CURRENT_SESSION_VERSION, estimateTokens, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { assistant, call, result, text, user } from "../message-factory.ts";

export interface CompactionSessionOptions {
  /** Tool rounds of each prompt (each prompt then ends with a text answer). */
  rounds: readonly number[];
  resultChars: number;
  /** Characters of each prompt's closing text answer. */
  answerChars?: number;
  /** Tokens each request carries beyond Pi's estimate of its messages (tools, framing). */
  overhead?: number;
  /** Output tokens of every answer (default 20). */
  output?: number;
  /** Output tokens of the text answer closing each prompt (default `output`). */
  closingOutput?: number;
  /** Append a keeper entry after the first answer (a keeper recording). */
  keeperEntry?: boolean;
  /** Insert a recorded compaction after the answer of this request (index among requests). */
  compactAfter?: { request: number; fromHook?: boolean; tokensBefore: number; firstKeptRequest: number; usage?: { input: number; output: number } };
  /** Start time (ms). */
  start?: number;
}

export interface CompactionSession {
  text: string;
  entries: SessionEntry[];
  /** Per request: the entry id of its answer and of its context's last entry. */
  requests: Array<{ answerId: string; leafId: string }>;
  systemText: string;
}

export const SYSTEM_TEXT = "You are a test assistant.";
const toolResultText = (chars: number, k: number) => `result ${k}: `.padEnd(chars, "x");

export function compactionSession(o: CompactionSessionOptions): CompactionSession {
  const overhead = o.overhead ?? 1_000;
  const output = o.output ?? 20;
  let t = o.start ?? Date.parse("2026-01-05T10:00:00.000Z");
  const entries: SessionEntry[] = [];
  const requests: CompactionSession["requests"] = [];
  // What Pi's context holds now (with the entry each message came from): the recorded usage counts it.
  const context: AgentMessage[] = [];
  const contextIds: string[] = [];
  let parentId: string | null = null;
  // The last request's prompt (what the next one reads from the cache); 0 after a compaction.
  let cached = 0;
  const add = (e: Record<string, unknown>) => {
    const id = `e${entries.length + 1}`;
    entries.push({ ...e, id, parentId, timestamp: new Date(t).toISOString() } as SessionEntry);
    parentId = id;
    return id;
  };
  const message = (m: AgentMessage) => {
    const id = add({ type: "message", message: m });
    context.push(m);
    contextIds.push(id);
    return id;
  };
  const answer = (content: Parameters<typeof assistant>[0], out: number) => {
    const leafId = parentId!;
    const sent = overhead + context.reduce((n, m) => n + estimateTokens(m as never), 0);
    const a = assistant(content, t);
    a.usage = { ...a.usage, input: 0, cacheRead: cached, cacheWrite: sent - cached, output: out, totalTokens: sent + out };
    cached = sent;
    t += 1_000;
    const answerId = message(a);
    requests.push({ answerId, leafId });
    if (o.keeperEntry && requests.length === 1) add({ type: "custom", customType: "context-keeper/recall", data: {} });
    const c = o.compactAfter;
    if (c && requests.length - 1 === c.request) {
      t += 1;
      cached = 0;
      const firstKept = requests[c.firstKeptRequest]!.answerId;
      const from = contextIds.indexOf(firstKept);
      const summary = { role: "compactionSummary", summary: "Recorded summary.", tokensBefore: c.tokensBefore, timestamp: t } as unknown as AgentMessage;
      context.splice(1, from - 1, summary);
      contextIds.splice(1, from - 1, "summary");
      add({
        type: "compaction",
        summary: "Recorded summary.",
        firstKeptEntryId: firstKept,
        tokensBefore: c.tokensBefore,
        fromHook: c.fromHook ?? false,
        ...(c.usage ? { usage: { input: c.usage.input, output: c.usage.output, cacheRead: 0, cacheWrite: 0, totalTokens: c.usage.input + c.usage.output } } : {}),
      });
    }
  };
  message({ role: "system", content: SYSTEM_TEXT, timestamp: t } as AgentMessage);
  let n = 0;
  o.rounds.forEach((rounds, p) => {
    t += 60_000;
    message(user(`prompt ${p}`, t));
    for (let r = 0; r < rounds; r++, n++) {
      t += 1_000;
      answer([call(`c${n}`, "read", { path: `src/f${n}.ts` })], output);
      t += 1_000;
      message(result(`c${n}`, "read", toolResultText(o.resultChars, n), t));
    }
    t += 1_000;
    answer([text(`done ${p}`.padEnd(o.answerChars ?? 8, "."))], o.closingOutput ?? output);
  });
  const header = { type: "session", version: CURRENT_SESSION_VERSION, id: "generated-compaction-session", timestamp: new Date(o.start ?? 0).toISOString(), cwd: "/tmp/project" };
  const text_ = [header, ...entries].map((e) => JSON.stringify(e)).join("\n") + "\n";
  return { text: text_, entries, requests, systemText: SYSTEM_TEXT };
}
