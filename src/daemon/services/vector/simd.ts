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

/**
 * Float32 kernels (source: simd-f32.wat beside this file), for the exact scan over points waiting
 * beside the graph: a JavaScript loop took about 1.3 µs per 768-d row here (doubles, one lane), this
 * 0.2 µs (four float32 lanes, two accumulators). The bytes were assembled from the .wat by a script
 * (no wat2wasm on the machine that wrote them); test/vector/ingestion.test.ts checks their answers
 * against exact ones through the daemon.
 */
const F32_WASM_BASE64 = 'AGFzbQEAAAABCQFgBX9/f39/AAIMAQNlbnYDbWVtAgABAwMCAAAHDgIEZG90cwAAA2wycwABCocDAroBAgJ/A3sCQANAIAJFDQH9DAAAAAAAAAAAAAAAAAAAAAAhB/0MAAAAAAAAAAAAAAAAAAAAACEIIAEhBSADIQYDQCAHIAD9AAQAIAX9AAQA/eYB/eQBIQcgCCAA/QAEECAF/QAEEP3mAf3kASEIIABBIGohACAFQSBqIQUgBkEBayIGDQALIAQgByAI/eQBIgf9HwAgB/0fAZIgB/0fApIgB/0fA5I4AgAgBEEEaiEEIAJBAWshAgwACwsLyAECAn8DewJAA0AgAkUNAf0MAAAAAAAAAAAAAAAAAAAAACEH/QwAAAAAAAAAAAAAAAAAAAAAIQggASEFIAMhBgNAIAcgAP0ABAAgBf0ABAD95QEiCSAJ/eYB/eQBIQcgCCAA/QAEECAF/QAEEP3lASIJIAn95gH95AEhCCAAQSBqIQAgBUEgaiEFIAZBAWsiBg0ACyAEIAcgCP3kASIH/R8AIAf9HwGSIAf9HwKSIAf9HwOSOAIAIARBBGohBCACQQFrIQIMAAsLCw==';

export interface Float32Kernels {
  /**
   * For n rows of n8 x 8 floats from byte offset `rows`: the dot product with the query at `q`
   * (`dots`) or the squared distance to it (`l2s`), written as float32 from byte offset `out`.
   */
  dots(rows: number, q: number, n: number, n8: number, out: number): void;
  l2s(rows: number, q: number, n: number, n8: number, out: number): void;
}

let f32Module: object | null | undefined;

/** Float kernels bound to a memory, or undefined where WebAssembly SIMD is unavailable. */
export function float32Kernels(memory: WasmMemory): Float32Kernels | undefined {
  if (f32Module === undefined) {
    try {
      f32Module = new WA.Module(Buffer.from(F32_WASM_BASE64, 'base64'));
    } catch {
      f32Module = null;
    }
  }
  if (!f32Module) return undefined;
  return new WA.Instance(f32Module, { env: { mem: memory } }).exports as Float32Kernels;
}
