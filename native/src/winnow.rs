//! Winnowed keys of unit codes (`simdup_es.winnow`): `gram_hashes` and `winnow`.

const BASE: u64 = 0x100000001B3; // odd multiplier of the polynomial gram hash
const M1: u64 = 0xBF58476D1CE4E5B9; // SplitMix64 finalizer
const M2: u64 = 0x94D049BB133111EB;

/// The 64-bit hash of each run of `k` codes (none when there are fewer).
pub fn gram_hashes(codes: &[u64], k: usize) -> Vec<u64> {
    let mut out = codes.to_vec();
    gram_hashes_in_place(&mut out, k);
    out
}

/// `gram_hashes` written over `codes` (the hash of the run starting at `i` replaces code `i`, which no
/// later run reads), the vector cut to their number: no second vector of 8 bytes a unit.
pub fn gram_hashes_in_place(codes: &mut Vec<u64>, k: usize) {
    if k == 0 || codes.len() < k {
        codes.clear();
        return;
    }
    let n = codes.len() - k + 1;
    for i in 0..n {
        let mut h = codes[i..i + k].iter().fold(0u64, |h, &c| h.wrapping_mul(BASE).wrapping_add(c));
        h ^= h >> 30;
        h = h.wrapping_mul(M1);
        h ^= h >> 27;
        h = h.wrapping_mul(M2);
        codes[i] = h ^ (h >> 31);
    }
    codes.truncate(n);
}

/// The smallest of every `w` consecutive hashes (the rightmost of equal ones), each once, with its
/// position, in order; fewer than `w` hashes form one window. Appended to `out` as (hash, position) pairs.
pub fn winnow(hashes: &[u64], w: usize, out: &mut Vec<u64>) {
    let n = hashes.len();
    if n == 0 || w == 0 {
        return;
    }
    let w = w.min(n);
    let mut last = usize::MAX;
    for start in 0..=n - w {
        let mut at = start;
        for (k, &h) in hashes[start..start + w].iter().enumerate() {
            if h <= hashes[at] {
                at = start + k;
            }
        }
        if at != last {
            out.extend([hashes[at], at as u64]);
            last = at;
        }
    }
}
