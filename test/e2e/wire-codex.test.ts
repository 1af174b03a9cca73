/**
 * The keeper on the Codex wire (openai-codex-responses): Pi's own `openai-codex` provider and its
 * registry model gpt-5.6-terra, on the WebSocket transport Pi prefers, with continuations
 * (see support/wire-suite.ts; the credential is an access token in models.json, support/pi-provider.ts).
 */
import { wireSuite } from "./support/wire-suite.ts";

wireSuite("openai-codex-responses");
