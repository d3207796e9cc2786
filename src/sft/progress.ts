// A progress bar over training steps (cli-progress), showing the loss, with log lines printed above
// it. Off unless asked or stdout is a terminal, so CI logs get plain lines only.
import cliProgress from 'cli-progress';

export class StepProgress {
  private readonly bars?: cliProgress.MultiBar;
  private readonly bar?: cliProgress.SingleBar;

  constructor(total: number, o: { enabled?: boolean; label?: string; start?: number } = {}) {
    const enabled = o.enabled ?? process.stdout.isTTY === true;
    if (!enabled) return;
    this.bars = new cliProgress.MultiBar({
      stream: process.stdout,
      // asked for explicitly: draw even when stdout is not a terminal
      noTTYOutput: true,
      hideCursor: true,
      clearOnComplete: false,
      format: `${o.label ?? 'sft'} [{bar}] {value}/{total} steps | loss {loss} | lr {lr} | {duration_formatted} (eta {eta_formatted})`,
    }, cliProgress.Presets.shades_classic);
    this.bar = this.bars.create(total, o.start ?? 0, { loss: '-', lr: '-' });
  }

  /** Whether a bar is drawn. */
  get active(): boolean { return this.bar !== undefined; }

  /** `step` steps done; the last one's loss and lr. */
  update(step: number, m: { loss?: number; lr?: number }): void {
    this.bar?.update(step, {
      loss: m.loss === undefined ? '-' : m.loss.toFixed(4),
      lr: m.lr === undefined ? '-' : m.lr.toExponential(2),
    });
  }

  /** A line above the bar (or on stdout when there is none). */
  log(line: string): void {
    if (this.bars) this.bars.log(`${line}\n`);
    else console.log(line);
  }

  stop(): void {
    this.bars?.stop();
  }
}
