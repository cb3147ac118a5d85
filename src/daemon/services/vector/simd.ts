/**
 * WebAssembly SIMD dot products for int8 codes (source: simd.wat beside this file; rebuild the
 * bytes with `wat2wasm simd.wat -o - | base64 -w0` from Debian's wabt). JavaScript loops cost
 * about 2 µs per 768-dimension distance, which made quantized graphs miss the latency goal;
 * i32x4.dot_i16x8_s does the same in tens of nanoseconds.
 */
const WASM_BASE64 = 'AGFzbQEAAAABCAFgA39/fwF/AgwBA2VudgNtZW0CAAEDAwIAAAcQAgRkb3RxAAAFZG90Y2MAAQrnAQJvAQJ7AkADQCACRQ0BIAD9AAQAIQQgAyAE/YkBIAH9AAQA/boB/a4BIQMgAyAE/YoBIAH9AAQQ/boB/a4BIQMgAEEQaiEAIAFBIGohASACQQFrIQIMAAsLIAP9GwAgA/0bAWogA/0bAiAD/RsDamoLdQEDewJAA0AgAkUNASAA/QAEACEEIAH9AAQAIQUgAyAE/YkBIAX9iQH9ugH9rgEhAyADIAT9igEgBf2KAf26Af2uASEDIABBEGohACABQRBqIQEgAkEBayECDAALCyAD/RsAIAP9GwFqIAP9GwIgA/0bA2pqCw==';

export interface Int8Kernels {
  /** Σ codes[a+i] · int16 query[q+2i] over n16 chunks of 16 (byte offsets into the memory). */
  dotq(a: number, q: number, n16: number): number;
  /** Σ codes[a+i] · codes[b+i] over n16 chunks of 16. */
  dotcc(a: number, b: number, n16: number): number;
}

/** The few WebAssembly globals used here (the project's TypeScript lib has no WebAssembly types). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
const WA = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (m: object, imports: object) => { exports: unknown };
      Memory: new (d: { initial: number }) => WasmMemory;
    };
  }
).WebAssembly;

export const WASM_PAGE = 65536;
export const newMemory = (bytes: number): WasmMemory => new WA.Memory({ initial: Math.max(1, Math.ceil(bytes / WASM_PAGE)) });

let module: object | null | undefined;

/** Kernels bound to a memory, or undefined where WebAssembly SIMD is unavailable (JS loops then). */
export function int8Kernels(memory: WasmMemory): Int8Kernels | undefined {
  if (module === undefined) {
    try {
      module = new WA.Module(Buffer.from(WASM_BASE64, 'base64'));
    } catch {
      module = null;
    }
  }
  if (!module) return undefined;
  return new WA.Instance(module, { env: { mem: memory } }).exports as Int8Kernels;
}
