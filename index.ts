import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function contextKeeper(_pi: ExtensionAPI): void {}
