;; Dot-product kernels for scalar (int8) quantization, in WebAssembly SIMD.
;; Rows are padded to multiples of 16 bytes with zeros. Codes are unsigned bytes (0..254);
;; the query is int16. Both functions return the exact integer sum in i32 (callers bound the
;; magnitudes so no lane can overflow).
(module
  (import "env" "mem" (memory 1))
  ;; sum_i codes[a + i] * query16[q + 2i] over n16 chunks of 16 codes
  (func (export "dotq") (param $a i32) (param $q i32) (param $n16 i32) (result i32)
    (local $acc v128) (local $c v128)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n16)))
        (local.set $c (v128.load (local.get $a)))
        (local.set $acc
          (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_u (local.get $c)) (v128.load (local.get $q)))))
        (local.set $acc
          (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_u (local.get $c)) (v128.load offset=16 (local.get $q)))))
        (local.set $a (i32.add (local.get $a) (i32.const 16)))
        (local.set $q (i32.add (local.get $q) (i32.const 32)))
        (local.set $n16 (i32.sub (local.get $n16) (i32.const 1)))
        (br $next)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
      (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))
  ;; sum_i codes[a + i] * codes[b + i] over n16 chunks of 16 codes
  (func (export "dotcc") (param $a i32) (param $b i32) (param $n16 i32) (result i32)
    (local $acc v128) (local $x v128) (local $y v128)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n16)))
        (local.set $x (v128.load (local.get $a)))
        (local.set $y (v128.load (local.get $b)))
        (local.set $acc
          (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_u (local.get $x)) (i16x8.extend_low_i8x16_u (local.get $y)))))
        (local.set $acc
          (i32x4.add (local.get $acc)
            (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_u (local.get $x)) (i16x8.extend_high_i8x16_u (local.get $y)))))
        (local.set $a (i32.add (local.get $a) (i32.const 16)))
        (local.set $b (i32.add (local.get $b) (i32.const 16)))
        (local.set $n16 (i32.sub (local.get $n16) (i32.const 1)))
        (br $next)))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
      (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc))))))
