import { useCallback, useEffect, useRef, useState } from 'react';
import type { Snapshot } from './model.js';

/**
 * Polls `load` every `intervalMs` (the next read starts when the previous one ended, so a slow
 * daemon is never asked twice at once) and stops when the component unmounts. A failed read
 * keeps the last snapshot on screen and reports its error.
 */
export function useSnapshot(load: () => Promise<Snapshot>, intervalMs: number): { snapshot?: Snapshot; error?: string; refresh: () => void } {
  const [state, setState] = useState<{ snapshot?: Snapshot; error?: string }>({});
  const kick = useRef<() => void>(() => undefined);
  useEffect(() => {
    let alive = true;
    let timer: NodeJS.Timeout | undefined;
    let running = false;
    const tick = async () => {
      if (running) return;
      running = true;
      clearTimeout(timer);
      try {
        const snapshot = await load();
        if (alive) setState({ snapshot });
      } catch (e) {
        if (alive) setState((s) => ({ ...s, error: (e as Error).message }));
      } finally {
        running = false;
        if (alive) timer = setTimeout(() => void tick(), intervalMs);
      }
    };
    kick.current = () => void tick();
    void tick();
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [load, intervalMs]);
  const refresh = useCallback(() => kick.current(), []);
  return { ...state, refresh };
}
