//! Winnowed keys of unit codes (`simdup_es.winnow`): `gram_hashes` and `winnow`.

const BASE: u64 = 0x100000001B3; // odd multiplier of the polynomial gram hash
const M1: u64 = 0xBF58476D1CE4E5B9; // SplitMix64 finalizer
const M2: u64 = 0x94D049BB133111EB;

/// The 64-bit hash of each run of `k` codes (none when there are fewer).
pub fn gram_hashes(codes: &[u64], k: usize) -> Vec<u64> {
    if k == 0 || codes.len() < k {
        return Vec::new();
    }
    codes
        .windows(k)
        .map(|gram| {
            let mut h = gram.iter().fold(0u64, |h, &c| h.wrapping_mul(BASE).wrapping_add(c));
            h ^= h >> 30;
            h = h.wrapping_mul(M1);
            h ^= h >> 27;
            h = h.wrapping_mul(M2);
            h ^ (h >> 31)
        })
        .collect()
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
