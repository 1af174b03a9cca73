/**
 * Texts that replace pruned content. They are derived only from persisted state, so the
 * same state always renders the same bytes.
 */
import { RECALL_TOOL_NAME } from "./config.ts";
import type { KeeperState, SummaryRecord } from "../state/schema.ts";
import { isCommandKey, isPathKey, looksLikePathValue } from "../summarize/output-facts.ts";

export const STUB_PREFIX = "[context-keeper]";

export interface StubIndex {
  /** Stubbed occurrence key -> the stub text its result renders as. */
  textByKey: Map<string, string>;
  /**
   * Keys whose stub points at another ref (the batch's summary carrier, an alias target) ->
   * that ref, and the stub text to use instead when the request does not hold that ref (a
   * stub never names a ref recall cannot produce, nor sends the model to a stub it cannot see).
   */
  pointers: Map<string, { ref: string; standalone: string }>;
}

function recordByCoveredKey(state: KeeperState): Map<string, SummaryRecord> {
  const out = new Map<string, SummaryRecord>();
  for (const r of Object.values(state.summaries)) for (const k of r.coveredKeys) out.set(k, r);
  return out;
}

/** What a stub and a chain header say about getting only a part back. */
export const PART_HINT = "(pattern or startLine/endLine for part)";

/**
 * `[context-keeper] output pruned; keeper_recall ref=<key> (pattern or startLine/endLine for
 * part): <summary>` — the head is the shortest text that still says what happened and how to get
 * the output, or the part of it the model needs, back.
 */
export function stubText(key: string, summary: string | undefined): string {
  const head = `${STUB_PREFIX} output pruned; ${RECALL_TOOL_NAME} ref=${key} ${PART_HINT}`;
  return summary === undefined ? `${head}.` : `${head}: ${summary}`;
}

const cache = new WeakMap<KeeperState, StubIndex>();

/**
 * Stub text of every stubbed or aliased key. A summary is rendered once: within one batch only
 * the first stubbed result carries it and the others point at that stub; an output identical to
 * an earlier one points at the earlier ref instead of repeating its summary, so a duplicate
 * costs one short line however long the original's summary is.
 * Memoized per state object (state is never mutated in place).
 */
export function stubIndexOf(state: KeeperState): StubIndex {
  const hit = cache.get(state);
  if (hit) return hit;
  const byKey = recordByCoveredKey(state);
  const stubbed = new Set(state.frontier.stubbedKeys);
  const textByKey = new Map<string, string>();
  const pointers = new Map<string, { ref: string; standalone: string }>();

  for (const key of state.frontier.stubbedKeys) {
    const record = byKey.get(key);
    if (!record) {
      textByKey.set(key, stubText(key, undefined));
      continue;
    }
    const carrier = record.coveredKeys.find((k) => stubbed.has(k));
    if (carrier === key || carrier === undefined) {
      textByKey.set(key, stubText(key, record.summary.text));
      continue;
    }
    textByKey.set(key, stubText(key, `summarized with ref=${carrier} (same tool batch).`));
    pointers.set(key, { ref: carrier, standalone: stubText(key, record.summary.text) });
  }
  for (const [key, target] of Object.entries(state.frontier.aliases)) {
    if (textByKey.has(key)) continue;
    const summary = byKey.get(target)?.summary.text;
    textByKey.set(key, stubText(key, `identical to the output of ref=${target}.`));
    pointers.set(key, { ref: target, standalone: stubText(key, summary) });
  }
  const index = { textByKey, pointers };
  cache.set(state, index);
  return index;
}

/** Arguments that replace a purged failed call's arguments. */
export function purgedArguments(key: string): { _purged: string } {
  return { _purged: `arguments of a failed call removed by context-keeper; recall ref=${key}` };
}

const MAX_ARG_CHARS = 80;

/** One argument as a call line shows it, and whether the line leaves part of it out. */
function describeArgument(k: string, v: unknown): { text: string; cut: boolean } {
  if (typeof v === "string" && (isCommandKey(k) || isPathKey(k) || looksLikePathValue(v))) return { text: `${k}=${v}`, cut: false };
  if (isPathKey(k) && Array.isArray(v) && v.every((x) => typeof x === "string")) return { text: `${k}=${v.join(", ")}`, cut: false };
  const s = typeof v === "string" ? v : JSON.stringify(v);
  const flat = (s ?? "").replace(/\s+/g, " ");
  const cut = flat.length > MAX_ARG_CHARS;
  return { text: `${k}=${cut ? `${flat.slice(0, MAX_ARG_CHARS)}…` : flat}`, cut: cut || flat !== (s ?? "") };
}

/**
 * One-line description of a call for compressed chains: `read(path=src/a.ts)`. Commands
 * and paths stay whole and verbatim (the facts a summary must never lose, as in the
 * extractive summary); other long values are flattened and cut.
 */
export function describeCall(toolName: string, args: Record<string, unknown>): string {
  return `${toolName}(${Object.entries(args).map(([k, v]) => describeArgument(k, v).text).join(", ")})`;
}

/** Whether `describeCall` leaves out part of these arguments (a value cut or its whitespace flattened). */
export function describeCallCuts(args: Record<string, unknown>): boolean {
  return Object.entries(args).some(([k, v]) => describeArgument(k, v).cut);
}

/** What a collapsed chain's line of a failed call whose arguments it cut says about getting them back (its ref ends the line). */
export const FAILED_ARGUMENTS_HINT = "arguments=true recalls its arguments";
