;; Searches of bytes, 16 positions at a time (WebAssembly SIMD), for src/ByteScan.ts.
;; Rebuild the embedded copy (src/ScanModule.ts) with `pnpm --filter @spool/core wasm`.
;;
;; scan: byte pairs. Up to 8 buckets of pairs. A pair (x, y) may be in bucket b when bit b is set in all four of
;; lo0[x & 15], hi0[x >> 4], lo1[y & 15], hi1[y >> 4] (tables at 0, 16, 32 and 48): a shuffle
;; looks the 16 nibbles of a vector up at once. The caller checks each position found.
(module
  (memory (export "memory") 1)
  ;; scan(ptr, len, from) -> the first i >= from, i < len, where the pair at ptr+i may be in a
  ;; bucket; -1 if none. 80 bytes after ptr+len must be readable (their contents do not matter).
  (func (export "scan") (param $ptr i32) (param $len i32) (param $from i32) (result i32)
    (local $p i32) (local $q i32) (local $v0 v128) (local $v1 v128) (local $m v128) (local $mask i32) (local $i i32)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128)
    (local $lo0 v128) (local $hi0 v128) (local $lo1 v128) (local $hi1 v128) (local $nib v128)
    (local.set $lo0 (v128.load (i32.const 0)))
    (local.set $hi0 (v128.load (i32.const 16)))
    (local.set $lo1 (v128.load (i32.const 32)))
    (local.set $hi1 (v128.load (i32.const 48)))
    (local.set $nib (i8x16.splat (i32.const 15)))
    (local.set $p (local.get $from))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $len)))
        (local.set $q (i32.add (local.get $ptr) (local.get $p)))
        (local.set $a (v128.and
            (v128.and
              (i8x16.swizzle (local.get $lo0) (v128.and (local.tee $v0 (v128.load offset=0 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi0) (i8x16.shr_u (local.get $v0) (i32.const 4))))
            (v128.and
              (i8x16.swizzle (local.get $lo1) (v128.and (local.tee $v1 (v128.load offset=1 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi1) (i8x16.shr_u (local.get $v1) (i32.const 4))))))
        (local.set $b (v128.and
            (v128.and
              (i8x16.swizzle (local.get $lo0) (v128.and (local.tee $v0 (v128.load offset=16 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi0) (i8x16.shr_u (local.get $v0) (i32.const 4))))
            (v128.and
              (i8x16.swizzle (local.get $lo1) (v128.and (local.tee $v1 (v128.load offset=17 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi1) (i8x16.shr_u (local.get $v1) (i32.const 4))))))
        (local.set $c (v128.and
            (v128.and
              (i8x16.swizzle (local.get $lo0) (v128.and (local.tee $v0 (v128.load offset=32 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi0) (i8x16.shr_u (local.get $v0) (i32.const 4))))
            (v128.and
              (i8x16.swizzle (local.get $lo1) (v128.and (local.tee $v1 (v128.load offset=33 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi1) (i8x16.shr_u (local.get $v1) (i32.const 4))))))
        (local.set $d (v128.and
            (v128.and
              (i8x16.swizzle (local.get $lo0) (v128.and (local.tee $v0 (v128.load offset=48 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi0) (i8x16.shr_u (local.get $v0) (i32.const 4))))
            (v128.and
              (i8x16.swizzle (local.get $lo1) (v128.and (local.tee $v1 (v128.load offset=49 (local.get $q))) (local.get $nib)))
              (i8x16.swizzle (local.get $hi1) (i8x16.shr_u (local.get $v1) (i32.const 4))))))
        (if (v128.any_true (v128.or (v128.or (local.get $a) (local.get $b)) (v128.or (local.get $c) (local.get $d))))
          (then
            (local.set $mask
              (i32.or
                (i32.or
                  (i8x16.bitmask (i8x16.ne (local.get $a) (v128.const i64x2 0 0)))
                  (i32.shl (i8x16.bitmask (i8x16.ne (local.get $b) (v128.const i64x2 0 0))) (i32.const 16)))
                (i32.const 0)))
            (if (i32.eqz (local.get $mask))
              (then
                (local.set $mask
                  (i32.or
                    (i8x16.bitmask (i8x16.ne (local.get $c) (v128.const i64x2 0 0)))
                    (i32.shl (i8x16.bitmask (i8x16.ne (local.get $d) (v128.const i64x2 0 0))) (i32.const 16))))
                (local.set $p (i32.add (local.get $p) (i32.const 32)))))
            (local.set $i (i32.add (local.get $p) (i32.ctz (local.get $mask))))
            (if (i32.lt_u (local.get $i) (local.get $len)) (then (return (local.get $i))))
            (return (i32.const -1))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br $next)))
    (i32.const -1))
;; quote(ptr, len, from) -> the first i >= from, i < len, where ptr+i holds a double quote not
  ;; preceded by a backslash, or preceded by two (an escaped backslash, or an escaped quote after
  ;; one: the caller counts); -1 if none. The 2 bytes before ptr and 16 after ptr+len must be readable.
  (func (export "quote") (param $ptr i32) (param $len i32) (param $from i32) (result i32)
    (local $p i32) (local $q i32) (local $m v128) (local $quote v128) (local $slash v128) (local $one v128)
    (local.set $quote (i8x16.splat (i32.const 34)))
    (local.set $slash (i8x16.splat (i32.const 92)))
    (local.set $p (local.get $from))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $len)))
        (local.set $q (i32.add (local.get $ptr) (local.get $p)))
        (local.set $one (i8x16.eq (v128.load offset=0 (i32.sub (local.get $q) (i32.const 1))) (local.get $slash)))
        (local.set $m
          (v128.and
            (i8x16.eq (v128.load (local.get $q)) (local.get $quote))
            (v128.or
              (v128.not (local.get $one))
              (i8x16.eq (v128.load offset=0 (i32.sub (local.get $q) (i32.const 2))) (local.get $slash)))))
        (if (v128.any_true (local.get $m))
          (then
            (local.set $p (i32.add (local.get $p) (i32.ctz (i8x16.bitmask (local.get $m)))))
            (if (i32.lt_u (local.get $p) (local.get $len)) (then (return (local.get $p))))
            (return (i32.const -1))))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $next)))
    (i32.const -1))
)
