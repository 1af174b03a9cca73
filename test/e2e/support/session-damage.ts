/** Damaging a session file the way crashes and bugs do, and a recall script, for the e2e tests of bad input. */
import { readFileSync, writeFileSync } from "node:fs";
import { CUSTOM_TYPE_FLUSH, type FlushRecord } from "../../../src/state/schema.ts";
import type { MainScript, MainStep, ScriptedToolCall } from "../../support/fake-anthropic/index.ts";
import { humanPromptIndex, humanPromptText, pendingOffsets, recallExchanges, stubRefs } from "./recall-wire.ts";

export type Entry = Record<string, unknown>;
export const customOf = (entries: Entry[], customType: string) => entries.filter((e) => e.type === "custom" && e.customType === customType);
/** The flush entries that carry a recall delta, in order. */
export const recallLinesOf = (entries: Entry[]) => customOf(entries, CUSTOM_TYPE_FLUSH).filter((e) => (e.data as FlushRecord).recall !== undefined);
export const recallEntriesOf = (entries: Entry[]) => recallLinesOf(entries).flatMap((e) => Object.values((e.data as FlushRecord).recall!.entries));

/** Rewrites the session file line by line (ids and parent ids kept, so Pi's tree stays whole). */
export function damageSession(file: string, edit: (entry: Entry, index: number) => Entry): void {
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim());
  writeFileSync(file, lines.map((l, i) => JSON.stringify(edit(JSON.parse(l) as Entry, i))).join("\n") + "\n");
}

/** Every line that parses, and how many did not (the runner's reader gives up on the first bad line). */
export function readEntriesLeniently(file: string): { entries: Entry[]; unreadable: number } {
  const entries: Entry[] = [];
  let unreadable = 0;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as Entry);
    } catch {
      unreadable++;
    }
  }
  return { entries, unreadable };
}

export const RECALL_PROMPT = "RECALL-ALL: bring back every pruned output verbatim.";

/** Answers the recall prompt from the request: one single-page `keeper_recall` per shown ref, five per step. */
export function recallScript(then: MainStep[]): MainScript {
  let cursor = 0;
  return ({ request }) => {
    const body = request.body;
    if (!humanPromptText(body).includes(RECALL_PROMPT)) return then[cursor++] ?? { text: "(script exhausted)" };
    const refs = stubRefs(body.messages, humanPromptIndex(body.messages));
    const calls: ScriptedToolCall[] = [];
    for (const [ref, offset] of pendingOffsets(refs, recallExchanges(body.messages))) {
      if (offset !== undefined && calls.length < 5) calls.push({ name: "keeper_recall", input: { ref, offset, limit: 200_000 } });
    }
    return calls.length === 0 ? { text: `Recovered ${refs.length} outputs.` } : { text: "Recalling.", toolCalls: calls };
  };
}

