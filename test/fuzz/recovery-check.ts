/**
 * Every ref a rendered request offers (`ref=<toolCallId>@<ts>#<n>` in a stub, an alias, a
 * compressed chain or purged arguments) must bring back its original byte-exact through
 * `keeper_recall`, page after page, from the branch or from its spill file.
 */
import { pairToolCalls } from "../../src/prune/occurrence.ts";
import { isToolResult, toolResultText, type ContextMessage } from "../../src/session/messages.ts";
import type { RecallResult } from "./engine-adapter.ts";

export interface RecoveryTally {
  /** Refs offered by some request of the session. */
  offered: Set<string>;
  /** Of those, refs recovered byte-exact every time they were checked. */
  recovered: Set<string>;
}

/** Most pages read per original (a tiny `pageChars` over a huge output reads bigger pages). */
const MAX_PAGES = 8;

/** Whether `text` offers `ref=<key>` (and not a longer key that starts with it). */
export function offersRef(text: string, key: string): boolean {
  const needle = `ref=${key}`;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    const next = text[at + needle.length];
    if (next === undefined || !/[0-9]/.test(next)) return true;
  }
  return false;
}

export async function checkRecovery(input: {
  /** The context the render started from: messages it left as they were offer nothing. */
  raw: readonly ContextMessage[];
  rendered: readonly ContextMessage[];
  /** Raw messages of the branch: where the originals are. */
  branchMessages: readonly ContextMessage[];
  pageChars: number;
  tally: RecoveryTally;
  recall: (ref: string, offset: number, limit: number) => Promise<RecallResult>;
}): Promise<string | undefined> {
  const untouched = new Set(input.raw);
  const text = JSON.stringify(input.rendered.filter((m) => !untouched.has(m)));
  if (!text.includes("ref=")) return undefined;
  const raw = input.branchMessages;
  for (const call of pairToolCalls(raw).calls) {
    if (call.resultIndex === undefined || !offersRef(text, call.key)) continue;
    const result = raw[call.resultIndex];
    if (!isToolResult(result)) continue;
    const original = toolResultText(result);
    input.tally.offered.add(call.key);
    const limit = Math.max(input.pageChars, Math.ceil(original.length / MAX_PAGES));
    let got = "";
    let offset: number | undefined = 0;
    while (offset !== undefined) {
      const page = await input.recall(call.key, offset, limit);
      if (page.isError || page.details.status !== "ok") return `ref=${call.key}: ${page.details.status}: ${page.text.split("\n")[0]}`;
      got += page.text.slice(page.details.bodyStart);
      offset = page.details.nextOffset;
    }
    if (got !== original) return `ref=${call.key}: recalled ${got.length} chars, the original has ${original.length} (not byte-exact)`;
    input.tally.recovered.add(call.key);
  }
  return undefined;
}
