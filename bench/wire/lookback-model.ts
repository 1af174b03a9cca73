/**
 * The fake model of the looking-back benchmark: a function script for the fake Anthropic server
 * that plays a `LookbackScenario` and reacts to what each request holds.
 *
 * It answers with the scenario's steps in order. Before a step that uses needs, it checks the
 * request: a need whose fact text is anywhere in it is "in context"; for the others it answers
 * with a recovery step instead (one call per missing need, in parallel), the way a model would:
 * 1. this extension's `keeper_recall` when the request shows a ref of the output — with the
 *    fact's cue as `pattern` when the tool's schema offers one, else (or when that missed) the
 *    whole page, then the next pages;
 * 2. pi-condense's `context_tree_query` when its stub (or a line naming the call) gives a ref;
 * 3. else, or when the recall did not bring the fact, a re-run of the original call.
 * The step is asked again on the next request (which carries the recovery's results), so each
 * recovery costs one more request, billed like any other. A need still missing after
 * `MAX_ATTEMPTS` recoveries is "lost" (the step goes on without it).
 */
import { lastUserText } from "../../test/support/fake-anthropic/classify.ts";
import type { MainScript, MainStep, ScriptedToolCall, WireRequest } from "../../test/support/fake-anthropic/types.ts";
import type { LookbackScenario, Need, PlannedStep } from "../../test/support/lookback/scenario.ts";
import {
  allToolResults,
  CONDENSE_QUERY_TOOL,
  condenseRefIn,
  escapeRegExp,
  KEEPER_RECALL_TOOL,
  keeperRefIn,
  newToolResults,
  nextRecallOffset,
  offeredTool,
  requestText,
} from "./lookback-wire.ts";

export const MAX_ATTEMPTS = 6;

export type NeedHow = "context" | "recalled" | "re-run" | "lost";

export interface NeedOutcome {
  need: Need;
  how: NeedHow;
  recalls: number;
  reruns: number;
}

export interface LookbackReport {
  outcomes: NeedOutcome[];
  /** Seqs of the main requests answered with a recovery step (each costs one more request). */
  recoverySeqs: number[];
  /** Characters of the recovery calls' results, by how they recovered. */
  recallResultChars: number;
  rerunResultChars: number;
  /** Recalls of an output already recalled in an earlier prompt. */
  rerecalls: number;
  /** Recalls that came back without the fact. */
  recallMisses: number;
  /** Needs whose origin output, seen raw, did not hold the fact (a scenario defect: should be 0). */
  factNotInOrigin: string[];
  /** Prompt starts where the request's prompt was not the one the script expected. */
  misaligned: number;
  exhausted: number;
}

interface Attempt {
  kind: "keeper-pattern" | "keeper-page" | "condense" | "rerun";
  toolId: string;
  ref?: string;
}

interface NeedState {
  attempts: Attempt[];
  outcome?: NeedOutcome;
}

export interface LookbackModel {
  script: Extract<MainScript, (...args: never[]) => unknown>;
  report(): LookbackReport;
}

export function createLookbackModel(scenario: LookbackScenario): LookbackModel {
  const flat: Array<{ step: PlannedStep; prompt: number; first: boolean }> = scenario.stepsByPrompt.flatMap((steps, prompt) => steps.map((step, i) => ({ step, prompt, first: i === 0 })));
  const states = new Map<string, NeedState>(scenario.needs.map((n) => [n.id, { attempts: [] }]));
  /** Origin call id → ids of calls whose output is the same (re-runs). */
  const sources = new Map<string, string[]>();
  const recalledInPrompt = new Map<string, number>();
  const pendingChars = new Map<string, "recall" | "rerun">();
  const verified = new Set<string>();
  const report: LookbackReport = { outcomes: [], recoverySeqs: [], recallResultChars: 0, rerunResultChars: 0, rerecalls: 0, recallMisses: 0, factNotInOrigin: [], misaligned: 0, exhausted: 0 };
  let cursor = 0;
  let recoveryNo = 0;
  const promptsSeen = new Set<number>();

  const idsOf = (need: Need) => [need.origin.call.id, ...(sources.get(need.origin.call.id) ?? [])];

  function observe(body: WireRequest): void {
    for (const [id, r] of newToolResults(body)) {
      const kind = pendingChars.get(id);
      if (kind === "recall") report.recallResultChars += r.text.length;
      if (kind === "rerun") report.rerunResultChars += r.text.length;
      pendingChars.delete(id);
      // Every need on this output: its fact must be in the output as first seen.
      for (const need of scenario.needs) {
        if (need.origin.call.id !== id || verified.has(need.id)) continue;
        verified.add(need.id);
        if (!r.text.includes(need.fact.text)) report.factNotInOrigin.push(`${need.id}: ${need.fact.text}`);
      }
    }
  }

  function settle(need: Need, how: NeedHow): void {
    const st = states.get(need.id)!;
    if (st.outcome) return;
    st.outcome = {
      need,
      how,
      recalls: st.attempts.filter((a) => a.kind !== "rerun").length,
      reruns: st.attempts.filter((a) => a.kind === "rerun").length,
    };
    report.outcomes.push(st.outcome);
  }

  /** The next recovery call for a missing need, given what was tried. */
  function recovery(body: WireRequest, text: string, need: Need, prompt: number): ScriptedToolCall | undefined {
    const st = states.get(need.id)!;
    const toolId = `toolu_lb${scenario.seed}_r${recoveryNo++}`;
    const last = st.attempts[st.attempts.length - 1];
    if (last && last.kind !== "rerun") report.recallMisses++;
    const ids = idsOf(need);
    const keeper = offeredTool(body, KEEPER_RECALL_TOOL);
    const keeperRef = keeper.offered ? keeperRefIn(text, ids) : undefined;
    const tried = (k: Attempt["kind"]) => st.attempts.filter((a) => a.kind === k);
    const push = (a: Attempt, call: ScriptedToolCall): ScriptedToolCall => {
      st.attempts.push(a);
      if (a.kind !== "rerun") {
        const key = need.origin.call.id;
        if (recalledInPrompt.has(key) && recalledInPrompt.get(key)! < prompt) report.rerecalls++;
        recalledInPrompt.set(key, prompt);
      }
      pendingChars.set(toolId, a.kind === "rerun" ? "rerun" : "recall");
      return { ...call, id: toolId };
    };
    if (keeperRef && tried("rerun").length === 0) {
      if (keeper.parameters.has("pattern") && tried("keeper-pattern").length === 0) {
        return push({ kind: "keeper-pattern", toolId, ref: keeperRef }, { name: KEEPER_RECALL_TOOL, input: { ref: keeperRef, pattern: escapeRegExp(need.fact.cue) } });
      }
      const pages = tried("keeper-page");
      const lastPage = pages[pages.length - 1];
      const previous = lastPage ? allToolResults(body).get(lastPage.toolId) : undefined;
      const offset = lastPage ? (previous === undefined ? undefined : nextRecallOffset(previous)) : 0;
      if (offset !== undefined) return push({ kind: "keeper-page", toolId, ref: keeperRef }, { name: KEEPER_RECALL_TOOL, input: { ref: keeperRef, ...(offset > 0 ? { offset } : {}) } });
    }
    const condense = offeredTool(body, CONDENSE_QUERY_TOOL);
    const condenseRef = condense.offered && !keeperRef ? condenseRefIn(body, text, ids, need.origin.target) : undefined;
    if (condenseRef && tried("condense").length === 0 && tried("rerun").length === 0) {
      return push({ kind: "condense", toolId, ref: condenseRef }, { name: CONDENSE_QUERY_TOOL, input: { toolCallIds: [condenseRef] } });
    }
    if (tried("rerun").length >= 2) return undefined;
    sources.set(need.origin.call.id, [...(sources.get(need.origin.call.id) ?? []), toolId]);
    return push({ kind: "rerun", toolId }, { name: need.origin.call.name, input: need.origin.call.input });
  }

  const script: LookbackModel["script"] = ({ request }) => {
    const body = request.body;
    observe(body);
    const at = flat[cursor];
    if (!at) {
      report.exhausted++;
      return { text: "(lookback script exhausted)" };
    }
    if (at.first && !promptsSeen.has(at.prompt)) {
      promptsSeen.add(at.prompt);
      if (!lastUserText(body).includes(`Task ${at.prompt + 1}:`)) report.misaligned++;
    }
    const text = requestText(body);
    const calls: ScriptedToolCall[] = [];
    for (const need of at.step.needs) {
      const st = states.get(need.id)!;
      if (st.outcome) continue;
      if (text.includes(need.fact.text)) {
        const reran = st.attempts.some((a) => a.kind === "rerun");
        settle(need, st.attempts.length === 0 ? "context" : reran ? "re-run" : "recalled");
        continue;
      }
      const call = st.attempts.length < MAX_ATTEMPTS ? recovery(body, text, need, at.prompt) : undefined;
      if (call) calls.push(call);
      else settle(need, "lost");
    }
    if (calls.length > 0) {
      report.recoverySeqs.push(request.seq);
      return { thinking: `I need the exact lines again before this step (${calls.length} output(s)).`, text: "Looking back at an earlier output.", toolCalls: calls };
    }
    cursor++;
    const { needs: _needs, ...step } = at.step;
    return step satisfies MainStep;
  };

  return { script, report: () => report };
}

/** Outcome counts: in context / recalled / re-run / lost. */
export function outcomeCounts(report: LookbackReport): Record<NeedHow, number> {
  const counts: Record<NeedHow, number> = { context: 0, recalled: 0, "re-run": 0, lost: 0 };
  for (const o of report.outcomes) counts[o.how]++;
  return counts;
}
