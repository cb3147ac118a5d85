// Bundles the daemon's own modules into one file (dist/daemon/daemon.bundle.js). Loading ~250
// small ES modules cost more start-up time than running them; packages stay external (native
// addons, lazily loaded dockerode and undici). The CLI starts the bundle when it exists.
import { build } from 'esbuild';

await build({
  entryPoints: ['dist/daemon/main.js'],
  outfile: 'dist/daemon/daemon.bundle.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
