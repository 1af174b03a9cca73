/**
 * pi-context-keeper: the Pi extension entry. The host (`src/host/hooks.ts`) registers every
 * Pi event once; every decision lives in the engine (`src/engine/`) and the leaves under it.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerKeeper } from "./src/host/hooks.ts";

export default function contextKeeper(pi: ExtensionAPI): void {
  registerKeeper(pi);
}
