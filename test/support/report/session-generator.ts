/**
 * Generator of realistic Pi session files for replay tests. A `SessionPlan` (drawn by
 * fast-check) is played through Pi's own `SessionManager`, which writes the JSONL file
 * exactly as Pi does. Just before each assistant message is appended, the generator snapshots
 * `sessionManager.buildSessionContext()`: the context Pi's agent held for that request.
 *
 * Covered: leading system message (or none, as in older sessions) and system updates, user
 * prompts (text, images), assistant rounds with thinking, tool calls and tool results, usage
 * numbers, aborted (unbilled) and errored replies, model changes (Anthropic models and an
 * OpenAI Responses model whose tool-call ids need normalizing), thinking level changes,
 * custom entries, custom messages (also between tool rounds), bash executions, labels,
 * session names, usage entries, compactions (kept range or retain-none), `/tree` branches
 * (with or without a branch summary) and context edits (omit or replace).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage, Message, SystemMessage, ToolResultMessage, Usage } from "@earendil-works/pi-ai";
import { SessionManager, type SessionContext, type SessionEntry } from "@earendil-works/pi-coding-agent";

export interface ModelChoice {
  provider: string;
  api: string;
  id: string;
}

export const MODELS: readonly ModelChoice[] = [
  { provider: "anthropic", api: "anthropic-messages", id: "claude-sonnet-4-5" },
  { provider: "anthropic", api: "anthropic-messages", id: "claude-opus-4-1" },
  { provider: "openai", api: "openai-responses", id: "gpt-5.1-codex" },
];

export interface RoundPlan {
  calls: number;
  thinking: boolean;
  textChars: number;
  /** `aborted` records zero usage (never billed); `error` keeps its usage. Both end the exchange. */
  end: "ok" | "aborted" | "error";
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Extension activity between this round's tool results and the next request. */
  between: "none" | "custom_message" | "custom_entry";
}

export type MetaOp =
  | { op: "model_change"; model: number }
  | { op: "thinking_change"; level: "off" | "low" | "medium" | "high" }
  | { op: "custom_entry" }
  | { op: "custom_message"; chars: number; display: boolean }
  | { op: "bash_execution"; chars: number; excluded: boolean }
  | { op: "label" }
  | { op: "session_info" }
  | { op: "usage_entry" }
  | { op: "system_update"; remove: boolean };

export type AfterOp =
  | { op: "compaction"; keep: number; retainNone: boolean }
  | { op: "branch"; target: number; summary: boolean }
  | { op: "context_edit"; target: number; omit: boolean };

export interface ExchangePlan {
  before: MetaOp[];
  prompt: { chars: number; image: boolean };
  rounds: RoundPlan[];
  after: AfterOp[];
}

export interface SessionPlan {
  systemPrompt: boolean;
  exchanges: ExchangePlan[];
}

/** true with probability 1/n. */
const oneIn = (n: number) => fc.integer({ min: 1, max: n }).map((x) => x === 1);
const unit = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });

const roundArb: fc.Arbitrary<RoundPlan> = fc.record({
  calls: fc.integer({ min: 0, max: 3 }),
  thinking: fc.boolean(),
  textChars: fc.integer({ min: 0, max: 120 }),
  end: fc.constantFrom<RoundPlan["end"]>("ok", "ok", "ok", "ok", "ok", "ok", "aborted", "error"),
  usage: fc.record({
    input: fc.integer({ min: 0, max: 50 }),
    output: fc.integer({ min: 1, max: 800 }),
    cacheRead: fc.integer({ min: 0, max: 40_000 }),
    cacheWrite: fc.integer({ min: 0, max: 4_000 }),
  }),
  between: fc.constantFrom<RoundPlan["between"]>("none", "none", "none", "custom_message", "custom_entry"),
});

const metaArb: fc.Arbitrary<MetaOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant("model_change" as const), model: fc.integer({ min: 0, max: MODELS.length - 1 }) }), weight: 3 },
  { arbitrary: fc.record({ op: fc.constant("thinking_change" as const), level: fc.constantFrom("off" as const, "low" as const, "medium" as const, "high" as const) }), weight: 2 },
  fc.constant({ op: "custom_entry" as const }),
  fc.record({ op: fc.constant("custom_message" as const), chars: fc.integer({ min: 1, max: 80 }), display: fc.boolean() }),
  fc.record({ op: fc.constant("bash_execution" as const), chars: fc.integer({ min: 0, max: 80 }), excluded: fc.boolean() }),
  fc.constant({ op: "label" as const }),
  fc.constant({ op: "session_info" as const }),
  fc.constant({ op: "usage_entry" as const }),
  fc.record({ op: fc.constant("system_update" as const), remove: fc.boolean() }),
);

const afterArb: fc.Arbitrary<AfterOp> = fc.oneof(
  fc.record({ op: fc.constant("compaction" as const), keep: unit, retainNone: oneIn(5) }),
  fc.record({ op: fc.constant("branch" as const), target: unit, summary: fc.boolean() }),
  fc.record({ op: fc.constant("context_edit" as const), target: unit, omit: fc.boolean() }),
);

export const exchangeArb: fc.Arbitrary<ExchangePlan> = fc.record({
  before: fc.array(metaArb, { maxLength: 3 }),
  prompt: fc.record({ chars: fc.integer({ min: 1, max: 200 }), image: oneIn(10) }),
  rounds: fc.array(roundArb, { minLength: 1, maxLength: 4 }),
  after: fc.oneof({ arbitrary: fc.constant([] as AfterOp[]), weight: 2 }, { arbitrary: fc.array(afterArb, { minLength: 1, maxLength: 2 }), weight: 3 }),
});

export const sessionPlanArb: fc.Arbitrary<SessionPlan> = fc.record({
  systemPrompt: oneIn(4).map((x) => !x),
  exchanges: fc.array(exchangeArb, { minLength: 1, maxLength: 12 }),
});

/** Pi's view of one recorded request: the assistant entry and the context the agent held. */
export interface ExpectedRequest {
  entryId: string;
  assistant: AssistantMessage;
  context: SessionContext;
}

export interface GeneratedSession {
  file: string;
  text: string;
  sessionManager: SessionManager;
  /** In the order the assistant messages were appended (= file order). */
  expected: ExpectedRequest[];
  counts: Record<string, number>;
}

const pad = (seed: string, n: number) => (seed + " lorem ipsum dolor sit amet ").repeat(Math.ceil(n / (seed.length + 28)) || 1).slice(0, n);
const zeroCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
const TOOLS = ["read", "bash", "edit", "write"] as const;

/** Plays `plan` through a `SessionManager` persisting to a fresh file under `dir`. */
export function generateSession(plan: SessionPlan, dir: string = mkdtempSync(join("/tmp", "pi-gen-"))): GeneratedSession {
  const sm = SessionManager.create("/work/project", dir);
  const expected: ExpectedRequest[] = [];
  const counts: Record<string, number> = {};
  const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
  let clock = 1_760_000_000_000;
  const ts = () => (clock += 1000 + (clock % 7) * 500);
  let n = 0;
  let model = MODELS[0];
  const system = (message: Omit<SystemMessage, "role" | "timestamp">) => sm.appendMessage({ role: "system", timestamp: ts(), ...message } as SystemMessage as Message);

  if (plan.systemPrompt) {
    count("system_message");
    system({
      content: "You are a careful coding assistant.",
      sections: { tools: "<tools>read, bash, edit, write</tools>", cwd: "<cwd>/work/project</cwd>" },
      toolsAdded: TOOLS.map((name) => ({ name, description: `the ${name} tool`, parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } as never })),
    });
  }

  const pathEntries = () => sm.getBranch();
  const isMessage = (e: SessionEntry, role?: string) => e.type === "message" && (role === undefined || (e.message as { role: string }).role === role);

  const appendAssistant = (round: RoundPlan): AssistantMessage => {
    const callIds = Array.from({ length: round.end === "ok" ? round.calls : 0 }, () =>
      model.provider === "openai" ? `call_${n++}|fc_${"x".repeat(40)}+/=${n}` : `toolu_${n++}`,
    );
    const content: AssistantMessage["content"] = [];
    if (round.thinking) content.push({ type: "thinking", thinking: pad(`th${n}`, 60), thinkingSignature: model.provider === "openai" ? JSON.stringify({ id: `rs_${n}` }) : `sig${n}` });
    if (round.textChars > 0 || callIds.length === 0) content.push({ type: "text", text: pad(`r${n++}`, Math.max(1, round.textChars)) });
    callIds.forEach((id, i) => content.push({ type: "toolCall", id, name: TOOLS[i % TOOLS.length], arguments: { path: `src/f${n}-${i}.ts` } }));
    const u = round.end === "aborted" ? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } : round.usage;
    const usage: Usage = { ...u, totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite, cost: { ...zeroCost } };
    const stopReason = round.end === "aborted" ? "aborted" : round.end === "error" ? "error" : callIds.length > 0 ? "toolUse" : "stop";
    const message = { role: "assistant", content, api: model.api, provider: model.provider, model: model.id, usage, stopReason, timestamp: ts() } as AssistantMessage;
    // What the agent held for this request: Pi rebuilds it from the session at this leaf.
    const context = structuredClone(sm.buildSessionContext());
    const entryId = sm.appendMessage(message);
    expected.push({ entryId, assistant: message, context });
    count(`assistant_${round.end}`);
    if (model.provider !== "anthropic") count("assistant_non_anthropic");
    for (const id of callIds) {
      count("tool_result");
      const result: ToolResultMessage = { role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: pad(`out${n++}`, 150) }], isError: n % 5 === 0, timestamp: ts() };
      sm.appendMessage(result);
    }
    return message;
  };

  const meta = (op: MetaOp) => {
    count(op.op);
    switch (op.op) {
      case "model_change":
        model = MODELS[op.model];
        sm.appendModelChange(model.provider, model.id);
        break;
      case "thinking_change":
        sm.appendThinkingLevelChange(op.level);
        break;
      case "custom_entry":
        sm.appendCustomEntry("gen-state", { n: n++ });
        break;
      case "custom_message":
        sm.appendCustomMessageEntry("gen-note", op.display ? pad(`note${n++}`, op.chars) : [{ type: "text", text: pad(`hidden${n++}`, op.chars) }], op.display, { n });
        break;
      case "bash_execution":
        sm.appendMessage({ role: "bashExecution", command: `ls ${n++}`, output: pad("out", op.chars), exitCode: 0, cancelled: false, truncated: false, timestamp: ts(), ...(op.excluded ? { excludeFromContext: true } : {}) } as never);
        break;
      case "label": {
        const target = pathEntries().at(-1);
        if (target) sm.appendLabelChange(target.id, `mark-${n++}`);
        break;
      }
      case "session_info":
        sm.appendSessionInfo(`session ${n++}`);
        break;
      case "usage_entry":
        sm.appendUsage("cache_warm", model.provider, model.id, { input: 0, output: 0, cacheRead: 900, cacheWrite: 0, totalTokens: 900, cost: { ...zeroCost } });
        break;
      case "system_update":
        if (!plan.systemPrompt) break;
        system(op.remove ? { content: "", sections: { cwd: null }, toolsRemoved: [{ name: "write" }] } : { content: "", sections: { skills: `<skills>s${n++}</skills>` } });
        break;
    }
  };

  const after = (op: AfterOp) => {
    const path = pathEntries();
    if (op.op === "compaction") {
      const lastCompaction = path.findLastIndex((e) => e.type === "compaction");
      const from = lastCompaction < 0 ? 0 : Math.max(0, path.findIndex((e) => e.id === (path[lastCompaction] as { firstKeptEntryId: string }).firstKeptEntryId));
      const candidates = path.slice(from).filter((e) => (isMessage(e) && !isMessage(e, "toolResult") && !isMessage(e, "system")) || e.type === "custom_message" || e.type === "branch_summary");
      if (path.at(-1)?.type === "compaction") return;
      const kept = op.retainNone ? null : candidates[Math.floor(op.keep * candidates.length)];
      if (!op.retainNone && !kept) return;
      count(op.retainNone ? "compaction_retain_none" : "compaction");
      sm.appendCompaction(`summary ${n++}: ${pad("sum", 80)}`, kept ? kept.id : null, 10_000 + n, { readFiles: [], modifiedFiles: [] }, n % 2 === 0);
    } else if (op.op === "branch") {
      const all = sm.getEntries();
      const target = all[Math.floor(op.target * all.length)];
      // /tree: choosing a user message re-edits it (leaf = its parent); otherwise leaf = the entry.
      const leaf = isMessage(target, "user") ? target.parentId : target.id;
      count(op.summary ? "branch_with_summary" : "branch");
      if (op.summary) sm.branchWithSummary(leaf, `branch summary ${n++}`);
      else if (leaf === null) sm.resetLeaf();
      else sm.branch(leaf);
    } else {
      // Edits that keep tool calls paired: tool results, users, custom messages, call-free assistants.
      const targets = path.filter(
        (e) =>
          isMessage(e, "toolResult") ||
          isMessage(e, "user") ||
          e.type === "custom_message" ||
          (isMessage(e, "assistant") && !(e as { message: AssistantMessage }).message.content.some((b) => b.type === "toolCall")),
      );
      const target = targets[Math.floor(op.target * targets.length)];
      if (!target) return;
      count(op.omit ? "context_edit_omit" : "context_edit_replace");
      sm.appendContextEdit(target.id, op.omit ? null : { content: isMessage(target, "user") || target.type === "custom_message" ? `edited ${n++}` : [{ type: "text", text: `[pruned ${n++}]` }] });
    }
  };

  for (const exchange of plan.exchanges) {
    exchange.before.forEach(meta);
    count("user");
    const text = pad(`u${n++}`, exchange.prompt.chars);
    sm.appendMessage({ role: "user", content: exchange.prompt.image ? [{ type: "text", text }, { type: "image", data: "aGVsbG8=", mimeType: "image/png" }] : text, timestamp: ts() });
    for (const [i, round] of exchange.rounds.entries()) {
      const last = i === exchange.rounds.length - 1;
      const message = appendAssistant(last ? { ...round, calls: 0 } : round);
      if (message.stopReason !== "toolUse") break;
      if (round.between === "custom_message") meta({ op: "custom_message", chars: 40, display: true });
      if (round.between === "custom_entry") meta({ op: "custom_entry" });
    }
    exchange.after.forEach(after);
  }
  const file = sm.getSessionFile();
  if (!file) throw new Error("session manager did not persist");
  return { file, text: readFileSync(file, "utf8"), sessionManager: sm, expected, counts };
}

/** Pi's context messages as they read back from the file (keys holding `undefined` vanish). */
export function asWritten(messages: AgentMessage[]): AgentMessage[] {
  return JSON.parse(JSON.stringify(messages)) as AgentMessage[];
}
