import { defineShimSuite } from './shim-cases.js';

await defineShimSuite('ruby');
