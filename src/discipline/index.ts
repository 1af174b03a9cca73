/** Cache discipline: pure decisions about when history may change and what it costs. */
export * from "./closed-cuts.ts";
export * from "./quantize.ts";
export * from "./request-horizon.ts";
export * from "./gate.ts";
export * from "./gate-log.ts";
export * from "./piggyback.ts";
export * from "./cold-cache.ts";
export * from "./seam.ts";
export * from "./attribution.ts";
export * from "./format.ts";
export * from "./schema.ts";
export * from "./observed-loss.ts";
export * from "./rewrite-anchor.ts";
export * from "./history-view.ts";
export * from "./proposal-mutations.ts";
export * from "./seam-target.ts";
