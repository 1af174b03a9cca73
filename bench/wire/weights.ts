/** Billed-equivalent weights of the wire benchmark (uncached input = 1), as the provider bills them. */
export interface BenchWeights {
  /** A cache write (Anthropic 1.25; OpenAI bills the newly cached part as plain input: 1). */
  write: number;
  read: number;
  /** A side request's output. */
  output: number;
  /** Read shortfalls up to this many tokens are the cache's counting steps, not busts (OpenAI: 128). */
  bustSlack: number;
}

/** Anthropic (Sonnet): write 1.25, read 0.1, output 5. */
export const ANTHROPIC_WEIGHTS: BenchWeights = { write: 1.25, read: 0.1, output: 5, bustSlack: 0 };
/** OpenAI GPT-5 before 5.6 (input $1.25, cached $0.125, output $10 per million): no write premium. */
export const OPENAI_WEIGHTS: BenchWeights = { write: 1, read: 0.1, output: 8, bustSlack: 128 };

export const WRITE_WEIGHT = ANTHROPIC_WEIGHTS.write;
export const READ_WEIGHT = ANTHROPIC_WEIGHTS.read;
export const OUTPUT_WEIGHT = ANTHROPIC_WEIGHTS.output;
