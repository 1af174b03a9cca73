/**
 * Progress on stderr: a redrawn bar when the stream is a terminal, otherwise one plain line
 * each time another 10% is reached (logs and CI stay readable).
 */
export interface ProgressSink {
  write(text: string): void;
  isTTY: boolean;
}

export interface Progress {
  /** fraction in [0, 1]; label says what is being done. */
  update(fraction: number, label: string): void;
  /** Clears the bar (terminal) or prints the final line (plain). */
  done(): void;
}

export function progressBar(fraction: number, width = 28): string {
  const f = Math.min(1, Math.max(0, fraction));
  const full = Math.round(f * width);
  return `[${"#".repeat(full)}${"-".repeat(width - full)}] ${String(Math.floor(f * 100)).padStart(3)}%`;
}

export function createProgress(sink: ProgressSink): Progress {
  let lastPercent = -1;
  let lastLabel = "";
  let lastStep = 0;
  let drawn = false;
  return {
    update(fraction, label) {
      const f = Math.min(1, Math.max(0, fraction));
      const percent = Math.floor(f * 100);
      if (sink.isTTY) {
        if (percent === lastPercent && label === lastLabel) return;
        lastPercent = percent;
        lastLabel = label;
        sink.write(`\r\x1b[K${progressBar(f)} ${label}`);
        drawn = true;
        return;
      }
      const step = Math.floor(percent / 10);
      if (step > lastStep) {
        lastStep = step;
        sink.write(`progress: ${step * 10}% ${label}\n`);
      }
    },
    done() {
      if (sink.isTTY) {
        if (drawn) sink.write("\r\x1b[K");
        return;
      }
      if (lastStep < 10) sink.write("progress: 100%\n");
      lastStep = 10;
    },
  };
}
