/** Billed-equivalent weights of the wire benchmark (uncached input = 1), as Anthropic bills them. */
export const WRITE_WEIGHT = 1.25;
export const READ_WEIGHT = 0.1;
export const OUTPUT_WEIGHT = 5;
