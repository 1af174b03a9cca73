/**
 * A fake ChatGPT Codex backend (`POST {baseUrl}/codex/responses`, Pi's `openai-codex-responses`):
 * the Responses fake (responses.ts) with what Codex adds, as pi-ai's openai-codex-responses.js
 * speaks it:
 *
 * - Auth: `Authorization: Bearer <access token>`, a JWT whose `https://api.openai.com/auth`
 *   claim carries `chatgpt_account_id`, and a `chatgpt-account-id` header equal to it (pi-ai
 *   reads the account from the token, `extractAccountId`); otherwise 401.
 * - `store: true` is refused (pi-ai: "ChatGPT Codex Responses rejects `store: true`").
 * - Request bodies come zstd-compressed over HTTP (the core decompresses them).
 * - The WebSocket transport Pi prefers (`transport: "auto"`): `{type: "response.create", ...body}`
 *   messages on the same path, each answered with the streaming events as messages. A request
 *   with `previous_response_id` continues the connection's previous response: its `input` holds
 *   only the items after that response's input and output, and the server acts on the whole
 *   (the output items as pi-ai replays them, so the whole is what a full request would send);
 *   an id that is not the connection's last response is refused with the code
 *   `previous_response_not_found` (pi-ai then sends the full request once). Over HTTP nothing is
 *   stored (`store: false`), so a continuation there is refused the same way.
 * - Usage reports cache writes (`cache_write_tokens`), as for the Codex models pi-ai's registry
 *   prices with cache writes (GPT-5.6 and later); `cache.reportWrites: false` turns it off.
 */
import type { FakeServer } from "../fake-core.ts";
import { openAiErrorBody, startOpenAiFake } from "./emit.ts";
import { responsesInstructions } from "./classify.ts";
import { responsesDialect } from "./responses.ts";
import { outputItems, responsesEvents } from "./responses-sse.ts";
import type { EmittedTurn, FakeOpenAiOptions, JsonObject, ResponsesRecord, ResponsesRequest } from "./types.ts";

export type FakeCodex = FakeServer<ResponsesRequest, EmittedTurn>;

export type FakeCodexOptions = FakeOpenAiOptions<ResponsesRecord> & {
  /** The ChatGPT account the access token must carry (default `acct_fake`). */
  accountId?: string;
};

const JWT_CLAIM = "https://api.openai.com/auth";
export const DEFAULT_CODEX_ACCOUNT = "acct_fake";

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64").replace(/=+$/, "");

/** An (unsigned) access token pi-ai accepts as a ChatGPT login for `accountId`: the models.json `apiKey` of a Codex run. */
export function codexAccessToken(accountId = DEFAULT_CODEX_ACCOUNT): string {
  return `${b64({ alg: "none", typ: "JWT" })}.${b64({ [JWT_CLAIM]: { chatgpt_account_id: accountId } })}.fake-signature`;
}

function accountOfToken(authorization: string | null): string | undefined {
  const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
  try {
    const claims = JSON.parse(atob(token?.split(".")[1] ?? "")) as Record<string, { chatgpt_account_id?: string } | undefined>;
    return claims[JWT_CLAIM]?.chatgpt_account_id;
  } catch {
    return undefined;
  }
}

/** A turn's output items as pi-ai replays them from the assistant message (what a full request after it sends). */
export function replayedItems(t: EmittedTurn): JsonObject[] {
  return outputItems(t).map((item) => {
    if (item.type === "message") return { type: "message", role: "assistant", content: item.content, status: "completed", id: item.id };
    if (item.type === "function_call") return { type: "function_call", id: item.id, call_id: item.call_id, name: item.name, arguments: item.arguments };
    return item;
  });
}

type Continuation = { responseId: string; input: JsonObject[] };

export function startFakeCodex(o: FakeCodexOptions = {}): FakeCodex {
  const options = { ...o, cache: { reportWrites: true, ...o.cache } };
  const base = responsesDialect(options);
  const account = options.accountId ?? DEFAULT_CODEX_ACCOUNT;
  return startOpenAiFake<ResponsesRequest>(
    {
      ...base,
      api: "openai-codex-responses",
      paths: ["/codex/responses", "/backend-api/codex/responses"],
      admit(body, headers, url, channel) {
        const tokenAccount = accountOfToken(headers.get("authorization"));
        if (!tokenAccount || headers.get("chatgpt-account-id") !== tokenAccount || tokenAccount !== account) {
          return { refusal: { status: 401, type: "invalid_request_error", message: "Missing or invalid ChatGPT access token or account id.", code: "invalid_api_key" } };
        }
        if (body.store === true) return { refusal: { status: 400, type: "invalid_request_error", message: "Store must be set to false", param: "store" } };
        let effective = body;
        if (typeof body.previous_response_id === "string") {
          const last = channel?.last as Continuation | undefined;
          if (last?.responseId !== body.previous_response_id) {
            return { refusal: { status: 400, type: "invalid_request_error", message: `Previous response with id '${body.previous_response_id}' not found.`, param: "previous_response_id", code: "previous_response_not_found" } };
          }
          const { previous_response_id: _continued, ...rest } = body;
          effective = { ...rest, input: [...last.input, ...body.input] };
        }
        return base.admit(effective, headers, url, channel);
      },
      onAnswered(effective, emitted, channel) {
        if (!channel) return;
        channel.last = emitted ? ({ responseId: emitted.responseId, input: [...effective.input, ...replayedItems(emitted)] } satisfies Continuation) : undefined;
      },
      socket: {
        paths: ["/codex/responses", "/backend-api/codex/responses"],
        requestOf(message) {
          if (typeof message !== "object" || message === null || (message as JsonObject).type !== "response.create") return undefined;
          const { type: _type, ...body } = message as JsonObject;
          return body as ResponsesRequest;
        },
        frames: (turn, body) => responsesEvents(turn, String(body.model ?? "fake-model")).map((e) => JSON.stringify(e)),
        errorFrame: (e) => JSON.stringify({ type: "error", status: e.status, error: JSON.parse(openAiErrorBody(e)).error }),
      },
    },
    options,
    responsesInstructions,
  );
}
