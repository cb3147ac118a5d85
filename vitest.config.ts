import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Cheaper scrypt for the thousands of test sign-ins; production keeps 2^15 (docs/decisions.md).
    env: { PLATFORM_KDF_LOG2N: '11' },
    // Two cores: more workers only add contention with the daemons the tests start.
    maxWorkers: 2,
    minWorkers: 1,
  },
});
