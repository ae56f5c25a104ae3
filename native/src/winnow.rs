//! Winnowed keys of unit codes (`simdup_es.winnow`): `gram_hashes` and `winnow`.

const BASE: u64 = 0x100000001B3; // odd multiplier of the polynomial gram hash
const M1: u64 = 0xBF58476D1CE4E5B9; // SplitMix64 finalizer
const M2: u64 = 0x94D049BB133111EB;

/// The 64-bit hash of each run of `k` codes (none when there are fewer).
pub fn gram_hashes(codes: &[u64], k: usize) -> Vec<u64> {
    if k == 0 || codes.len() < k {
        return Vec::new();
    }
    gram_hashes_each(codes, k).collect()
}

/// `gram_hashes`, one at a time.
pub fn gram_hashes_each(codes: &[u64], k: usize) -> impl Iterator<Item = u64> + '_ {
    let grams = if k == 0 || codes.len() < k { [].windows(1) } else { codes.windows(k) };
    grams.map(|gram| gram_hash(gram.iter().copied()))
}

fn gram_hash(gram: impl Iterator<Item = u64>) -> u64 {
    let mut h = gram.fold(0u64, |h, c| h.wrapping_mul(BASE).wrapping_add(c));
    h ^= h >> 30;
    h = h.wrapping_mul(M1);
    h ^= h >> 27;
    h = h.wrapping_mul(M2);
    h ^ (h >> 31)
}

/// `winnow(&gram_hashes(codes, k), w, out)` of codes given one at a time (`push`, then `finish`):
/// only the last `k` codes and `w` hashes are held, not 16 bytes a unit.
pub struct Winnower<'a> {
    k: usize,
    w: usize,
    codes: Vec<u64>,  // the last k codes, a ring
    hashes: Vec<u64>, // the last w hashes, a ring
    seen: usize,      // codes pushed
    made: usize,      // hashes made
    last: usize,      // position of the last key written
    out: &'a mut Vec<u64>,
}

impl<'a> Winnower<'a> {
    pub fn new(k: usize, w: usize, out: &'a mut Vec<u64>) -> Self {
        Self { k, w, codes: vec![0; k], hashes: vec![0; w], seen: 0, made: 0, last: usize::MAX, out }
    }

    pub fn push(&mut self, code: u64) {
        if self.k == 0 || self.w == 0 {
            return;
        }
        self.codes[self.seen % self.k] = code;
        self.seen += 1;
        if self.seen < self.k {
            return;
        }
        let codes = &self.codes;
        self.hashes[self.made % self.w] = gram_hash((self.seen - self.k..self.seen).map(|i| codes[i % self.k]));
        self.made += 1;
        if self.made >= self.w {
            self.window(self.made - self.w, self.w);
        }
    }

    /// The smallest hash of positions `start .. start + len` (the rightmost of equal ones), written unless it was last.
    fn window(&mut self, start: usize, len: usize) {
        let mut at = start;
        for p in start..start + len {
            if self.hashes[p % self.w] <= self.hashes[at % self.w] {
                at = p;
            }
        }
        if at != self.last {
            self.out.extend([self.hashes[at % self.w], at as u64]);
            self.last = at;
        }
    }

    /// Fewer hashes than `w` form one window.
    pub fn finish(mut self) {
        if self.w > 0 && self.made > 0 && self.made < self.w {
            self.window(0, self.made);
        }
    }
}

/// The smallest of every `w` consecutive hashes (the rightmost of equal ones), each once, with its
/// position, in order; fewer than `w` hashes form one window. Appended to `out` as (hash, position) pairs.
#[cfg_attr(not(test), allow(dead_code))] // the reference `Winnower` is tested against
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_winnower_writes_what_winnow_writes_of_the_gram_hashes() {
        let mut state = 7u64;
        for n in 0..60 {
            let codes: Vec<u64> = (0..n)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    state >> 61 // few codes: equal hashes, rightmost kept
                })
                .collect();
            for k in 0..7 {
                for w in 0..9 {
                    let mut want = Vec::new();
                    winnow(&gram_hashes(&codes, k), w, &mut want);
                    let mut got = Vec::new();
                    let mut keys = Winnower::new(k, w, &mut got);
                    codes.iter().for_each(|&c| keys.push(c));
                    keys.finish();
                    assert_eq!(got, want, "n {n} k {k} w {w}");
                }
            }
        }
    }
}
