/**
 * `pi-context-keeper/core`: async compaction for another package's adapter (this package's
 * shape or pi-async-compaction's). The adapter API is `src/compaction/core.ts`;
 * `registerAsyncCompaction` binds an adapter to Pi through the host (`src/host/`), with Pi's
 * helpers and settings as defaults (Pi is a peer dependency; `options.primitives` /
 * `getCompactionSettings` replace them).
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { AnyAsyncCompactionAdapter } from "./src/compaction/adapter.ts";
import type { AnchorAsyncCompactionAdapter } from "./src/compaction/anchor-compat.ts";
import type { AsyncCompactionHandle } from "./src/compaction/register-options.ts";
import { registerCompactionCore, type CoreRegisterOptions } from "./src/host/compaction-core.ts";

export * from "./src/compaction/core.ts";
export type { CoreRegisterOptions };

// biome-ignore lint: the anchor adapter's type parameters are erased here.
type AnyAnchorAdapter = AnchorAsyncCompactionAdapter<any, any>;

export function registerAsyncCompaction(pi: ExtensionAPI, adapter: AnyAsyncCompactionAdapter | AnyAnchorAdapter, options: CoreRegisterOptions = {}): AsyncCompactionHandle {
  return registerCompactionCore(pi, adapter, options);
}
