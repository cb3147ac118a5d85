import { defineShimSuite } from './shim-cases.js';

await defineShimSuite('nodejs');
// The same table against an ES module exporting an async handle.
await defineShimSuite('nodejs', 'nodejs-esm');
