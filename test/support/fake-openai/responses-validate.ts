/**
 * The request checks the fake Responses server answers with HTTP 400 (`invalid_request_error`,
 * `param: "input"`), modelled on what OpenAI refuses in a stateless (`store: false`) input.
 * Pure: `validateResponsesInput` returns the first violation, or undefined.
 *
 * Rules, in the order they are checked:
 * 1. no two input items share an `id`; no two function calls share a `call_id`, nor do two
 *    function call outputs;
 * 2. every `function_call_output` answers a `function_call` earlier in the input;
 * 3. every `function_call` has its `function_call_output` later in the input;
 * 4. a `reasoning` item carries the encrypted content the server issued for exactly its id
 *    (absent: the item cannot be found, since nothing is stored; altered: it cannot be verified);
 * 5. a `reasoning` item is followed by an output item (an assistant message or a function call);
 * 6. an item the server emitted after a reasoning item (an assistant message or function call,
 *    found by its `id`) comes with that reasoning item, earlier in the input.
 */
import { firstDuplicate } from "../fake-core.ts";
import { isValidEncryptedReasoning } from "./reasoning.ts";
import type { JsonObject } from "./types.ts";

export type ResponsesViolation = { message: string; code?: string };

export type ResponsesValidateOptions = {
  reasoningSecret?: string;
  /** The reasoning item id the server emitted before the output item with this id, if any. */
  pairedReasoningOf?: (itemId: string) => string | undefined;
};

const isOutputItem = (item: JsonObject | undefined) =>
  item !== undefined && ((item.type === "message" && item.role === "assistant") || item.type === "function_call" || item.type === "custom_tool_call");

function checkDuplicates(input: JsonObject[]): ResponsesViolation | undefined {
  const id = firstDuplicate(input.flatMap((i) => (typeof i.id === "string" ? [i.id] : [])));
  if (id) return { message: `Duplicate item found with id ${id}. Remove the duplicate item from your input and try again.` };
  const callIds = (type: string) => input.filter((i) => i.type === type).map((i) => String(i.call_id));
  const call = firstDuplicate(callIds("function_call"));
  if (call) return { message: `Duplicate value for 'call_id' of function_call: ${call}.` };
  const output = firstDuplicate(callIds("function_call_output"));
  if (output) return { message: `Duplicate value for 'call_id' of function_call_output: ${output}.` };
  return undefined;
}

function checkCallPairing(input: JsonObject[]): ResponsesViolation | undefined {
  const called = new Set<string>();
  for (const item of input) {
    if (item.type === "function_call") called.add(String(item.call_id));
    if (item.type === "function_call_output" && !called.has(String(item.call_id))) {
      return { message: `No tool call found for function call output with call_id ${String(item.call_id)}.` };
    }
  }
  const answered = new Set(input.filter((i) => i.type === "function_call_output").map((i) => String(i.call_id)));
  const open = input.find((i) => i.type === "function_call" && !answered.has(String(i.call_id)));
  if (open) return { message: `No tool output found for function call ${String(open.call_id)}.` };
  return undefined;
}

function checkReasoning(input: JsonObject[], o: ResponsesValidateOptions): ResponsesViolation | undefined {
  for (let i = 0; i < input.length; i++) {
    const item = input[i]!;
    if (item.type !== "reasoning") continue;
    const id = String(item.id);
    if (item.encrypted_content === undefined) {
      return { message: `Item with id '${id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.` };
    }
    if (!isValidEncryptedReasoning(id, item.encrypted_content, o.reasoningSecret)) {
      return { message: `The encrypted content for item ${id} could not be verified.`, code: "invalid_encrypted_content" };
    }
    if (!isOutputItem(input[i + 1])) return { message: `Item '${id}' of type 'reasoning' was provided without its required following item.` };
  }
  const seen = new Set<string>();
  for (const item of input) {
    if (typeof item.id !== "string") continue;
    const reasoning = o.pairedReasoningOf?.(item.id);
    if (reasoning && !seen.has(reasoning)) {
      return { message: `Item '${item.id}' of type '${String(item.type)}' was provided without its required 'reasoning' item: '${reasoning}'.` };
    }
    seen.add(item.id);
  }
  return undefined;
}

/** First rule the input breaks, as OpenAI words it; undefined when valid. */
export function validateResponsesInput(input: JsonObject[], o: ResponsesValidateOptions = {}): ResponsesViolation | undefined {
  return checkDuplicates(input) ?? checkCallPairing(input) ?? checkReasoning(input, o);
}
