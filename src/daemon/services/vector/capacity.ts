/**
 * Capacity growth on resize. Doubling left up to half the preallocated elements unused (hnswlib
 * allocates maxElements up front), which alone broke the memory goal; 1.25x bounds the slack at
 * 20 % for about twice the (amortized, linear) copying.
 */
const GROWTH = 1.25;
export const grown = (cap: number, slot: number) => {
  let c = cap;
  while (c <= slot) c = Math.ceil(c * GROWTH);
  return c;
};
