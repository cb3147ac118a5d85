// The daemon process of the module tree (dist/daemon/main.js). `platform daemon start` runs the
// bundle instead when the build made it (daemon.bundle.js: the same code, loaded by code-cache.ts).
import { runDaemonMain } from './daemon-main.js';

runDaemonMain();
