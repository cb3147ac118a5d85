import type { DataPlane } from './plane.js';
import type { PlaneFactory } from './routes.js';

/**
 * The data plane the daemon runs. Placeholder until the data-plane branch (h/svc-data) lands
 * its runtime here: it runs nothing, reports nothing (services stay pending) and the health
 * route says orchestration is unreachable. The data plane's factory replaces this function.
 */
export const makeDataPlane: PlaneFactory = () => new AbsentDataPlane();

class AbsentDataPlane implements DataPlane {
  apply(): void {
    throw new Error('no serverless data plane is built into this daemon');
  }
  async remove(): Promise<void> {}
  onReport(): void {}
  report() {
    return undefined;
  }
  async logs(_id: string, _o: unknown, res: import('node:http').ServerResponse): Promise<void> {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('no instance is running: this daemon has no serverless data plane\n');
  }
  instances() {
    return [];
  }
  async stop(): Promise<void> {}
}
