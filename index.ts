/**
 * pi-context-keeper: the Pi extension entry. The host (`src/host/hooks.ts`) registers every
 * Pi event once — unless another copy of the package already runs in this Pi, then nothing;
 * every decision lives in the engine (`src/engine/`) and the leaves under it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerKeeperCopy } from "./src/host/hooks.ts";

export default function contextKeeper(pi: ExtensionAPI): void {
  registerKeeperCopy(pi);
}
