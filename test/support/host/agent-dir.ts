/** Runs `fn` with Pi's agent dir (where settings files are read) pointed at `agentDir`, then restores it. */
export function withAgentDir<T>(agentDir: string, fn: () => T): T {
  const previous = process.env.PI_CODING_AGENT_DIR;
  process.env.PI_CODING_AGENT_DIR = agentDir;
  try {
    return fn();
  } finally {
    if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = previous;
  }
}
