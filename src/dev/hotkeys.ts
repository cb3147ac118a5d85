/** The keys `platform dev` takes on a terminal, and what each does (shown in its banner). */
export const HOTKEYS = [
  ['o', 'open'],
  ['i', 'invoke'],
  ['r', 'redeploy'],
  ['l', 'clear'],
  ['q', 'quit'],
] as const;

export type Hotkey = (typeof HOTKEYS)[number][0];

/**
 * Reads single keys from a terminal in raw mode (no Enter needed). Ctrl-C arrives as a byte in
 * raw mode, not as SIGINT, so it is reported as `q`. Returns the function that gives the
 * terminal back as it was (cooked mode, stdin paused so the process can exit).
 */
export function listenForKeys(stdin: NodeJS.ReadStream, onKey: (key: Hotkey) => void): () => void {
  const wasRaw = stdin.isRaw;
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  const onData = (data: string) => {
    for (const ch of data) {
      const key = ch === '\u0003' || ch === '\u0004' ? 'q' : ch.toLowerCase();
      if (HOTKEYS.some(([k]) => k === key)) onKey(key as Hotkey);
    }
  };
  stdin.on('data', onData);
  stdin.resume();
  return () => {
    stdin.off('data', onData);
    stdin.setRawMode(wasRaw);
    stdin.pause();
  };
}
