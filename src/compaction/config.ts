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
/** Path of a JSONL file that receives every lifecycle event (diagnostics, tests); unset = none. */
export const ENV_TRACE_FILE = "PI_ASYNC_PREFIX_COMPACTION_TRACE";

export const DEFAULT_START_RATIO = 0.8;
export const DEFAULT_TIMEOUT_MS = 300_000;

export interface AsyncCompactionConfig {
  enabled: boolean;
  /** Early-start threshold as a fraction of the context window, in (0, 1). */
  startRatio: number;
  /** Milliseconds before a pending job is staled with `timeout`; 0 disables the timeout. */
  timeoutMs: number;
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

function readEnabled(env: Env, diagnostics: ConfigDiagnostic[]): boolean {
  const raw = present(env, ENV_ENABLED);
  if (raw === undefined) return true;
  const lower = raw.toLowerCase();
  if (["0", "false", "off", "no"].includes(lower)) return false;
  if (["1", "true", "on", "yes"].includes(lower)) return true;
  diagnostics.push({ key: ENV_ENABLED, value: raw, message: `${ENV_ENABLED}=${raw} is not 0/1/true/false; async compaction stays enabled` });
  return true;
}

function readStartRatio(env: Env, diagnostics: ConfigDiagnostic[]): number {
  const raw = present(env, ENV_START_RATIO);
  if (raw === undefined) return DEFAULT_START_RATIO;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value >= 1) {
    diagnostics.push({
      key: ENV_START_RATIO,
      value: raw,
      message: `${ENV_START_RATIO}=${raw} must be a number strictly between 0 and 1; using ${DEFAULT_START_RATIO}`,
    });
    return DEFAULT_START_RATIO;
  }
  return value;
}

function readTimeoutMs(env: Env, diagnostics: ConfigDiagnostic[]): number {
  const raw = present(env, ENV_TIMEOUT_MS);
  if (raw === undefined) return DEFAULT_TIMEOUT_MS;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    diagnostics.push({
      key: ENV_TIMEOUT_MS,
      value: raw,
      message: `${ENV_TIMEOUT_MS}=${raw} must be a non-negative integer of milliseconds (0 disables); using ${DEFAULT_TIMEOUT_MS}`,
    });
    return DEFAULT_TIMEOUT_MS;
  }
  return value;
}

/** Parse the environment keys; each bad value falls back to its own default. */
export function readCompactionEnv(env: Env): ReadCompactionEnvResult {
  const diagnostics: ConfigDiagnostic[] = [];
  const config: AsyncCompactionConfig = {
    enabled: readEnabled(env, diagnostics),
    startRatio: readStartRatio(env, diagnostics),
    timeoutMs: readTimeoutMs(env, diagnostics),
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
}

/** Bounds of the window in which a background job starts: `lower < tokens <= upper`. */
export function startWindowBounds(input: Omit<StartWindowInput, "tokens">): { lower: number; upper: number } {
  return { lower: Math.floor(input.contextWindow * input.startRatio), upper: input.contextWindow - input.reserveTokens };
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
