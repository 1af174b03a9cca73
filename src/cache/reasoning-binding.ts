/**
 * Reasoning bound to its prefix: models whose provider drops a replayed thinking block (or
 * reasoning item) when the conversation before it changed, so an edit of earlier history costs
 * the model every later piece of reasoning it had written (pi-ai 1.6, `dist/api/*.js`):
 *
 * - Anthropic Messages, managed-effort Claude models (`compat.supportsMidConvoEffort`: Opus 5,
 *   Fable 5.1 / 5.2, the 5.5 family): pi-ai sends `thinking.block_binding.prefix_mismatch_behavior:
 *   "drop_block"` (`buildParams`); the API drops each thinking block whose prefix changed and
 *   reports it in `input_transformations` (`thinking_dropped`), recorded by pi-ai as an
 *   `anthropic_input_transformations` diagnostic.
 * - OpenAI Responses, Azure and Codex, GPT-6.2 and later: reasoning that follows an edit of
 *   earlier input is removed (`prefix_mismatch`, `openai-responses-shared.js`
 *   `appendReasoningRemovals`), recorded as `openai_input_transformations`.
 *
 * Pure: the host passes `ctx.model`, the report a registry row.
 */
const RESPONSES_APIS: ReadonlySet<string> = new Set(["openai-responses", "azure-openai-responses", "openai-codex-responses"]);

export interface ReasoningModel {
  api: string;
  /** Model id. */
  id: string;
  compat?: unknown;
}

/** GPT `major.minor` of a model id (`gpt-6.2-sol` → [6, 2]), if it names one. */
function gptVersion(id: string): [number, number] | undefined {
  const m = /gpt-(\d+)(?:\.(\d+))?/.exec(id.toLowerCase());
  return m ? [Number(m[1]), m[2] === undefined ? 0 : Number(m[2])] : undefined;
}

/** The provider drops this model's replayed reasoning after an edit of the history before it. */
export function reasoningBoundToPrefix(model: ReasoningModel | undefined): boolean {
  if (!model) return false;
  if (model.api === "anthropic-messages") return (model.compat as { supportsMidConvoEffort?: unknown } | undefined)?.supportsMidConvoEffort === true;
  if (RESPONSES_APIS.has(model.api)) {
    const v = gptVersion(model.id);
    return v !== undefined && (v[0] > 6 || (v[0] === 6 && v[1] >= 2));
  }
  return false;
}
