import type { BuildLog } from './build-log.js';
import { BuildFailure, type Artifact, type BuildSpec, type Driver } from './driver.js';

export interface BuildStepOptions {
  buildId: string;
  timeoutMs: number;
  /** Running builds by id, so a delete or a stop can abort one. */
  aborts: Map<string, AbortController>;
}

/**
 * One driver build under the build time limit, abortable while it runs. A failure is returned,
 * never thrown: its output is already in the log, and a build cut by the limit says so as its cause.
 */
export async function runBuildStep(driver: Driver, spec: BuildSpec, log: BuildLog, o: BuildStepOptions): Promise<{ artifact?: Artifact; failure?: BuildFailure }> {
  const abort = new AbortController();
  o.aborts.set(o.buildId, abort);
  let timedOut: string | undefined;
  const limit = setTimeout(() => {
    timedOut = `build exceeded the time limit of ${Math.round(o.timeoutMs / 1000)} s`;
    log.append(`\n${timedOut}\n`);
    abort.abort();
  }, o.timeoutMs);
  try {
    const artifact = await driver.build(spec, (c) => log.append(c), abort.signal);
    if (abort.signal.aborted) throw new BuildFailure('');
    return { artifact };
  } catch (e) {
    let failure = e instanceof BuildFailure ? e : new BuildFailure(`${(e as Error).message}\n`);
    if (timedOut) failure = new BuildFailure(failure.output, timedOut);
    log.append(failure.output);
    return { failure };
  } finally {
    clearTimeout(limit);
    o.aborts.delete(o.buildId);
  }
}
