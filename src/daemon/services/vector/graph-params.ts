/**
 * Graph build parameters. On the benchmark's clustered data, M 16 / efConstruction 128 lost recall
 * as clusters multiplied (hnswlib: 0.968 at 150,000, 0.830 at 250,000, 0.259 at 1,000,000, ef 128)
 * because few links joined the clusters; M 32 / efConstruction 256 gave 1.000 at 150,000 for 2.7x
 * the build time. The float graph can afford M 32 (128 more bytes of links per vector against
 * 3,072 of floats); the int8 graph's budget is 0.4x the raw floats, so it takes M 24.
 */
export const FLOAT_GRAPH = { m: 32, efConstruction: 256 };
export const CODE_GRAPH = { m: 24, efConstruction: 256 };
