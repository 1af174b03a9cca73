// Types of scripts/pi-runtime.mjs for the TypeScript callers (the e2e runner).
export declare const MIN_PI_NODE: readonly [number, number, number];
export declare function isPiNodeVersion(version: string): boolean;
export declare function bundledNodePath(root: string, platform?: string, arch?: string): string;
export type PiRuntime =
  | { kind: "node" | "bun"; command: string; version: string; notice?: string }
  | { kind: "none"; notice: string };
export declare function findPiRuntime(options: { root: string; env?: Record<string, string | undefined> }): PiRuntime;
