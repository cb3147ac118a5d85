import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineShimSuite } from './shim-cases.js';

// One Go build cache for every run of this file: the first build compiles net/http, later ones
// only the handler (the builder passes the daemon's shared cache the same way).
const cacheDir = join(tmpdir(), 'platform-test-go-cache');
mkdirSync(cacheDir, { recursive: true });

await defineShimSuite('go', 'go', { cacheDir });
