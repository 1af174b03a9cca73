/**
 * The incremental render: between flushes the history only grows, so the render of the request
 * before (kept in a `RenderMemo` the caller owns, `EngineState.renderMemo`) is reused for the
 * unchanged prefix and only the new tail is looked at. Exact: whenever a render decision for old
 * messages could depend on the tail, the full render runs (`keeperRender`).
 *
 * Why the reuse is exact when `reuseBlocker` finds nothing. Let L be the current loop's start
 * (after the last user message). A tail without a user message keeps L, and
 * - pairing is causal (a result pairs with calls before it) and the user message at L-1 breaks
 *   the tool flow, so nothing before L pairs with the tail;
 * - chain compression, the error purge, the strip (held by `guardCurrentLoop`) and the pairing
 *   sweep change only messages before L, from the pairing before L;
 * - the stub phase reads the whole request in three places: which keys are stubbed, which keys
 *   are purged error calls, which pointer refs the request shows. A tail result answering one of
 *   those keys falls back (its key is paired from the prefix's last assistant on: an assistant
 *   opens the tool flow anew, so that pairing is the full one's);
 * - the strip protects the last assistant message: when it lies before L, the tail brings a new
 *   one and the strip would take its thinking once unprotected, falls back (with the default
 *   keepLastTurns 1 the flush's boundary is that very message, which then keeps its thinking);
 *   the live-count strip (no boundary yet) depends on the tail: falls back.
 * So the render is the previous one (its passed-through messages taken from the new request)
 * followed by the tail as it is.
 *
 * The prefix is recognized by a cheap key per message (role, timestamp, tool call id, content
 * length): a tree move, a compaction, a restart (new state object) or a replaced message
 * changes it and falls back.
 *
 * Ahead of the next prompt (`renderAhead`, run by the host once a flush is adopted, off the
 * request path): a new state forces a full render, and so does a tail that starts a new loop,
 * so the request right after a request-end flush would always pay one. Instead the render of
 * the branch followed by a probe user text turn is remembered, with the probe's slot standing
 * for whatever user message comes next. Why that is exact when the next prompt `u` is a user
 * text turn showing no compressed chain's text (checked in `reuseBlocker`), the probe being one
 * too (checked when seeding) and the probe passing through the render unchanged:
 * - the loop start is the index after the last `user` message: the same for `u` as for the probe;
 * - pairing reads tool calls and results only (neither has any), so it is the same;
 * - the strip protects the assistants after the last user *text* turn and the last assistant:
 *   both are text turns, and neither is an assistant;
 * - the stub phase reads user messages for one thing, a compressed chain's text shown in the
 *   request (its members then count as referenced): neither shows one;
 * - no phase reads a user message's timestamp, and no phase changes a user message (the probe
 *   passed through), so `u` passes through in its place.
 * So the render of the branch + `u` is the remembered one with `u` in the probe's slot, and
 * the tail after `u` is then checked as above (its loop starts after `u`).
 */
import { boundaryForRender, isUserTextTurn, strippedUnlessProtected } from "../thinking/index.ts";
import { isAssistant, isToolResult, isUser, timestampOf, type ContextMessage } from "../session/messages.ts";
import type { KeeperSettings } from "../settings/schema.ts";
import type { KeeperState } from "../state/schema.ts";
import { stubIndexOf } from "../prune/stub-text.ts";
import { currentLoopStart, pairToolCalls } from "../prune/occurrence.ts";
import { keeperRender, thinkingPhaseFor, type KeeperRenderInput } from "./render.ts";

/**
 * The previous render and what its reuse needs. Plain data, replaced at each render; what it
 * covers is never mutated: the next memo may extend its arrays in place past `size` (and past
 * `rendered.length` for `sources`), which no reader of this memo looks at.
 */
export interface RenderMemo {
  state: KeeperState;
  settings: KeeperSettings;
  model: string;
  /** How many raw messages the memo covers: its key arrays' entries `0..size-1`. */
  size: number;
  /** Per raw message: its cheap key's parts. */
  roles: readonly string[];
  timestamps: readonly (number | undefined)[];
  toolCallIds: readonly (string | undefined)[];
  contentLengths: readonly number[];
  /** The render; per element (`sources[0..rendered.length-1]`) the raw index it passed through from, or -1 (a message the render made). */
  rendered: readonly ContextMessage[];
  sources: readonly number[];
  /** Whether the render was the raw array itself. */
  unchanged: boolean;
  loopStart: number;
  lastAssistant: number;
  /** Every key the stub phase looks up in the whole request (stubbed, purged, pointer refs). */
  watchedKeys: ReadonlySet<string>;
  /** The strip's boundary when it runs for this model (undefined: no strip). */
  stripBoundary: number | undefined;
  /** Raw index of the next-prompt probe (`renderAhead`): its slot matches any user text turn that shows no chain text. */
  probe?: number;
}

/** The stand-in for the next prompt (`renderAhead`): a user text turn. */
function promptProbe(): ContextMessage {
  return { role: "user", content: [{ type: "text", text: "\u0000next prompt" }], timestamp: Number.MAX_SAFE_INTEGER } as ContextMessage;
}

/** Whether user message `m` shows a compressed chain's text (the stub phase then reads it). */
function showsChainText(m: ContextMessage, state: KeeperState): boolean {
  const chains = state.frontier.compressedChains;
  const content = (m as { content?: unknown }).content;
  if (chains.length === 0 || !Array.isArray(content)) return false;
  const texts = new Set<string>();
  for (const block of content as Array<{ type?: string; text?: unknown }>) if (block?.type === "text" && typeof block.text === "string") texts.add(block.text);
  return chains.some((c) => texts.has(c.text));
}

const modelKey = (model: KeeperRenderInput["model"]): string => (model ? `${model.provider}\u0000${model.id}\u0000${model.api ?? ""}` : "");

function contentLength(m: ContextMessage): number {
  const c = (m as { content?: unknown }).content;
  return typeof c === "string" || Array.isArray(c) ? c.length : -1;
}

/** A tool result's call id (the only role that carries one: other messages are not read for it). */
const toolCallIdOf = (m: ContextMessage): string | undefined => ((m as { role?: string }).role === "toolResult" ? (m as { toolCallId?: string }).toolCallId : undefined);

function watchedKeysOf(state: KeeperState): Set<string> {
  const { textByKey, pointers } = stubIndexOf(state);
  const keys = new Set<string>(textByKey.keys());
  for (const p of pointers.values()) keys.add(p.ref);
  for (const key of state.frontier.purgedErrorKeys) keys.add(key);
  return keys;
}

/** Whether a tail result answers a watched key. */
function tailAnswersWatched(memo: RenderMemo, messages: readonly ContextMessage[]): boolean {
  if (memo.watchedKeys.size === 0) return false;
  // Pairing restarts at every assistant, and the user message before the loop ends the tool flow.
  const from = Math.max(memo.lastAssistant, memo.loopStart);
  const tailFrom = memo.size - from;
  for (const [index, key] of pairToolCalls(messages.slice(from)).callKeyByResultIndex) if (index >= tailFrom && memo.watchedKeys.has(key)) return true;
  return false;
}

function lastAssistantOf(messages: readonly ContextMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isAssistant(messages[i]!)) return i;
  return -1;
}

/** The strip's boundary: none when it does not run, "live count" before any boundary (old messages then depend on the tail). */
function stripBoundaryOf(input: KeeperRenderInput): { boundary: number | undefined } | "live count" {
  if (!thinkingPhaseFor(input.settings, input.model)) return { boundary: undefined };
  const f = input.state.frontier;
  const boundary = boundaryForRender({ persisted: f.thinkingStripBoundaryTimestamp, hasFlushed: f.flushSeq > 0 });
  return boundary === undefined ? "live count" : { boundary };
}

/** Why the memo cannot be reused for `input` (undefined: it can). */
export function reuseBlocker(memo: RenderMemo | undefined, input: KeeperRenderInput): string | undefined {
  const { messages } = input;
  if (!memo) return "no memo";
  if (memo.state !== input.state || memo.settings !== input.settings || memo.model !== modelKey(input.model)) return "state, settings or model changed";
  const n = memo.size;
  if (messages.length < n) return "history shrank";
  const { roles, timestamps, toolCallIds, contentLengths } = memo;
  const probe = memo.probe ?? -1;
  for (let i = 0; i < n; i++) {
    const m = messages[i] as ContextMessage & { role?: string; timestamp?: unknown; toolCallId?: string; content?: unknown };
    if (i === probe) {
      if (!isUserTextTurn(m) || showsChainText(m, memo.state)) return "the next prompt is not like the probe";
      continue;
    }
    // Each field read once (the request's messages are fresh objects every time); a timestamp
    // that is not a number is kept as undefined, so comparing the raw field can only fall back more.
    const role = m.role;
    if (role !== roles[i] || m.timestamp !== timestamps[i]) return "prefix changed";
    if (role === "toolResult" && m.toolCallId !== toolCallIds[i]) return "prefix changed";
    const c = m.content;
    if ((typeof c === "string" || Array.isArray(c) ? c.length : -1) !== contentLengths[i]) return "prefix changed";
  }
  let tailAssistant = false;
  let tailResult = false;
  for (let i = n; i < messages.length; i++) {
    const m = messages[i]!;
    if (isUser(m)) return "the tail starts a new loop";
    if (isAssistant(m)) tailAssistant = true;
    else if (isToolResult(m)) tailResult = true;
  }
  if (tailResult && tailAnswersWatched(memo, messages)) return "a tail result answers a watched key";
  const last = memo.lastAssistant;
  if (tailAssistant && memo.stripBoundary !== undefined && last >= 0 && last < memo.loopStart && strippedUnlessProtected(messages[last]!, memo.stripBoundary))
    return "the strip's protected last assistant moves";
  return undefined;
}

/** `base`'s first `size` entries, to extend: the very array when nothing extended it yet (no copy), else a copy. */
function extensible<T>(array: readonly T[], size: number): T[] {
  return array.length === size ? (array as T[]) : array.slice(0, size);
}

function memoOf(input: KeeperRenderInput, rendered: ContextMessage[], sources: number[], stripBoundary: number | undefined, base?: RenderMemo): RenderMemo {
  const { messages } = input;
  const from = base ? base.size : 0;
  // After a probe the keys are read anew from this request (the probe's slot now holds the real
  // prompt, and keys read from the request's own kind of objects keep the next prefix checks fast).
  const kept = base && base.probe === undefined ? base.size : 0;
  const roles = base && kept > 0 ? extensible(base.roles, kept) : [];
  const timestamps = base && kept > 0 ? extensible(base.timestamps, kept) : [];
  const toolCallIds = base && kept > 0 ? extensible(base.toolCallIds, kept) : [];
  const contentLengths = base && kept > 0 ? extensible(base.contentLengths, kept) : [];
  for (let i = kept; i < messages.length; i++) {
    const m = messages[i]!;
    roles.push((m as { role?: string }).role ?? "");
    timestamps.push(timestampOf(m));
    toolCallIds.push(toolCallIdOf(m));
    contentLengths.push(contentLength(m));
  }
  const tailAssistant = lastAssistantOf(messages.slice(from));
  return {
    state: input.state,
    settings: input.settings,
    model: modelKey(input.model),
    size: messages.length,
    roles,
    timestamps,
    toolCallIds,
    contentLengths,
    rendered,
    sources,
    unchanged: rendered === messages,
    loopStart: base ? base.loopStart : currentLoopStart(messages),
    lastAssistant: tailAssistant >= 0 ? from + tailAssistant : (base?.lastAssistant ?? -1),
    watchedKeys: base ? base.watchedKeys : watchedKeysOf(input.state),
    stripBoundary,
  };
}

/** Per element of a full render, the raw index it passed through from (-1: made by the render). */
function sourcesOf(messages: readonly ContextMessage[], rendered: readonly ContextMessage[]): number[] {
  const indexOf = new Map<ContextMessage, number>();
  messages.forEach((m, i) => indexOf.set(m, i));
  return rendered.map((m) => indexOf.get(m) ?? -1);
}

/** `keeperRender`, reusing `memo` when that is exact; returns the render and the memo for the next request. */
export function renderWithMemo(input: KeeperRenderInput, memo: RenderMemo | undefined): { rendered: ContextMessage[]; memo: RenderMemo | undefined } {
  const { messages } = input;
  if (!input.settings.enabled) return { rendered: messages, memo: undefined };
  if (reuseBlocker(memo, input) === undefined) {
    const base = memo!;
    if (base.unchanged) return { rendered: messages, memo: memoOf(input, messages, [], base.stripBoundary, base) };
    const rendered: ContextMessage[] = base.rendered.map((m, i) => {
      const source = base.sources[i]!;
      return source >= 0 ? messages[source]! : m;
    });
    const sources = extensible(base.sources, base.rendered.length);
    for (let i = base.size; i < messages.length; i++) {
      rendered.push(messages[i]!);
      sources.push(i);
    }
    return { rendered, memo: memoOf(input, rendered, sources, base.stripBoundary, base) };
  }
  const rendered = keeperRender(input);
  const strip = stripBoundaryOf(input);
  if (strip === "live count") return { rendered, memo: undefined };
  return { rendered, memo: memoOf(input, rendered, rendered === messages ? [] : sourcesOf(messages, rendered), strip.boundary) };
}

/**
 * The render of `input.messages` as the next request will see it, remembered for that request:
 * when the branch ends with an assistant message (a request ended), the next request starts a
 * new prompt, so the render is of the branch followed by a probe user text turn whose slot the
 * memo lets the real prompt take (exactness: the header). Returns the render of the branch
 * alone (the probe left out) and the memo for the next request. Pure; nothing is sent.
 */
export function renderAhead(input: KeeperRenderInput, memo: RenderMemo | undefined): { rendered: ContextMessage[]; memo: RenderMemo | undefined } {
  const { messages } = input;
  const last = messages[messages.length - 1];
  const probe = promptProbe();
  if (last === undefined || !isAssistant(last) || showsChainText(probe, input.state)) return renderWithMemo(input, memo);
  const world = [...messages, probe];
  const out = renderWithMemo({ ...input, messages: world }, undefined);
  const at = out.rendered.length - 1;
  // The probe must pass through at the end (no phase changes a user message): else no memo.
  if (out.rendered[at] !== probe) return { rendered: keeperRender(input), memo };
  const rendered = out.rendered === world ? messages : out.rendered.slice(0, at);
  return { rendered, memo: out.memo ? { ...out.memo, probe: messages.length } : undefined };
}
