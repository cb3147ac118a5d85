;; Float32 kernels for the exact scan over points waiting beside the graph (exact-tail.ts).
;; Rows are n8 chunks of 8 floats; the query has the same width. Each function writes one float32
;; per row from $out: the dot product (dots) or the squared L2 distance (l2s) with the query.
;; Two accumulators so consecutive additions do not wait on each other.
(module
  (import "env" "mem" (memory 1))
  (func (export "dots") (param $rows i32) (param $q i32) (param $n i32) (param $n8 i32) (param $out i32)
    (local $qp i32) (local $i i32) (local $acc0 v128) (local $acc1 v128) (local $d v128)
    (block $done
      (loop $row
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (local.set $qp (local.get $q))
        (local.set $i (local.get $n8))
        (loop $col
          (local.set $acc0 (f32x4.add (local.get $acc0)
            (f32x4.mul (v128.load (local.get $rows)) (v128.load (local.get $qp)))))
          (local.set $acc1 (f32x4.add (local.get $acc1)
            (f32x4.mul (v128.load offset=16 (local.get $rows)) (v128.load offset=16 (local.get $qp)))))
          (local.set $rows (i32.add (local.get $rows) (i32.const 32)))
          (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
          (br_if $col (local.tee $i (i32.sub (local.get $i) (i32.const 1)))))
        (f32.store (local.get $out)
          (f32.add (f32.add (f32.add
            (f32x4.extract_lane 0 (local.tee $acc0 (f32x4.add (local.get $acc0) (local.get $acc1))))
            (f32x4.extract_lane 1 (local.get $acc0)))
            (f32x4.extract_lane 2 (local.get $acc0)))
            (f32x4.extract_lane 3 (local.get $acc0))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $row))))
  (func (export "l2s") (param $rows i32) (param $q i32) (param $n i32) (param $n8 i32) (param $out i32)
    (local $qp i32) (local $i i32) (local $acc0 v128) (local $acc1 v128) (local $d v128)
    (block $done
      (loop $row
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (local.set $qp (local.get $q))
        (local.set $i (local.get $n8))
        (loop $col
          (local.set $acc0 (f32x4.add (local.get $acc0)
            (f32x4.mul
              (local.tee $d (f32x4.sub (v128.load (local.get $rows)) (v128.load (local.get $qp))))
              (local.get $d))))
          (local.set $acc1 (f32x4.add (local.get $acc1)
            (f32x4.mul
              (local.tee $d (f32x4.sub (v128.load offset=16 (local.get $rows)) (v128.load offset=16 (local.get $qp))))
              (local.get $d))))
          (local.set $rows (i32.add (local.get $rows) (i32.const 32)))
          (local.set $qp (i32.add (local.get $qp) (i32.const 32)))
          (br_if $col (local.tee $i (i32.sub (local.get $i) (i32.const 1)))))
        (f32.store (local.get $out)
          (f32.add (f32.add (f32.add
            (f32x4.extract_lane 0 (local.tee $acc0 (f32x4.add (local.get $acc0) (local.get $acc1))))
            (f32x4.extract_lane 1 (local.get $acc0)))
            (f32x4.extract_lane 2 (local.get $acc0)))
            (f32x4.extract_lane 3 (local.get $acc0))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $row)))))
