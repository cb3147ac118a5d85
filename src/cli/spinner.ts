/**
 * Progress for long work (build, deploy, provisioning) on stderr, so stdout stays the result.
 * On a TTY it animates one line; elsewhere (CI, pipes, --json) it prints each phase once.
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Spinner {
  update(text: string): void;
  /** A line of its own above the spinner (a note that must not be overdrawn). */
  note(text: string): void;
  succeed(text: string): void;
  fail(text: string): void;
}

export function startSpinner(text: string, opts: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): Spinner {
  const out = opts.stream ?? process.stderr;
  if (opts.quiet) return { update() {}, note: (t) => out.write(`${t}\n`), succeed() {}, fail() {} };
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  if (!out.isTTY) {
    let last = '';
    const line = (t: string) => {
      if (t !== last) out.write(`${t}\n`);
      last = t;
    };
    line(`${text}...`);
    return { update: (t) => line(`${t}...`), note: (t) => out.write(`${t}\n`), succeed: (t) => line(`✓ ${t} (${elapsed()})`), fail: (t) => line(`✗ ${t} (${elapsed()})`) };
  }
  let current = text;
  let i = 0;
  const draw = () => out.write(`\r\x1b[2K${FRAMES[i++ % FRAMES.length]} ${current} ${elapsed()}`);
  const timer = setInterval(draw, 80);
  draw();
  const end = (mark: string, t: string) => {
    clearInterval(timer);
    out.write(`\r\x1b[2K${mark} ${t} (${elapsed()})\n`);
  };
  const note = (t: string) => {
    out.write(`\r\x1b[2K${t}\n`);
    draw();
  };
  return { update: (t) => (current = t), note, succeed: (t) => end('✓', t), fail: (t) => end('✗', t) };
}
