/**
 * Runs one fuzzed session script against Pi's session manager and the extension's engine
 * (through `engine-adapter.ts`), checking after every step:
 * - every request that would be sent passes the provider's rules (`wire-check.ts`);
 * - every ref the rendered request offers is recovered byte-exact through `keeper_recall`,
 *   page by page (`recovery-check.ts`);
 * - a clean restart renders the very same request as the runtime it replaced, and restoring
 *   from the persisted entries reports no unreadable entry.
 * The first broken rule ends the session as a violation (the fuzzer then shrinks it).
 */
import type { ToolCall } from "@earendil-works/pi-ai";
import type { ContextMessage } from "../../src/session/messages.ts";
import type { KeeperSettings } from "../../src/settings/schema.ts";
import type { BatchSummary } from "../../src/summarize/batch.ts";
import * as engine from "./engine-adapter.ts";
import { MODELS, PATHS, PiSession, TOOLS, assistantMessage, outputText, toolCallId, toolResult, userMessage } from "./pi-sim.ts";
import { checkRecovery, checkSpilledRecall, type RecoveryTally } from "./recovery-check.ts";
import type { Action, CallScript, SessionScript, StepScript } from "./session-script.ts";
import { settingsOf } from "./settings-extremes.ts";
import { summarizeWithFault } from "./summarizer-faults.ts";
import { checkRequest, requestBody } from "./wire-check.ts";
import { FuzzViolation, emptyTotals, type RunOptions, type SessionTotals, type Violation } from "./outcome.ts";

export { emptyTotals, type RunOptions, type SessionTotals, type Violation };

const tokensOf = engine.contextTokens;
const SPILL_DIR = "/fuzz/session.jsonl.keeper";

class Runner {
  pi = new PiSession();
  state = engine.initialEngineState();
  /** Spill files, as UTF-8 bytes on a disk that survives restarts. */
  disk = new Map<string, Buffer>();
  clock = 1_760_000_000_000;
  model: engine.Model;
  thinking: string;
  settings: KeeperSettings;
  totals = emptyTotals();
  tally: RecoveryTally = { offered: new Set(), recovered: new Set(), fromSpill: new Set(), unspilled: new Set() };
  /** Refs offered on the current branch (since the last `/tree` move). */
  offeredHere = new Set<string>();
  // What one runtime of the extension holds in memory (lost on restart).
  requestTimes: number[] = [];
  lastKey: engine.CacheKey | undefined;
  compacted = false;
  seamPlaced = false;
  previousSeam: engine.PreviousSeam | undefined;
  tokensAtLastFlush = 0;
  /** Where the last flush inside a loop ran (the in-loop trigger's spacing). */
  lastLoopMark: engine.LoopFlushMark | undefined;
  lastRequestTokens = 0;
  summaryCache = new Map<string, BatchSummary>();
  /** The state or branch changed since refs were last checked. */
  dirty = true;
  flushIndex = 0;
  calls = 0;
  idsByProvider = new Map<string, string[]>();
  outputByPath = new Map<number, string>();
  prompts = 0;

  constructor(
    readonly script: SessionScript,
    readonly options: RunOptions,
  ) {
    this.settings = settingsOf(script.settings);
    this.model = MODELS[script.startModel];
    this.thinking = script.startThinking;
  }

  tick(ms: number) {
    this.clock += ms;
  }

  keyNow(): engine.CacheKey {
    return { at: this.clock, model: `${this.model.provider}/${this.model.id}`, thinkingLevel: this.thinking, toolsDigest: "" };
  }

  rendered(context: ContextMessage[]): ContextMessage[] {
    return this.settings.enabled ? engine.render({ messages: context, state: this.state, settings: this.settings, model: this.model }) : context;
  }

  facts(): engine.DisciplineFacts {
    return engine.cacheFacts({
      requestTimes: this.requestTimes,
      previous: this.lastKey,
      current: this.keyNow(),
      compacted: this.compacted,
      contextTokens: this.lastRequestTokens,
      contextWindow: this.script.contextWindow,
      seamActive: this.seamPlaced,
    });
  }

  async request(): Promise<void> {
    if (this.settings.enabled) {
      // The live render re-plans first when the cache is already lost.
      const replan = engine.coldReplan({
        state: this.state,
        branch: this.pi.context(),
        settings: this.settings,
        model: this.model,
        now: this.clock,
        facts: this.facts(),
        spillPathFor: (sha) => `${SPILL_DIR}/${sha}.txt`,
      });
      if (replan) {
        // As the host does at before_provider_request: side files first, then the entries.
        for (const s of replan.spills) this.disk.set(s.path, Buffer.from(s.text, "utf8"));
        for (const e of replan.entries) this.pi.manager.appendCustomEntry(e.customType, e.data);
        this.state = replan.state;
        this.totals.coldReplans++;
        this.dirty = true;
      }
    }
    const raw = this.pi.context();
    const rendered = this.rendered(raw);
    let body = requestBody(rendered, this.model, this.thinking);
    if (this.settings.enabled) {
      const placed = engine.placeSeam({ body, rendered, state: this.state, settings: this.settings, model: this.model, ...(this.previousSeam ? { previous: this.previousSeam } : {}) });
      body = placed.body;
      this.previousSeam = placed.carried;
      this.seamPlaced = placed.seam >= 0;
    }
    const broken = checkRequest({ raw, rendered, body, model: this.model });
    if (broken) {
      if (process.env.FUZZ_DEBUG) console.error(JSON.stringify({ model: this.model, thinking: this.thinking, raw, body }, null, 1));
      throw new FuzzViolation(`request refused: ${broken}`);
    }
    if (this.dirty) await this.recover(rendered);
    this.requestTimes.push(this.clock);
    this.lastKey = this.keyNow();
    this.compacted = false;
    this.lastRequestTokens = tokensOf(rendered);
    this.totals.requests++;
  }

  async recover(rendered: readonly ContextMessage[]): Promise<void> {
    this.dirty = false;
    const failure = await checkRecovery({
      raw: this.pi.context(),
      rendered,
      branchMessages: this.pi.branchMessages(),
      pageChars: this.settings.recall.pageChars,
      tally: this.tally,
      seen: this.offeredHere,
      spill: { thresholdBytes: this.settings.recall.spillThresholdBytes, isSpilled: (ref) => engine.isSpilled(this.state, ref), strict: this.options.strictSpill === true },
      argumentsOnly: engine.argumentsOnlyRefs(this.state),
      recall: this.recallOver(this.pi.branchMessages()),
    });
    if (failure) {
      if (process.env.FUZZ_DEBUG) console.error(JSON.stringify({ frontier: this.state.keeper.frontier, recall: Object.keys(this.state.recall.entries) }, null, 1));
      throw new FuzzViolation(`original not recovered: ${failure}`);
    }
  }

  recallOver(branchMessages: ContextMessage[]) {
    return (ref: string, offset: number, limit: number) =>
      engine.recall({
        state: this.state,
        ref,
        offset,
        limit,
        branchMessages,
        readSpill: async (path) => {
          const bytes = this.disk.get(path);
          if (!bytes) throw new Error(`ENOENT: ${path}`);
          return bytes.toString("utf8");
        },
      });
  }

  /** One flush; `keep` tears its persistence after that many entries (a crash), then restarts. */
  async flush(trigger: string, keep?: number): Promise<void> {
    if (!this.settings.enabled || !engine.flushesActive(this.settings, this.model)) return;
    const fault = this.script.faults[this.flushIndex++ % this.script.faults.length];
    const context = this.pi.context();
    const out = await engine.flush({
      state: this.state,
      branch: context,
      settings: this.settings,
      model: this.model,
      now: this.clock,
      summarize: (batches) =>
        summarizeWithFault(batches, { settings: this.settings, fault: fault === "spill-fail" ? "ok" : fault, requestTimes: this.requestTimes, ttlMs: engine.CACHE_TTL_MS, cache: this.summaryCache }),
      ...(this.settings.cache.discipline ? { discipline: this.facts() } : {}),
      spillPathFor: (sha) => `${SPILL_DIR}/${sha}.txt`,
      ...(trigger === "loop" ? { trigger: "loop" as const } : {}),
    });
    this.totals.flushes++;
    if (fault === "spill-fail" && out.spills.length > 0) {
      // The live flush throws before it commits: history stays as it was.
      this.totals.faults++;
      return;
    }
    if (fault !== "ok" && fault !== "spill-fail" && out.batches > 0) this.totals.faults++;
    for (const s of out.spills) this.disk.set(s.path, Buffer.from(s.text, "utf8"));
    const entries = keep === undefined ? out.entries : out.entries.slice(0, keep % (out.entries.length + 1));
    for (const e of entries) this.pi.manager.appendCustomEntry(e.customType, e.data);
    if (keep !== undefined) return;
    this.state = out.state;
    this.tokensAtLastFlush = tokensOf(this.rendered(this.pi.context()));
    this.dirty = true;
  }

  makeCall(c: CallScript, taken: Set<string>): { call: ToolCall; text: string; isError: boolean } {
    const tool = TOOLS[c.tool];
    const path = PATHS[c.path];
    this.calls++;
    // Google and OpenAI-compatible servers may reuse their own ids; Anthropic issues unique ones.
    const own = this.idsByProvider.get(this.model.provider) ?? [];
    const reusable = c.reuseId && own.length > 0 && this.model.api !== "anthropic-messages";
    const reused = reusable ? own[this.calls % own.length] : undefined;
    const id = reused !== undefined && !taken.has(reused) ? reused : toolCallId(this.model, this.calls);
    taken.add(id);
    this.idsByProvider.set(this.model.provider, [...own, id]);
    const args: Record<string, string> = tool === "bash" ? { command: `cat ${path}` } : tool === "keeper_recall" ? { ref: `${id}@0#0` } : tool === "grep" ? { pattern: "v1", path } : { path };
    const previous = this.outputByPath.get(c.path);
    const body = c.repeat && previous !== undefined ? previous : outputText(`${tool}:${path}:${this.calls}`, c.size);
    this.outputByPath.set(c.path, body);
    const text = c.isError ? `Error: ${path}: exit code 1\n${body}` : body;
    return { call: { type: "toolCall", id, name: tool, arguments: args as ToolCall["arguments"] }, text, isError: c.isError };
  }

  thinkingText(): string | undefined {
    return this.thinking === "off" ? undefined : `Let me think (${this.clock}).`;
  }

  async step(step: StepScript): Promise<void> {
    this.tick(2_000);
    await this.request();
    this.tick(1_000);
    const taken = new Set<string>();
    const made = step.calls.map((c) => this.makeCall(c, taken));
    const thinking = step.thinking ? this.thinkingText() : undefined;
    this.pi.append(assistantMessage({ model: this.model, at: this.clock, ...(thinking !== undefined ? { thinking } : {}), calls: made.map((m) => m.call) }));
    const order = step.reverseResults ? [...made].reverse() : made;
    for (const m of order) {
      this.tick(50);
      this.pi.append(toolResult(m.call, m.text, m.isError, this.clock));
    }
    // turn_end: the budget trigger.
    const fires = engine.budgetFires({
      settings: this.settings,
      contextTokens: tokensOf(this.rendered(this.pi.context())),
      tokensAtLastFlush: this.tokensAtLastFlush,
      contextWindow: this.script.contextWindow,
    });
    if (fires) {
      this.lastLoopMark = engine.loopMarkOf(this.pi.context());
      await this.flush("budget");
    } else if (this.settings.enabled && engine.flushesActive(this.settings, this.model)) {
      // Else the in-loop trigger, priced with the facts the live host hands it.
      const mark = engine.loopFlushFires({ settings: this.settings, branch: this.pi.context(), state: this.state, facts: this.facts(), last: this.lastLoopMark });
      if (mark) {
        this.lastLoopMark = mark;
        this.totals.loopFlushes++;
        await this.flush("loop");
      }
    }
    if (step.flushAfter) await this.flush("manual");
  }

  async prompt(action: Extract<Action, { kind: "prompt" }>): Promise<void> {
    this.tick(action.gapMs);
    this.pi.append(userMessage(`prompt ${++this.prompts}`, this.clock));
    for (const s of action.steps) await this.step(s);
    this.tick(2_000);
    await this.request();
    this.tick(1_000);
    const thinking = this.thinkingText();
    if (action.end === "stop") {
      this.pi.append(assistantMessage({ model: this.model, at: this.clock, ...(thinking !== undefined ? { thinking } : {}), text: `answer ${this.prompts}` }));
      await this.flush("request-end");
      return;
    }
    // An aborted or failed answer: a dangling call Pi never ran, no flush.
    const dangling: ToolCall = { type: "toolCall", id: toolCallId(this.model, ++this.calls), name: "read", arguments: { path: PATHS[0] } };
    this.pi.append(assistantMessage({ model: this.model, at: this.clock, text: "partial", calls: [dangling], stopReason: action.end }));
  }

  /** Session start or `/tree`: the cache runtime seeds from the branch, the engine from its entries. */
  restoreRuntime(): void {
    const context = this.pi.context();
    const restored = engine.restore({ branchEntries: this.pi.branch(), context });
    if (restored.diagnostics.length > 0) throw new FuzzViolation(`restore skipped entries it wrote: ${restored.diagnostics[0]}`);
    this.state = restored.state;
    this.requestTimes = [];
    this.lastKey = undefined;
    for (const m of context) {
      if (m.role !== "assistant") continue;
      this.requestTimes.push(m.timestamp);
      this.lastKey = { at: m.timestamp, model: `${m.provider}/${m.model}`, thinkingLevel: this.thinking, toolsDigest: "" };
    }
    this.compacted = false;
    this.seamPlaced = false;
    this.previousSeam = undefined;
    this.tokensAtLastFlush = tokensOf(this.rendered(context));
    this.dirty = true;
  }

  restart(compare: boolean): void {
    const leaf = this.pi.manager.getLeafId();
    const before = JSON.stringify(this.rendered(this.pi.context()));
    this.pi = this.pi.reopened();
    this.summaryCache = new Map();
    this.restoreRuntime();
    this.totals.restarts++;
    if (!compare || this.pi.manager.getLeafId() !== leaf) return;
    const after = JSON.stringify(this.rendered(this.pi.context()));
    if (after !== before) throw new FuzzViolation("a restart changed the rendered context (state restored from the entries differs from the state in memory)");
  }

  tree(action: Extract<Action, { kind: "tree" }>): void {
    const prompts = this.pi.branch().filter((e) => e.type === "message" && e.message.role === "user");
    if (prompts.length === 0) return;
    const target = prompts[Math.max(0, prompts.length - 1 - action.back)];
    if (action.summary) this.pi.manager.branchWithSummary(target.parentId, "The user went back; the abandoned branch tried another approach.");
    else if (target.parentId) this.pi.manager.branch(target.parentId);
    else this.pi.manager.resetLeaf();
    this.totals.treeMoves++;
    this.offeredHere = new Set();
    this.restoreRuntime();
  }

  async compact(action: Extract<Action, { kind: "compact" }>): Promise<void> {
    const cut = engine.compactionCut(this.pi.branch(), action.keepRecentTokens);
    if (!cut) return;
    const details = action.by === "pi" ? { readFiles: [], modifiedFiles: [] } : { source: "context-keeper" };
    this.pi.manager.appendCompaction(`Summary of ${cut.summarized} earlier messages.`, cut.firstKeptEntryId, cut.tokensBefore, details, action.by === "keeper");
    if (this.settings.enabled) this.state = engine.afterCompaction(this.state, this.pi.context());
    this.compacted = true;
    this.tokensAtLastFlush = 0;
    this.totals.compactions++;
    this.dirty = true;
    const view = this.pi.context();
    const failure = await checkSpilledRecall({
      refs: this.offeredHere,
      branchMessages: this.pi.branchMessages(),
      view,
      isSpilled: (ref) => engine.isSpilled(this.state, ref),
      pageChars: this.settings.recall.pageChars,
      tally: this.tally,
      recall: this.recallOver(view),
    });
    if (failure) throw new FuzzViolation(`original not recovered: ${failure}`);
  }

  async act(action: Action): Promise<void> {
    switch (action.kind) {
      case "prompt":
        return this.prompt(action);
      case "model":
        this.model = MODELS[action.to];
        this.pi.manager.appendModelChange(this.model.provider, this.model.id);
        return;
      case "thinking":
        this.thinking = action.level;
        this.pi.manager.appendThinkingLevelChange(action.level);
        return;
      case "tree":
        return this.tree(action);
      case "compact":
        return this.compact(action);
      case "restart":
        return this.restart(true);
      case "crash":
        await this.flush("manual", action.keep);
        return this.restart(false);
      case "flushNow":
        return this.flush("manual");
    }
  }
}

export interface SessionOutcome {
  totals: SessionTotals;
  violation?: Violation;
}

/** Run a script to its end or to its first violation (a broken rule, or anything thrown). */
export async function runSession(script: SessionScript, options: RunOptions = {}): Promise<SessionOutcome> {
  const runner = new Runner(script, options);
  let index = 0;
  const done = () => {
    runner.totals.refsOffered = runner.tally.offered.size;
    runner.totals.refsRecovered = runner.tally.recovered.size;
    runner.totals.spillRecoveries = runner.tally.fromSpill.size;
    runner.totals.unspilled = runner.tally.unspilled.size;
    return runner.totals;
  };
  try {
    for (; index < script.actions.length; index++) await runner.act(script.actions[index]);
    // The state the session ends in: every ref its next request would offer.
    runner.dirty = true;
    await runner.recover(runner.rendered(runner.pi.context()));
  } catch (error) {
    // Anything the engine throws is a failure too: live, a throwing hook breaks the request.
    const rule = error instanceof FuzzViolation ? error.rule : `threw: ${error instanceof Error ? `${error.message} @ ${(error.stack ?? "").split("\n")[1]?.trim() ?? ""}` : String(error)}`;
    return { totals: done(), violation: { action: index, request: runner.totals.requests, rule } };
  }
  return { totals: done() };
}
