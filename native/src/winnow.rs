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
    mix(gram.fold(0u64, |h, c| h.wrapping_mul(BASE).wrapping_add(c)))
}

fn mix(mut h: u64) -> u64 {
    h ^= h >> 30;
    h = h.wrapping_mul(M1);
    h ^= h >> 27;
    h = h.wrapping_mul(M2);
    h ^ (h >> 31)
}

/// `winnow(&gram_hashes(codes, k), w, out)` of codes given one at a time (`push`, then `finish`):
/// only the last `k` codes and `w` hashes are held, not 16 bytes a unit. The gram hash rolls (its
/// polynomial is exact in wrapping arithmetic) and a window is scanned again only when its smallest
/// hash leaves it, as Schleimer, Wilkerson and Aiken's winnowing does ("Winnowing: local algorithms
/// for document fingerprinting"): two thirds less time than hashing each gram and scanning each window.
pub struct Winnower<'a> {
    k: usize,
    w: usize,
    codes: Vec<u64>,  // the last k codes, a ring (zeros before the first k: they add nothing to the hash)
    next_code: usize, // the slot of `codes` the next code goes to
    raw: u64,         // the polynomial of the last k codes, before `mix`
    lead: u64,        // BASE^(k-1): the weight of the code that leaves
    hashes: Vec<u64>, // the last w hashes, a ring
    next_hash: usize, // the slot of `hashes` the next hash goes to
    seen: usize,      // codes pushed
    made: usize,      // hashes made
    at: usize,        // position of the current window's smallest hash (the rightmost of equal ones)
    least: usize,     // the slot of `hashes` that holds it
    last: usize,      // position of the last key written
    out: &'a mut Vec<u64>,
}

impl<'a> Winnower<'a> {
    pub fn new(k: usize, w: usize, out: &'a mut Vec<u64>) -> Self {
        let lead = (1..k).fold(1u64, |p, _| p.wrapping_mul(BASE));
        Self {
            k,
            w,
            codes: vec![0; k],
            next_code: 0,
            raw: 0,
            lead,
            hashes: vec![0; w],
            next_hash: 0,
            seen: 0,
            made: 0,
            at: usize::MAX,
            least: 0,
            last: usize::MAX,
            out,
        }
    }

    pub fn push(&mut self, code: u64) {
        if self.k == 0 || self.w == 0 {
            return;
        }
        let gone = std::mem::replace(&mut self.codes[self.next_code], code);
        self.next_code = if self.next_code + 1 == self.k { 0 } else { self.next_code + 1 };
        self.raw = self.raw.wrapping_sub(gone.wrapping_mul(self.lead)).wrapping_mul(BASE).wrapping_add(code);
        self.seen += 1;
        if self.seen < self.k {
            return;
        }
        let (p, h, slot) = (self.made, mix(self.raw), self.next_hash);
        self.hashes[slot] = h;
        self.next_hash = if slot + 1 == self.w { 0 } else { slot + 1 };
        self.made += 1;
        if self.made < self.w {
            return;
        }
        let start = self.made - self.w;
        if self.at == usize::MAX || self.at < start {
            self.rescan(start, self.w);
        } else if h <= self.hashes[self.least] {
            (self.at, self.least) = (p, slot);
        }
        self.write();
    }

    /// The smallest hash of positions `start .. start + len` (the rightmost of equal ones) found again.
    fn rescan(&mut self, start: usize, len: usize) {
        let mut slot = start % self.w;
        (self.at, self.least) = (start, slot);
        for p in start..start + len {
            if self.hashes[slot] <= self.hashes[self.least] {
                (self.at, self.least) = (p, slot);
            }
            slot = if slot + 1 == self.w { 0 } else { slot + 1 };
        }
    }

    /// The current window's key, unless it was the last one written.
    fn write(&mut self) {
        if self.at != self.last {
            self.out.extend([self.hashes[self.least], self.at as u64]);
            self.last = self.at;
        }
    }

    /// Fewer hashes than `w` form one window.
    pub fn finish(mut self) {
        if self.w > 0 && self.made > 0 && self.made < self.w {
            self.rescan(0, self.made);
            self.write();
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
