/**
 * Async compaction configuration: environment parsing and the start window.
 *
 * Pure: the caller passes `process.env` (or a test object) and Pi's resolved compaction
 * settings. Bad values never throw; they fall back to that key's default and produce a
 * diagnostic the shell can show once.
 */

export const ENV_ENABLED = "PI_ASYNC_PREFIX_COMPACTION";
export const ENV_START_RATIO = "PI_ASYNC_PREFIX_COMPACTION_START_RATIO";
export const ENV_TIMEOUT_MS = "PI_ASYNC_PREFIX_COMPACTION_TIMEOUT_MS";
/** `0` keeps the start at START_RATIO exactly (no adaptive start); this package's addition. */
export const ENV_ADAPTIVE = "PI_ASYNC_PREFIX_COMPACTION_ADAPTIVE";
/** Longest wait for a pending job when Pi must compact now (this package's addition). */
export const ENV_WAIT_MS = "PI_ASYNC_PREFIX_COMPACTION_WAIT_MS";
/**
 * How long Pi's compaction at its threshold (or on overflow) waits for a late job before an
 * extractive digest is applied in its place (this package's addition); negative = never, wait
 * up to WAIT_MS for the model's summary.
 */
export const ENV_STALL_MS = "PI_ASYNC_PREFIX_COMPACTION_STALL_MS";
/** Path of a JSONL file that receives every lifecycle event (diagnostics, tests); unset = none. */
export const ENV_TRACE_FILE = "PI_ASYNC_PREFIX_COMPACTION_TRACE";

export const DEFAULT_START_RATIO = 0.8;
export const DEFAULT_TIMEOUT_MS = 300_000;
export const DEFAULT_WAIT_MS = 60_000;
export const DEFAULT_STALL_MS = 1_000;

export interface AsyncCompactionConfig {
  enabled: boolean;
  /** Early-start threshold as a fraction of the context window, in [0, 1]. */
  startRatio: number;
  /** Milliseconds before a pending job is staled with `timeout`; 0 disables the timeout. */
  timeoutMs: number;
  /**
   * Longest wait (ms) in `session_before_compact` for a pending job when Pi cannot be put off;
   * 0 = never wait (Pi compacts on its own). Absent = `DEFAULT_WAIT_MS`.
   */
  waitMs?: number;
  /**
   * Longest stall (ms) at Pi's threshold or overflow compaction before a late job is replaced by
   * an extractive digest (the job's summary upgrades it when it comes); negative = never (wait
   * up to `waitMs`). Absent = `DEFAULT_STALL_MS`.
   */
  stallMs?: number;
  /** Move the start earlier from observed growth and summary latency (default true). */
  adaptiveStart?: boolean;
  /** Lifecycle trace file (`PI_ASYNC_PREFIX_COMPACTION_TRACE`), when set. */
  traceFile?: string;
}

export interface ConfigDiagnostic {
  key: string;
  value: string;
  message: string;
}

export interface ReadCompactionEnvResult {
  config: AsyncCompactionConfig;
  diagnostics: ConfigDiagnostic[];
}

type Env = Record<string, string | undefined>;

function present(env: Env, key: string): string | undefined {
  const raw = env[key];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  return trimmed === "" ? undefined : trimmed;
}

function readSwitch(env: Env, key: string, what: string, diagnostics: ConfigDiagnostic[]): boolean {
  const raw = present(env, key);
  if (raw === undefined) return true;
  const lower = raw.toLowerCase();
  if (["0", "false", "off", "no"].includes(lower)) return false;
  if (["1", "true", "on", "yes"].includes(lower)) return true;
  diagnostics.push({ key, value: raw, message: `${key}=${raw} is not 0/1/true/false; ${what} stays enabled` });
  return true;
}

function readNumber(env: Env, key: string, fallback: number, diagnostics: ConfigDiagnostic[]): number {
  const raw = present(env, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (Number.isFinite(value)) return value;
  diagnostics.push({ key, value: raw, message: `${key}=${raw} is not a number; using ${fallback}` });
  return fallback;
}

/** As pi-async-compaction: any number, clamped to [0, 1] (0 starts at once, 1 never starts on its own). */
function readStartRatio(env: Env, diagnostics: ConfigDiagnostic[]): number {
  return Math.max(0, Math.min(1, readNumber(env, ENV_START_RATIO, DEFAULT_START_RATIO, diagnostics)));
}

/** As pi-async-compaction: whole milliseconds; 0 or a negative value disables the timeout. */
function readTimeoutMs(env: Env, diagnostics: ConfigDiagnostic[]): number {
  return Math.max(0, Math.floor(readNumber(env, ENV_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, diagnostics)));
}

/** Whole milliseconds; 0 or a negative value: never wait. */
function readWaitMs(env: Env, diagnostics: ConfigDiagnostic[]): number {
  return Math.max(0, Math.floor(readNumber(env, ENV_WAIT_MS, DEFAULT_WAIT_MS, diagnostics)));
}

/** Whole milliseconds; a negative value: never replace a late job with a digest. */
function readStallMs(env: Env, diagnostics: ConfigDiagnostic[]): number {
  const value = Math.floor(readNumber(env, ENV_STALL_MS, DEFAULT_STALL_MS, diagnostics));
  return value < 0 ? -1 : value;
}

/** Parse the environment keys; each bad value falls back to its own default. */
export function readCompactionEnv(env: Env): ReadCompactionEnvResult {
  const diagnostics: ConfigDiagnostic[] = [];
  const config: AsyncCompactionConfig = {
    enabled: readSwitch(env, ENV_ENABLED, "async compaction", diagnostics),
    startRatio: readStartRatio(env, diagnostics),
    timeoutMs: readTimeoutMs(env, diagnostics),
    waitMs: readWaitMs(env, diagnostics),
    stallMs: readStallMs(env, diagnostics),
    adaptiveStart: readSwitch(env, ENV_ADAPTIVE, "the adaptive start", diagnostics),
  };
  const traceFile = present(env, ENV_TRACE_FILE);
  if (traceFile !== undefined) config.traceFile = traceFile;
  return { config, diagnostics };
}

export interface StartWindowInput {
  /** Current context tokens (`getContextUsage().tokens`); null when Pi does not know yet. */
  tokens: number | null;
  contextWindow: number;
  startRatio: number;
  /** Pi's resolved `compaction.reserveTokens` for the active model. */
  reserveTokens: number;
  /** A lower bound that replaces `floor(contextWindow × startRatio)` (the adaptive start). */
  startTokens?: number;
}

/** Bounds of the window in which a background job starts: `lower < tokens <= upper`. */
export function startWindowBounds(input: Omit<StartWindowInput, "tokens">): { lower: number; upper: number } {
  const lower = input.startTokens ?? Math.floor(input.contextWindow * input.startRatio);
  return { lower, upper: input.contextWindow - input.reserveTokens };
}

/**
 * True when a background job should start: above the early-start threshold and not yet
 * above Pi's own compaction threshold (beyond that Pi compacts synchronously anyway).
 */
export function isInStartWindow(input: StartWindowInput): boolean {
  if (input.tokens === null || !Number.isFinite(input.tokens) || input.contextWindow <= 0) return false;
  const { lower, upper } = startWindowBounds(input);
  return input.tokens > lower && input.tokens <= upper;
}
