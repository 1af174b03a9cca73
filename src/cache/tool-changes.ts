/**
 * Whether a change of the tool set rewrites a model's cached prefix — what the cache is keyed
 * on (cold-cache.ts `toolsDigest`). Pi 1.6 keeps the prompt and tool declarations in the
 * transcript as system messages and appends a change as a new one; pi-ai then sends it where
 * the model takes it (pi-ai `dist/api/*.js`, `utils/transcript.js`):
 *
 * - Anthropic Messages with `compat.supportsMidConvoSystemMessages` and
 *   `supportsMidConvoToolChanges` (Claude Opus 4.8, Fable, the 5.5 family …): the request's
 *   tool list stays the initial one; later tools go in `tool_addition` / `tool_removal` blocks
 *   of a mid-conversation system message. The prefix survives every change.
 * - OpenAI Responses and Codex with mid-conversation system messages and
 *   `supportsAdditionalTools`: every tool is declared in `additional_tools` items in place.
 * - Chat Completions with mid-conversation system messages and `supportsMidConvoToolAdditions`:
 *   additions in place; a removal folds the tool list (a rewrite). Read here as in place: a
 *   removal taken for a warm cache only makes the gate price a rewrite the request makes anyway,
 *   never one of its own.
 * - Everything else: the request carries the current tool list at its head, so any change
 *   rewrites the whole prefix.
 *
 * Pure.
 */

/** What this rule reads of a Pi model (`ctx.model`). */
export interface ToolChangeModel {
  api: string;
  compat?: unknown;
}

const RESPONSES_APIS: ReadonlySet<string> = new Set(["openai-responses", "azure-openai-responses", "openai-codex-responses"]);

/** The model takes tool changes in place (its cached prefix survives them). */
export function toolChangesInPlace(model: ToolChangeModel | undefined): boolean {
  if (!model) return false;
  const compat = (model.compat ?? {}) as Record<string, unknown>;
  if (compat.supportsMidConvoSystemMessages !== true) return false;
  if (model.api === "anthropic-messages") return compat.supportsMidConvoToolChanges === true;
  if (RESPONSES_APIS.has(model.api)) return compat.supportsAdditionalTools === true;
  if (model.api === "openai-completions") return compat.supportsMidConvoToolAdditions === true;
  return false;
}

/**
 * The tools part of the cache key: the tool names when a change rewrites the prefix, "" when the
 * model takes changes in place (`inPlace`: a change is then no reason to think the cache lost).
 */
export function toolsKeyDigest(inPlace: boolean, tools: readonly string[]): string {
  return inPlace ? "" : [...tools].sort().join(",");
}

/**
 * The tools a transcript declares (the replay's stand-in for Pi's active tools): its system
 * messages' `toolsAdded` and `toolsRemoved`, in order. A recording older than Pi's system
 * messages declares none.
 */
export function transcriptToolNames(messages: readonly unknown[]): string[] {
  const tools = new Set<string>();
  for (const m of messages) {
    const s = m as { role?: unknown; toolsAdded?: unknown; toolsRemoved?: unknown } | null;
    if (s?.role !== "system") continue;
    for (const t of Array.isArray(s.toolsRemoved) ? s.toolsRemoved : []) if (typeof (t as { name?: unknown })?.name === "string") tools.delete((t as { name: string }).name);
    for (const t of Array.isArray(s.toolsAdded) ? s.toolsAdded : []) if (typeof (t as { name?: unknown })?.name === "string") tools.add((t as { name: string }).name);
  }
  return [...tools];
}
