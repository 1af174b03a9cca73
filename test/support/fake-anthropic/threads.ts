/**
 * Anthropic message threads (beta `message-threads-2026-08-12`), as pi-ai 1.6 uses them
 * (`anthropic-messages.js`: `prepareThreadRequest`, `sendThreadRequest`, `recordThreadReply`):
 *
 * - `thread: {type: "create"}` on a full request starts a thread; the reply's message id (the
 *   `message_start` id Pi keeps as `responseId`) is where it can be continued.
 * - `thread: {type: "continue", previous_message_id}` carries only the messages after that reply,
 *   without `system` and `tools`; the server stands it for the full request: the thread's system,
 *   tools and messages (their cache marks dropped, since the request no longer carries them),
 *   the reply, then the new messages. Token counts and caching are those of that full request
 *   (pi-ai README: "Token counts and prompt caching are unchanged").
 * - Each reply can be continued once.
 *
 * Refusals (400, `invalid_request_error`, the code in `error.details.error_code`, which is where
 * `getThreadErrorCode` reads it): `thread_not_found` (unknown or expired reply),
 * `thread_already_continued`, `thread_continue_in_flight` (its continuation is still being
 * answered), `thread_fingerprint_mismatch` (model, thinking, output_config or tool_choice differ
 * from the thread's) — Pi answers these with a new thread — and `thread_unsupported_request`
 * (an endpoint that cannot thread, the `unsupported` option), after which Pi turns threads off
 * for the session. A `thread` field without the beta header is refused without a code, as an
 * endpoint that does not know the field would ("thread: Extra inputs are not permitted").
 */
import type { Refusal } from "../fake-core.ts";
import type { EmittedResponse, WireBlock, WireMessage, WireRequest } from "./types.ts";

export const MESSAGE_THREADS_BETA = "message-threads-2026-08-12";

export type ThreadErrorCode =
  | "thread_not_found"
  | "thread_already_continued"
  | "thread_continue_in_flight"
  | "thread_fingerprint_mismatch"
  | "thread_unsupported_request";

export type ThreadOptions = {
  /** Answer every thread request `thread_unsupported_request`. */
  unsupported?: boolean;
  /** How long a reply can be continued after it was written (default 5 minutes). */
  ttlMs?: number;
  /** The provider's clock (default `Date.now`). */
  clock?: () => number;
  /** Replies whose thread the server loses at once (as if expired): continuing one is `thread_not_found`. */
  forget?: (messageId: string) => boolean;
};

/** What a request did with threads, kept on its record. */
export type ThreadUse = { type: "create" } | { type: "continue"; previousMessageId: string; carried: number };

type Head = { request: WireRequest; reply: WireMessage; writtenAtMs: number; state: "open" | "continuing" | "continued" };

/** The fields a thread fixes (the server compares them on every continue). */
const FIXED_FIELDS = ["model", "thinking", "output_config", "tool_choice"] as const;

function refusal(code: ThreadErrorCode, message: string): Refusal {
  return { status: 400, type: "invalid_request_error", message, details: { error_code: code } };
}

function withoutMarks(messages: WireMessage[]): WireMessage[] {
  return JSON.parse(JSON.stringify(messages, (k, v) => (k === "cache_control" ? undefined : v))) as WireMessage[];
}

/** The reply as Pi sends it back in the next full request (pi-ai `convertMessages`). */
export function replyMessage(e: EmittedResponse): WireMessage {
  const content: WireBlock[] = [];
  if (e.thinking) content.push({ type: "thinking", thinking: e.thinking.text, signature: e.thinking.signature });
  if (e.text !== undefined && e.text.trim().length > 0) content.push({ type: "text", text: e.text });
  for (const c of e.toolCalls) content.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
  return { role: "assistant", content };
}

export type ThreadStore = {
  /** The full request `body` stands for, or the refusal; `use` says what it did with threads. */
  admit(body: WireRequest, headers: Headers): { effective: WireRequest; use?: ThreadUse } | { refusal: Refusal };
  /** After the answer to an admitted thread request: its reply becomes continuable (or, after an error, its predecessor again). */
  answered(effective: WireRequest, emitted: EmittedResponse | undefined): void;
  /** Forget every thread (as if they had all expired): the next continue is `thread_not_found`. */
  expireAll(): void;
  /** Replies that can still be continued. */
  openCount(): number;
};

export function createThreadStore(options: ThreadOptions = {}): ThreadStore {
  const ttlMs = options.ttlMs ?? 5 * 60_000;
  const now = options.clock ?? Date.now;
  const heads = new Map<string, Head>();
  const pending = new WeakMap<WireRequest, { previous?: Head }>();

  function fingerprintMismatch(head: Head, body: WireRequest): string | undefined {
    return FIXED_FIELDS.find((f) => JSON.stringify(head.request[f] ?? null) !== JSON.stringify(body[f] ?? null));
  }

  function continueThread(body: WireRequest, thread: { previous_message_id?: unknown }): { effective: WireRequest; use: ThreadUse } | { refusal: Refusal } {
    const id = String(thread.previous_message_id ?? "");
    const head = heads.get(id);
    if (!head || head.writtenAtMs + ttlMs <= now()) return { refusal: refusal("thread_not_found", `thread: no thread continues from message ${id}`) };
    if (head.state === "continuing") return { refusal: refusal("thread_continue_in_flight", `thread: message ${id} is being continued by another request`) };
    if (head.state === "continued") return { refusal: refusal("thread_already_continued", `thread: message ${id} was already continued`) };
    if (body.system !== undefined || body.tools !== undefined) {
      return { refusal: { status: 400, type: "invalid_request_error", message: "thread: a continue request takes the thread's system and tools; omit them" } };
    }
    const changed = fingerprintMismatch(head, body);
    if (changed) return { refusal: refusal("thread_fingerprint_mismatch", `thread: ${changed} differs from the thread's`) };
    const { thread: _thread, ...rest } = body;
    const effective: WireRequest = {
      ...rest,
      ...(head.request.system !== undefined ? { system: head.request.system } : {}),
      ...(head.request.tools !== undefined ? { tools: head.request.tools } : {}),
      messages: [...withoutMarks(head.request.messages), head.reply, ...body.messages],
    };
    head.state = "continuing";
    pending.set(effective, { previous: head });
    return { effective, use: { type: "continue", previousMessageId: id, carried: body.messages.length } };
  }

  return {
    admit(body, headers) {
      const thread = body.thread as { type?: unknown; previous_message_id?: unknown } | undefined;
      if (thread === undefined) return { effective: body };
      const betas = (headers.get("anthropic-beta") ?? "").split(",").map((b) => b.trim());
      if (!betas.includes(MESSAGE_THREADS_BETA)) return { refusal: { status: 400, type: "invalid_request_error", message: "thread: Extra inputs are not permitted" } };
      if (options.unsupported) return { refusal: refusal("thread_unsupported_request", "thread: this request cannot be threaded") };
      if (thread.type === "continue") return continueThread(body, thread);
      if (thread.type !== "create") return { refusal: { status: 400, type: "invalid_request_error", message: `thread.type: unknown type ${String(thread.type)}` } };
      const { thread: _thread, ...effective } = body;
      pending.set(effective as WireRequest, {});
      return { effective: effective as WireRequest, use: { type: "create" } };
    },
    answered(effective, emitted) {
      const p = pending.get(effective);
      if (!p) return;
      pending.delete(effective);
      if (p.previous) p.previous.state = emitted ? "continued" : "open";
      if (emitted && !options.forget?.(emitted.messageId)) heads.set(emitted.messageId, { request: effective, reply: replyMessage(emitted), writtenAtMs: now(), state: "open" });
    },
    expireAll: () => heads.clear(),
    openCount: () => [...heads.values()].filter((h) => h.state === "open" && h.writtenAtMs + ttlMs > now()).length,
  };
}
