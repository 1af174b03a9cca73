/**
 * The report on sessions of every provider: OpenAI Codex / Responses / Chat Completions,
 * Google, and a session that switches between Anthropic and OpenAI. The sessions are generated
 * (test/support/report/provider-session.ts) with usage computed the provider's way by an
 * independent word-level tokenizer and message-level cache; the report must replay them with
 * each model's cache rule, fit its estimator from the recorded usage, and land within ±10%.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processResponsesStream } from "@earendil-works/pi-ai/api/openai-responses-shared";
import { generateProviderSession, GEMINI_FLASH, GPT41_COMPLETIONS, GPT54_RESPONSES, GPT55_CODEX, SONNET45, SONNET45_DENSER, type ProviderModel } from "../../test/support/report/provider-session.ts";
import { registryCostModels } from "./cli/model-prices.ts";
import { runReportCli, type CliIo } from "./cli/run-report.ts";
import { replaySession } from "./replay.ts";
import type { DisciplineFacts } from "../engine/decide.ts";
import type { ContextMessage } from "../session/messages.ts";
import { DEFAULT_SETTINGS } from "../settings/parse.ts";
import { keeperReplayConfig } from "./keeper-config.ts";
import { createKeeperReplayEngine, replayCacheFacts } from "./keeper-engine.ts";
import { replaySummarizer, sizeModelSummarizer } from "./replay-summaries.ts";
import { sessionModel } from "./session-model.ts";
import { sessionTable } from "./table.ts";
import { probeFileSystem } from "./cli/file-probe.ts";
import { batchesOf, corpusMessages } from "../../test/support/summarize/corpus-batches.ts";

const tmp = mkdtempSync(join(tmpdir(), "keeper-providers-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const costModels = registryCostModels();

function runCli(args: string[]): { code: number; stdout: string; stderr: string; files: Record<string, string> } {
  let stdout = "";
  let stderr = "";
  const files: Record<string, string> = {};
  const io: CliIo = {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    stderrIsTTY: false,
    cwd: tmp,
    sessionsDir: join(tmp, "no-sessions"),
    mkdir: () => {},
    writeFile: (path, text) => (files[path] = text),
    now: () => 0,
    probeFile: probeFileSystem,
    version: "0.0.0-test",
  };
  const code = runReportCli(args, io);
  return { code, stdout, stderr, files };
}

describe("an OpenAI Codex session (gpt-5.5, openai-codex-responses) through the CLI", () => {
  // Before the provider-aware replay this printed a table of zeros and exited 1.
  const s = generateProviderSession({ seed: 11, models: [GPT55_CODEX], prompts: 9, dir: tmp });
  const r = runCli(["report", s.file, "--json", "--out", join(tmp, "charts"), "--arms", "keeper"]);
  const json = JSON.parse(r.stdout);
  const session = json.sessions[0];

  test("exits 0 and replays every billed request", () => {
    expect(s.requests).toBeGreaterThan(100);
    expect(r.code).toBe(0);
    expect(session.requests).toBe(s.requests);
    expect(session.arms.bare.read).toBeGreaterThan(0);
    expect(session.arms.bare.billed_input).toBeGreaterThan(0);
  });
  test("replayed with OpenAI's rule and gpt-5.5's registry price (codex borrows openai's list price)", () => {
    expect(session.models).toHaveLength(1);
    expect(session.models[0]).toMatchObject({ model: "gpt-5.5", api: "openai-codex-responses", price_source: "pi-ai registry", prices: { input: 5, output: 30, cache_read: 0.5, cache_write: 0 } });
    expect(session.models[0].cache_rule).toContain("automatic prefix caching");
    expect(session.arms.bare.write).toBe(0);
  });
  test("calibrated within ±10% against the recorded usage, in-sample and cross-validated", () => {
    expect(session.calibration.estimator.source).toBe("per-session");
    expect(session.calibration.total_error).toBeLessThan(0.1);
    expect(session.calibration.total_error_cross_validated).toBeLessThan(0.1);
  });
  test("money beside tokens: the bare replay's dollars match the recorded usage's within 10%", () => {
    expect(session.recorded_with).toBe("bare");
    expect(session.money.paid_usd).toBeGreaterThan(0);
    expect(session.money.replayed_paid_usd).toBe(session.money.bare_usd);
    expect(Math.abs(session.money.bare_usd / session.money.paid_usd - 1)).toBeLessThan(0.1);
    expect(session.money.keeper_usd).toBeCloseTo(session.arms.keeper.usd_total, 10);
    expect(session.money.keeper_usd).toBeLessThan(session.money.bare_usd);
    expect(session.money.saved_usd).toBeCloseTo(session.money.paid_usd - session.arms.keeper.usd_total, 10);
  });
  test("the chart's title says it in dollars", () => {
    const svg = Object.values(r.files)[0];
    expect(svg).toMatch(/you paid \$\d+\.\d\d; with the keeper ≈ \$\d+\.\d\d/);
  });
  test("the table says it in dollars", () => {
    expect(sessionTable(session)).toMatch(/you paid \$\d+\.\d\d; with the keeper ≈ \$\d+\.\d\d/);
    expect(sessionTable(session)).toMatch(/^keeper .*\$\d+\.\d\d/m);
  });
});

describe("the keeper arm on an OpenAI session decides with OpenAI's rule and prices", () => {
  const s = generateProviderSession({ seed: 11, models: [GPT55_CODEX], prompts: 9, dir: tmp });
  const engine = createKeeperReplayEngine({ config: keeperReplayConfig(DEFAULT_SETTINGS), summarize: sizeModelSummarizer(), discipline: DEFAULT_SETTINGS.cache });
  const facts: DisciplineFacts[] = [];
  replaySession({
    file: s.file,
    text: s.text,
    costModels,
    transformContext: (messages, requestIndex, info) => {
      facts.push(replayCacheFacts(engine.state(), { messages: messages as ContextMessage[], requestIndex, info }, 200_000));
      return engine.transformContext(messages as ContextMessage[], requestIndex, info) as never;
    },
    transformBody: (body, requestIndex, info) => engine.transformBody(body, requestIndex, info),
  });
  const gate = engine.state().engine.gateLog.entries;

  test("every request's facts carry gpt-5.5's cost model and OpenAI's 10-minute lifetime", () => {
    expect(facts.length).toBe(s.requests);
    for (const f of facts) {
      expect(f.costModel?.ref.model).toBe("gpt-5.5");
      expect(f.ttlMs).toBe(10 * 60_000);
    }
  });
  test("the gate prices each rewrite without a write premium (re-sent at 1× input, read at 0.1×)", () => {
    expect(gate.length).toBeGreaterThan(0);
    for (const e of gate) {
      expect(e.decision.numbers.writePremium).toBe(false);
      expect(e.decision.numbers.writePrice).toBe(1);
      expect(e.decision.numbers.readPrice).toBeCloseTo(0.1, 9);
    }
  });
});

describe("a long-loop gpt-5.5 Codex session (two prompts of 55–65 steps, large files read first): flushes inside the loops pay", () => {
  // Issue 22: a real session of this shape (two long loops) replayed at 0.687× bare when nothing
  // inside a running loop was rewritten. On this generated one the keeper measured 0.293× bare,
  // 0.464× with the in-loop trigger off (the budget trigger alone); 0.381× for the code before it.
  const s = generateProviderSession({ seed: 11, models: [GPT55_CODEX], prompts: 2, stepsPerPrompt: [55, 65], earlyBigSteps: 8, dir: tmp });
  const r = runCli(["report", s.file, "--json", "--no-chart", "--arms", "keeper,loop-flush-off"]);
  const arms = JSON.parse(r.stdout).sessions[0].arms;

  test("the keeper flushes inside the loops and costs at most 0.35× bare, under 0.8× its cost with the in-loop trigger off", () => {
    expect(r.code).toBe(0);
    expect(s.requests).toBeGreaterThan(100);
    expect(arms.keeper.loop_flushes).toBeGreaterThan(5);
    expect(arms["loop-flush-off"].loop_flushes).toBe(0);
    expect(arms.keeper.ratio_to_bare).toBeLessThan(0.35);
    expect(arms.keeper.ratio_to_bare).toBeLessThan(0.8 * arms["loop-flush-off"].ratio_to_bare);
  });
});

const providers: Array<[string, ProviderModel]> = [
  ["openai-responses", GPT54_RESPONSES],
  ["openai-completions", GPT41_COMPLETIONS],
  ["google-generative-ai", GEMINI_FLASH],
];

describe.each(providers)("a %s session", (_api, model) => {
  const s = generateProviderSession({ seed: 23, models: [model], prompts: 6, dir: tmp });
  const r = replaySession({ file: s.file, text: s.text, calibrate: "per-session", costModels });
  test("every request replayed with the model's rule; calibrated within ±10%", () => {
    expect(r.requests).toHaveLength(s.requests);
    expect(r.requests[0].costModel.rule.mechanism).toBe("automatic-prefix");
    expect(r.requests[0].costModel.prices.source).toBe("registry");
    expect(r.calibration.total_error).toBeLessThan(0.1);
    expect(r.fit?.crossValidated?.total_error).toBeLessThan(0.1);
    expect(r.summary.write).toBe(0);
  });
});

describe("a session that switches between Claude and GPT every prompt", () => {
  const s = generateProviderSession({ seed: 5, models: [SONNET45, GPT55_CODEX], prompts: 8, dir: tmp });
  const r = replaySession({ file: s.file, text: s.text, calibrate: "per-session", costModels });
  test("each request carries its own model's rule and prices", () => {
    const by = (api: string) => r.requests.filter((q) => q.api === api);
    expect(by("anthropic-messages").length).toBeGreaterThan(10);
    expect(by("openai-codex-responses").length).toBeGreaterThan(10);
    expect(new Set(by("anthropic-messages").map((q) => q.costModel.rule.mechanism))).toEqual(new Set(["explicit-marks"]));
    expect(new Set(by("openai-codex-responses").map((q) => q.costModel.rule.mechanism))).toEqual(new Set(["automatic-prefix"]));
  });
  test("writes only on Claude's requests; calibrated within ±10% over both", () => {
    r.analysis.forEach((a, i) => {
      if (r.requests[i].api !== "anthropic-messages") expect(a.write).toBe(0);
    });
    expect(r.summary.write).toBeGreaterThan(0);
    expect(r.calibration.total_error).toBeLessThan(0.1);
  });
  test("a model switch is not a cache bust", () => {
    const switches = r.requests.flatMap((q, i) => (i > 0 && q.model !== r.requests[i - 1].model ? [i] : []));
    expect(switches.length).toBeGreaterThan(3);
    for (const i of switches) expect(r.analysis[i].bust).toBe(false);
  });
});

test("the generator's usage has the shape pi-ai's OpenAI Responses mapping produces", async () => {
  // pi-ai: input = input_tokens − cached_tokens − cache_write_tokens, cacheRead = cached_tokens, cacheWrite = cache_write_tokens (0 when absent).
  const output = { role: "assistant", content: [], usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop" };
  async function* events() {
    yield { type: "response.completed", response: { id: "r", status: "completed", output: [], usage: { input_tokens: 5000, input_tokens_details: { cached_tokens: 4608 }, output_tokens: 300, total_tokens: 5300 } } };
  }
  const model = { id: "gpt-5.5", api: "openai-responses", provider: "openai", cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 } };
  await processResponsesStream(events() as never, output as never, { push() {} } as never, model as never);
  expect(output.usage).toMatchObject({ input: 392, cacheRead: 4608, cacheWrite: 0, output: 300 });
  const s = generateProviderSession({ seed: 3, models: [GPT55_CODEX], prompts: 2, dir: tmp });
  const usages = s.text.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.type === "message" && e.message.role === "assistant").map((e) => e.message.usage);
  for (const u of usages) {
    expect(u.cacheWrite).toBe(0);
    expect(u.cacheRead === 0 || (u.cacheRead >= 1024 && (u.cacheRead - 1024) % 128 === 0)).toBe(true);
    expect(u.totalTokens).toBe(u.input + u.cacheRead + u.output);
  }
});

describe("a mixed session whose two models tokenize differently (Claude counts 25% more)", () => {
  const s = generateProviderSession({ seed: 9, models: [SONNET45_DENSER, GPT55_CODEX], prompts: 10, dir: tmp });
  const r = replaySession({ file: s.file, text: s.text, calibrate: "per-session", costModels });
  test("each model family gets its own fit; Claude's finds fewer characters per token", () => {
    const fams = Object.fromEntries((r.fit?.families ?? []).map((f) => [f.family, f]));
    expect(fams.anthropic.pooled).toBe(false);
    expect(fams.openai.pooled).toBe(false);
    expect(fams.anthropic.all.fitted && fams.openai.all.fitted).toBe(true);
    expect(fams.anthropic.all.estimator.codeCharsPerToken).toBeLessThan(fams.openai.all.estimator.codeCharsPerToken);
  });
  test("calibrated within ±10% per model, and cross-validated", () => {
    for (const api of ["anthropic-messages", "openai-codex-responses"]) {
      const idx = r.requests.flatMap((q, i) => (q.api === api ? [i] : []));
      const sim = idx.map((i) => r.analysis[i]);
      const rec = idx.map((i) => r.requests[i].recorded);
      const err = sim.reduce((n, a, k) => n + Math.abs(a.read - rec[k].cacheRead) + Math.abs(a.write - rec[k].cacheWrite) + Math.abs(a.uncached - rec[k].input), 0) / rec.reduce((n, x) => n + x.input + x.cacheRead + x.cacheWrite, 0);
      expect(err).toBeLessThan(0.1);
    }
    expect(r.fit?.crossValidated?.total_error).toBeLessThan(0.1);
  });
});

test("the size model bills the summary at the session model's output price", () => {
  const batch = batchesOf(corpusMessages()).find((b) => b.calls.length > 0)!;
  const claude = replaySummarizer("size-model")(batch);
  const gpt = replaySummarizer("size-model", 6)(batch);
  expect(gpt.billed - claude.billed).toBe(claude.summary.outputTokens);
  expect(sessionModel([{ type: "message", message: { role: "assistant", api: "openai-codex-responses", provider: "openai-codex", model: "gpt-5.5" } }])).toMatchObject({ model: "gpt-5.5", provider: "openai-codex", api: "openai-codex-responses", closedCycleThinking: "dropped" });
});
