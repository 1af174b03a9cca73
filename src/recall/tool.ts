/**
 * `keeper_recall`: give the model back a pruned tool output, verbatim — its images too, as image
 * blocks beside the first page — page by page, or only the part it needs — a line range, or the lines matching a pattern with a few lines of context
 * (`partial.ts`). `executeRecall` is the whole behaviour over plain data; the tool definition
 * only wires Pi's execute signature to it.
 */
import type { ExtensionContext, ToolDefinition } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { Static } from "typebox";
import { RECALL_TOOL_NAME } from "../prune/config.ts";
import type { ContextMessage, ImageContent } from "../session/messages.ts";
import { DEFAULT_PAGE_CHARS, pageOf } from "./paging.ts";
import { DEFAULT_CONTEXT_LINES, type PartSlice, partOf, wantsPart } from "./partial.ts";
import { findResultByRef, type ReadSpill, resolveOriginal } from "./original-source.ts";
import type { RecallEntry, RecallIndex } from "./recall-index.ts";
import { lookupRecall } from "./recall-lookup.ts";
import { pairToolCalls } from "../prune/occurrence.ts";

export const recallParameters = Type.Object({
  ref: Type.Optional(Type.String({ description: "The ref shown in a pruned-output stub (e.g. toolu_01…@1763681634000#0)." })),
  toolCallId: Type.Optional(Type.String({ description: "Provider tool-call id, when no ref is at hand." })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: "Character offset: the next offset a page gave." })),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: `Characters per page (default ${DEFAULT_PAGE_CHARS}).` })),
  startLine: Type.Optional(Type.Integer({ minimum: 1, description: "Part: first line." })),
  endLine: Type.Optional(Type.Integer({ minimum: 1, description: "Part: last line." })),
  pattern: Type.Optional(Type.String({ description: `Part: lines matching this regex, ±${DEFAULT_CONTEXT_LINES} lines.` })),
  arguments: Type.Optional(Type.Boolean({ description: "true: the call's arguments (JSON) instead of its output, e.g. what a failed write tried to write." })),
});

export type RecallParams = Static<typeof recallParameters>;

export type RecallStatus = "ok" | "unknown" | "ambiguous" | "unavailable" | "invalid";

export interface RecallDetails {
  status: RecallStatus;
  ref?: string;
  toolCallId?: string;
  toolName?: string;
  source?: "session" | "spill" | "branch";
  start?: number;
  end?: number;
  totalChars?: number;
  startByte?: number;
  endByte?: number;
  totalBytes?: number;
  nextOffset?: number;
  /** Where the verbatim page begins inside `text` (after the header line). */
  bodyStart?: number;
  /** What the page is of: the call's output, or its arguments (a failed call whose arguments the render purged). */
  part?: "output" | "arguments";
  /** Refs offered to the model (ambiguous id, near matches). */
  candidates?: string[];
  /** A part (line range or pattern): the original's line count, the parts given, and how many lines matched. */
  totalLines?: number;
  /** How many images the result returns beside the text (the original's, with its first page or a part). */
  images?: number;
  slices?: PartSlice[];
  matches?: number;
}

export interface RecallResult {
  text: string;
  /** The original's images, returned beside the text of its first page or a part of it. */
  images?: ImageContent[];
  details: RecallDetails;
  isError: boolean;
}

function describeEntry(e: RecallEntry): string {
  return `- ref ${e.occurrenceKey} · ${e.toolName}${e.isError ? " (error)" : ""} · ${new Date(e.timestamp).toISOString()} · ${e.bytes} bytes`;
}

function failure(status: RecallStatus, text: string, extra: Partial<RecallDetails> = {}): RecallResult {
  return { text, details: { status, ...extra }, isError: true };
}

interface Recovered {
  ref: string;
  toolCallId: string;
  toolName: string;
  text: string;
  images?: ImageContent[];
  from: "session" | "spill" | "branch";
  part?: "arguments";
}

/** The original's images go back with its first page or a part (never with later pages: once is enough). */
function withImages(result: RecallResult, original: Recovered, first: boolean): RecallResult {
  if (!first || !original.images || original.images.length === 0) return result;
  return { ...result, images: original.images, details: { ...result.details, images: original.images.length } };
}

function headOf(original: Recovered): string {
  return `[${RECALL_TOOL_NAME} ref=${original.ref} tool=${original.toolName}${original.part ? ` ${original.part}` : ""}]`;
}

function partResult(original: Recovered, params: RecallParams): RecallResult {
  const base = { ref: original.ref, toolCallId: original.toolCallId, toolName: original.toolName };
  if (params.offset !== undefined) return failure("invalid", "offset pages the whole output: give either offset, or startLine/endLine/pattern for a part.", base);
  const head = headOf(original);
  const part = partOf(original.text, params, params.limit ?? DEFAULT_PAGE_CHARS, (summary) => head.length + 1 + summary.length + 1);
  if ("error" in part) return failure("invalid", `Cannot return that part of ${original.ref}: ${part.error}`, base);
  return withImages({
    text: `${head} ${part.summary}\n${part.body}`,
    details: { status: "ok", ...base, source: original.from, totalChars: original.text.length, totalLines: part.totalLines, slices: part.slices, ...(part.matches !== undefined ? { matches: part.matches } : {}), part: original.part ?? "output" },
    isError: false,
  }, original, true);
}

function pageResult(original: Recovered, params: RecallParams): RecallResult {
  if (wantsPart(params)) return partResult(original, params);
  const base = { ref: original.ref, toolCallId: original.toolCallId, toolName: original.toolName };
  const offset = params.offset ?? 0;
  if (offset > 0 && offset >= original.text.length) {
    return failure("invalid", `Offset ${offset} is past the end of ${original.ref} (${original.text.length} characters).`, base);
  }
  const page = pageOf(original.text, offset, params.limit ?? DEFAULT_PAGE_CHARS);
  const more = page.nextOffset !== undefined ? `next offset ${page.nextOffset}` : "end of output";
  const header = `${headOf(original)} chars ${page.start}-${page.end} of ${page.totalChars} (bytes ${page.startByte}-${page.endByte} of ${page.totalBytes}), ${more}`;
  return withImages({
    text: `${header}\n${page.text}`,
    details: {
      status: "ok",
      ...base,
      source: original.from,
      start: page.start,
      end: page.end,
      totalChars: page.totalChars,
      startByte: page.startByte,
      endByte: page.endByte,
      totalBytes: page.totalBytes,
      nextOffset: page.nextOffset,
      bodyStart: header.length + 1,
      part: original.part ?? "output",
    },
    isError: false,
  }, original, offset === 0);
}

/** The branch by ref, as a recovered original (or why not). */
function fromBranch(branchMessages: readonly ContextMessage[], ref: string): { ok: true; original: Recovered } | { ok: false; reason: string } {
  const found = findResultByRef(branchMessages, ref);
  if (!found.ok) return found;
  return { ok: true, original: { ref: ref.trim(), toolCallId: found.toolCallId, toolName: found.toolName, text: found.text, ...(found.images ? { images: found.images } : {}), from: "branch" } };
}

/** The arguments of the call a ref names, as the request carried them (JSON), when the branch holds the call. */
function argumentsByRef(branchMessages: readonly ContextMessage[], ref: string): Recovered | undefined {
  const call = pairToolCalls(branchMessages).calls.find((c) => c.key === ref);
  if (!call) return undefined;
  return { ref, toolCallId: call.toolCallId, toolName: call.toolName, text: JSON.stringify(call.arguments ?? {}), from: "session", part: "arguments" };
}

/** `arguments: true`: the call's arguments as the request carried them, paged like an output. */
function argumentsResult(branchMessages: readonly ContextMessage[], ref: string, params: RecallParams): RecallResult {
  // A bare tool-call id names the call when the branch holds one call of that id.
  const byId = pairToolCalls(branchMessages).calls.filter((c) => c.toolCallId === ref);
  const args = argumentsByRef(branchMessages, ref) ?? (byId.length === 1 ? argumentsByRef(branchMessages, byId[0]!.key) : undefined);
  if (args) return pageResult(args, params);
  return failure("unknown", `No call with ref "${ref}" on this branch, so its arguments cannot be given back. Pass the ref a stub or a chain's call line shows.`, { ref });
}

export async function executeRecall(options: {
  params: RecallParams;
  store: RecallIndex;
  branchMessages: readonly ContextMessage[];
  readSpill?: ReadSpill;
  /**
   * Refs of failed calls whose arguments the render purged while it still shows their output
   * (`purgedArgumentsOnlyKeys`): what they hide, and so what their ref brings back, is the arguments.
   */
  purgedArguments?: ReadonlySet<string>;
}): Promise<RecallResult> {
  const { params, store } = options;
  const purged = (ref: string) => (options.purgedArguments?.has(ref) ? argumentsByRef(options.branchMessages, ref) : undefined);
  const lookup = lookupRecall(store, { ref: params.ref, toolCallId: params.toolCallId });
  if (lookup.kind === "invalid") return failure("invalid", lookup.message);
  if (params.arguments === true && lookup.kind !== "ambiguous") return argumentsResult(options.branchMessages, lookup.kind === "found" ? lookup.entry.occurrenceKey : lookup.query.trim(), params);
  if (lookup.kind === "ambiguous") {
    const refs = lookup.entries.map((e) => e.occurrenceKey);
    const text = [
      `Tool call id "${lookup.toolCallId}" occurs ${lookup.entries.length} times in this session (providers can reuse ids). Call ${RECALL_TOOL_NAME} again with one of these refs (newest first):`,
      ...lookup.entries.map(describeEntry),
    ].join("\n");
    return failure("ambiguous", text, { toolCallId: lookup.toolCallId, candidates: refs });
  }
  if (lookup.kind === "unknown") {
    const args = purged(lookup.query.trim());
    if (args) return pageResult(args, params);
    // Not indexed (entries lost, or skipped as unreadable): the ref alone finds the original on the branch.
    const branch = fromBranch(options.branchMessages, lookup.query);
    if (branch.ok) return pageResult(branch.original, params);
    const total = Object.keys(store.entries).length;
    const lines = [
      `No pruned output has ref or tool-call id "${lookup.query}": it is not in the recall index (${total} entries), and the branch cannot supply it (${branch.reason}).`,
    ];
    if (lookup.nearMatches.length > 0) lines.push("Near matches:", ...lookup.nearMatches.map(describeEntry));
    else lines.push(`No near matches among the ${total} pruned output(s) of this session.`);
    return failure("unknown", lines.join("\n"), { candidates: lookup.nearMatches.map((e) => e.occurrenceKey) });
  }

  const entry = lookup.entry;
  const args = purged(entry.occurrenceKey);
  if (args) return pageResult(args, params);
  const base = { ref: entry.occurrenceKey, toolCallId: entry.toolCallId, toolName: entry.toolName };
  const original = await resolveOriginal({ entry, branchMessages: options.branchMessages, readSpill: options.readSpill });
  if (original.ok) return pageResult({ ...base, text: original.text, ...(original.images ? { images: original.images } : {}), from: original.from }, params);
  // The index entry matches nothing (a wrong field, a lost spill): the ref still names the result on the branch.
  const branch = fromBranch(options.branchMessages, entry.occurrenceKey);
  if (branch.ok) return pageResult(branch.original, params);
  const preview = entry.preview !== undefined ? `\nPreview of its start:\n${entry.preview}` : "";
  return failure("unavailable", `Cannot recover ${entry.occurrenceKey}: ${original.reason} Looked up by its ref: ${branch.reason}.${preview}`, base);
}

export interface RecallToolDeps {
  getStore: (ctx: ExtensionContext) => RecallIndex;
  /** Raw messages of the current branch, e.g. `ctx.sessionManager.getBranch()` message entries. */
  getBranchMessages: (ctx: ExtensionContext) => readonly ContextMessage[];
  readSpill?: ReadSpill;
  /** Characters per page when the model passes no `limit` (the `recall.pageChars` setting). */
  pageChars?: () => number;
  /** Refs whose purged arguments (not their output) the render hides now (`purgedArgumentsOnlyKeys` of the state). */
  purgedArguments?: (ctx: ExtensionContext) => ReadonlySet<string>;
}

export function createRecallToolDefinition(deps: RecallToolDeps): ToolDefinition<typeof recallParameters, RecallDetails> {
  return {
    name: RECALL_TOOL_NAME,
    label: "Recall pruned output",
    description:
      "Get back the verbatim output of a pruned tool result (a stub with a ref) by its ref, its images included; startLine/endLine or pattern give a part; arguments=true gives the call's arguments instead. " +
      "Long outputs come in pages: pass the next offset the page header gives.",
    promptSnippet: `${RECALL_TOOL_NAME}: get back the exact output of a pruned tool result (or part of it) by its ref`,
    parameters: recallParameters,
    async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
      const result = await executeRecall({
        params: { ...params, limit: params.limit ?? deps.pageChars?.() },
        store: deps.getStore(ctx),
        branchMessages: deps.getBranchMessages(ctx),
        readSpill: deps.readSpill,
        purgedArguments: deps.purgedArguments?.(ctx),
      });
      return { content: [{ type: "text", text: result.text }, ...(result.images ?? [])], details: result.details, isError: result.isError };
    },
  };
}
