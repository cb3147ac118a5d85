/**
 * A small stderr spinner: animated on a terminal, one line per change otherwise (CI logs stay
 * readable). Never writes to stdout, so --json output stays clean.
 */
export class Spinner {
  private frame = 0;
  private text = '';
  private timer?: NodeJS.Timeout;
  private readonly tty = Boolean(process.stderr.isTTY);

  constructor(private readonly enabled: boolean) {}

  update(text: string): void {
    if (!this.enabled || text === this.text) return;
    this.text = text;
    if (!this.tty) {
      process.stderr.write(`${text}\n`);
      return;
    }
    this.timer ??= setInterval(() => this.draw(), 80);
    this.draw();
  }

  stop(final?: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!this.enabled) return;
    if (this.tty) process.stderr.write('\r\x1b[2K');
    if (final) process.stderr.write(`${final}\n`);
  }

  private draw(): void {
    const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    process.stderr.write(`\r\x1b[2K${frames[this.frame++ % frames.length]} ${this.text}`);
  }
}
