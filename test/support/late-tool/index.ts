/**
 * A test extension whose tool set changes mid-session: it registers `late_probe` inactive and
 * activates it at the start of the third prompt (`before_agent_start`), as an MCP server, a
 * tool loader or another extension would. Pi then appends a system message declaring the tool
 * to the transcript (the initial prompt and tools stay in the first one), so a model that
 * accepts system messages mid-conversation keeps its cached prefix (extensions.md, "Dynamic
 * Tool Loading").
 *
 * `PI_LATE_TOOL_AT` picks the prompt (default 3; 0 never activates it, the control arm);
 * `PI_LATE_TOOL_WHEN=loop` activates it inside that prompt's tool loop (after its first turn,
 * as a tool loader does) instead of at its start;
 * `PI_LATE_TOOL_SECTION=1` also adds a prompt section from that prompt on (through
 * `systemPromptOptions.sections`, which Pi diffs into a section patch).
 *
 * Loaded with `-e test/support/late-tool/index.ts` beside (or without) the keeper.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";

export const LATE_TOOL_NAME = "late_probe";

export default function lateTool(pi: ExtensionAPI): void {
  const at = Number(process.env.PI_LATE_TOOL_AT ?? "3");
  const section = process.env.PI_LATE_TOOL_SECTION === "1";
  pi.registerTool({
    name: LATE_TOOL_NAME,
    label: "Late probe",
    description: "Reports the probe's state. Added to the session at a later prompt, to test tools that arrive mid-session.",
    parameters: Type.Object({ what: Type.Optional(Type.String({ description: "What to probe" })) }),
    defaultActive: false,
    async execute(_id, params) {
      return { content: [{ type: "text", text: `probe ok: ${params.what ?? "all"}` }], details: {} };
    },
  });
  const inLoop = process.env.PI_LATE_TOOL_WHEN === "loop";
  const activate = () => pi.setActiveTools([...new Set([...pi.getActiveTools(), LATE_TOOL_NAME])]);
  let prompts = 0;
  let turns = 0;
  pi.on("before_agent_start", (event) => {
    prompts++;
    turns = 0;
    if (at <= 0 || prompts < at) return undefined;
    if (prompts === at && !inLoop) activate();
    // Sections are rebuilt for every run: the section stays only while it is set on each one.
    if (section) event.systemPromptOptions.sections["late-notes"] = "Late notes: the probe tool is available from now on.";
    return undefined;
  });
  // In the loop: after the prompt's first turn, as a tool loader would (the next request declares it).
  pi.on("turn_end", () => {
    if (inLoop && prompts === at && ++turns === 1) activate();
  });
}
