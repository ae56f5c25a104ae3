//! What one comparison marks copied and what of it counts (`simdup_es.compare`, `simdup_es.multilevel`,
//! `simdup_es.commontext`): the runs two texts share, each text's common text by its keys' counts, and
//! the units in passages that count. Per unit of a text; the Python functions named are the reference.

use rustc_hash::FxHashMap;

use crate::winnow::{gram_hashes, gram_hashes_each};

/// The query's grams of `k` codes hashed and sorted once (`simdup_es.winnow.GramIndex`): `sorted` hashes,
/// `order[i]` the gram `sorted[i]` came from (equal ones in text order), `n` the query's units; `buckets`
/// ([`buckets`]) where each value of the hashes' top bits starts among them.
pub struct Grams<'a> {
    pub sorted: &'a [u64],
    pub order: &'a [u32],
    pub n: usize,
    pub k: usize,
    pub buckets: &'a Buckets,
}

/// Where each value of the top `bits` bits starts among ascending hashes (and where the last ends): a gram is
/// looked up among the few of its bucket rather than by binary search over all (the hashes are mixed, so
/// buckets are even). At most 2^18 buckets (1 MiB, kept with a long query: a few grams a bucket past that), about
/// one a gram below that.
pub struct Buckets {
    bits: u32,
    starts: Vec<u32>,
}

impl Buckets {
    pub fn of(sorted: &[u64]) -> Self {
        let n = sorted.len();
        let bits = if n < 2 || n > u32::MAX as usize { 0 } else { (usize::BITS - (n - 1).leading_zeros()).min(18) };
        let mut starts = vec![0u32; (1usize << bits) + 1];
        if bits > 0 {
            sorted.iter().for_each(|&h| starts[(h >> (64 - bits)) as usize + 1] += 1);
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
        }
        Self { bits, starts }
    }

    /// The first of the hashes equal to `h` (or where it would be) and how many there are.
    fn find(&self, sorted: &[u64], h: u64) -> (usize, usize) {
        let (from, to) = if self.bits == 0 {
            (0, sorted.len())
        } else {
            let b = (h >> (64 - self.bits)) as usize;
            (self.starts[b] as usize, self.starts[b + 1] as usize)
        };
        let within = &sorted[from..to];
        let lo = within.partition_point(|&x| x < h);
        (from + lo, within[lo..].partition_point(|&x| x <= h))
    }
}

/// Units covered by the grams of `k` starting where `starts` is true (`gram_cover`).
fn cover(starts: &[bool], n: usize, k: usize) -> Vec<bool> {
    let mut last: Option<usize> = None; // the last gram start at or before the unit
    (0..n)
        .map(|i| {
            if starts.get(i).copied().unwrap_or(false) {
                last = Some(i);
            }
            last.is_some_and(|s| s + k > i)
        })
        .collect()
}

/// `shared_runs_with`: which units of the query and of `b` lie in a gram of `k` both hold, grams matched as
/// multisets (the first `c` occurrences on each side of a gram the other holds `c` times).
pub fn shared_runs(a: &Grams<'_>, b: &[u64]) -> (Vec<bool>, Vec<bool>) {
    let hb = gram_hashes(b, a.k);
    let mut starts_a = vec![false; (a.n + 1).saturating_sub(a.k)];
    let mut starts_b = vec![false; hb.len()];
    // How many of `b`'s grams of each hash were seen, kept at the hash's first place among the sorted (4 bytes a
    // gram of the query: a map by hash took some 30 bytes a distinct gram of `b`).
    let mut seen = vec![0u32; a.sorted.len()];
    for (j, &h) in hb.iter().enumerate() {
        let (lo, count) = a.buckets.find(a.sorted, h);
        if count == 0 {
            continue;
        }
        let rank = seen[lo] as usize;
        if rank < count {
            starts_b[j] = true;
            starts_a[a.order[lo + rank] as usize] = true;
            seen[lo] += 1; // at most count: no overflow
        }
    }
    (cover(&starts_a, a.n, a.k), cover(&starts_b, b.len(), a.k))
}

/// `commontext._chains`: per unit of `n`, the largest weight of the grams (starting at `at`, ascending) of the
/// chain it lies under (grams at most `w` apart, each covering `k` units), 0 for none; every weight 1 without.
fn chains(at: &[usize], weight: Option<&[i64]>, n: usize, k: usize, w: usize) -> Vec<i64> {
    let mut out = vec![0i64; n];
    let mut first = 0;
    while first < at.len() {
        let mut last = first;
        while last + 1 < at.len() && at[last + 1] - at[last] <= w {
            last += 1;
        }
        let top = weight.map_or(1, |weight| weight[first..=last].iter().copied().max().unwrap_or(0));
        out[at[first]..(at[last] + k).min(n)].fill(top);
        first = last + 1;
    }
    out
}

/// What the store's counts say of a text (`commontext.rarity`): per unit, `held` (the most documents holding a
/// key of the chain over `short_common` it lies under) and `common` (under a chain over `common`). `keys`
/// ascending with their `counts`; a gram of `k` codes not among them counts 0.
pub fn rarity(
    codes: &[u64],
    keys: &[u64],
    counts: &[i64],
    common: i64,
    short_common: i64,
    k: usize,
    w: usize,
) -> (Vec<i64>, Vec<bool>) {
    let n = codes.len();
    let held: Vec<i64> = if keys.is_empty() {
        Vec::new()
    } else {
        // Each gram hashed as it is looked up: no vector of them beside `held` (8 bytes a unit).
        gram_hashes_each(codes, k)
            .map(|h| {
                let at = keys.partition_point(|&x| x < h).min(keys.len() - 1);
                if keys[at] == h { counts[at] } else { 0 }
            })
            .collect()
    };
    let at: Vec<usize> = (0..held.len()).filter(|&i| held[i] > short_common.min(common)).collect();
    let weights: Vec<i64> = at.iter().map(|&i| held[i]).collect();
    let over: Vec<usize> = at.iter().copied().filter(|&i| held[i] > common).collect();
    (chains(&at, Some(&weights), n, k, w), chains(&over, None, n, k, w).into_iter().map(|v| v > 0).collect())
}

/// The fewest copied units that count, however short the side (`multilevel.SHORTEST`).
const SHORTEST: f64 = 8.0;

/// The rule that says which copied units count (`multilevel.MultiParams`): passages of `passage_units` units
/// none of them common, or of `short_units` (at most half the smaller side, of `smaller` units, and at
/// least [`SHORTEST`]) none of them too frequent, their units at most `gap` apart.
pub struct Rule {
    pub passage_units: usize,
    pub gap: usize,
    pub short_units: usize,
    pub smaller: usize,
}

/// `multilevel._filled`, counted: the `copied` units in passages of at least `at_least` of them (copied units at
/// most `gap` apart), found as the units are read: no list of the copied units' positions.
fn filled(copied: impl Fn(usize) -> bool, n: usize, at_least: f64, gap: usize, out: &mut [bool]) {
    let mut i = 0;
    while i < n {
        if !copied(i) {
            i += 1;
            continue;
        }
        let (start, mut last, mut count) = (i, i, 1usize);
        let mut j = i + 1;
        while j < n && j - last <= gap + 1 {
            if copied(j) {
                last = j;
                count += 1;
            }
            j += 1;
        }
        if count as f64 >= at_least {
            (start..=last).filter(|&u| copied(u)).for_each(|u| out[u] = true);
        }
        i = j;
    }
}

/// `multilevel.counted_units(...).sum()` of `n` units by whether each is copied and not common (`rare`) and
/// copied under no key too frequent for a short passage (`rarer`).
pub fn counted_by(n: usize, rare: impl Fn(usize) -> bool, rarer: impl Fn(usize) -> bool, rule: &Rule) -> usize {
    let need = SHORTEST.max((rule.short_units as f64).min(rule.smaller.min(n) as f64 / 2.0));
    let mut out = vec![false; n];
    filled(&rare, n, rule.passage_units as f64, rule.gap, &mut out);
    let total = (0..n).filter(|&i| rarer(i)).count();
    if total as f64 >= need && 2 * total >= n {
        (0..n).filter(|&i| rarer(i)).for_each(|i| out[i] = true);
    } else {
        filled(&rarer, n, need, rule.gap, &mut out);
    }
    out.iter().filter(|&&c| c).count()
}

/// One side of a comparison: units per sentence, the sentences the matrix marked, the units in shared runs
/// (empty: none known), and the core `(first, stop)` of sentences when trimmed.
pub struct Side<'a> {
    pub lengths: &'a [i64],
    pub marked: &'a [usize],
    pub runs: &'a dyn Fn(usize) -> bool,
    pub runs_len: usize,
    pub core: Option<(usize, usize)>,
}

/// A stretch of copied common text: units `start .. stop`, held by at most `documents` documents.
pub type Held = (usize, usize, i64);

/// A side's `held` and `common` of each unit (`commontext.Rarity`), read where they lie.
pub type PerUnit<'a> = (&'a dyn Fn(usize) -> i64, &'a dyn Fn(usize) -> bool);

/// What `commontext._to_edges` adds to units `f .. l` (one sentence) of per-unit `value`s: a run of nonzero
/// values starting at `st < f + w` in it carries `value(st)` to the units before it in the sentence, one
/// ending at `sp > l - w` carries `value(sp - 1)` to those after it. So only a sentence's first and last `w - 1`
/// units change: `head[j]` is what unit `f + j` gets from the former, `tail[j]` what unit `l - 1 - j` gets
/// from the latter (`None`: nothing).
fn edge_carries(
    value: &impl Fn(usize) -> i64,
    f: usize,
    l: usize,
    n: usize,
    w: usize,
    head: &mut Vec<Option<i64>>,
    tail: &mut Vec<Option<i64>>,
) {
    let span = w.min(l - f);
    head.clear();
    head.resize(span, None);
    tail.clear();
    tail.resize(span, None);
    // Starts at st in (f, min(f + w, l)): units f .. st get value(st); walked from the last, a running max.
    let mut carry: Option<i64> = None;
    for st in (f + 1..(f + w).min(l)).rev() {
        if value(st) != 0 && value(st - 1) == 0 {
            carry = Some(carry.map_or(value(st), |c| c.max(value(st))));
        }
        head[st - 1 - f] = carry;
    }
    // Stops at sp in (max(l - w, f), l): units sp .. l get value(sp - 1).
    let mut carry: Option<i64> = None;
    for sp in (l + 1).saturating_sub(w).max(f + 1)..l {
        if value(sp - 1) != 0 && (sp == n || value(sp) == 0) {
            carry = Some(carry.map_or(value(sp - 1), |c| c.max(value(sp - 1))));
        }
        tail[l - 1 - sp] = carry;
    }
}

/// `multilevel.copied_shares` of one side: its counted copied units, its copied common units and their
/// stretches (`commontext.held_passages`), with the side's `held` and `common` per unit (`commontext.Rarity`;
/// `None`: nothing is common) carried to its sentences' edges (`to_sentence_edges`) as each sentence is read.
/// Holds two bytes a unit (what is copied, common or frequent, and what counts), whatever the side's length.
pub fn side_shares(side: &Side<'_>, rarity: Option<PerUnit<'_>>, rule: &Rule, w: usize) -> (usize, usize, Vec<Held>) {
    const COPIED: u8 = 1;
    const COMMON: u8 = 2;
    const FREQUENT: u8 = 4;
    let mut first = vec![0usize];
    for (s, &n) in side.lengths.iter().enumerate() {
        first.push(first[s] + n.max(0) as usize);
    }
    let n = first[side.lengths.len()];
    let mut flags = vec![0u8; n];
    for &s in side.marked {
        flags[first[s]..first[s + 1]].fill(COPIED);
    }
    if side.runs_len == n {
        flags.iter_mut().enumerate().for_each(|(i, f)| *f |= u8::from((side.runs)(i)));
    }
    if let Some((lo, hi)) = side.core {
        flags[..first[lo]].fill(0);
        flags[first[hi]..].fill(0);
    }
    let mut stretches = Vec::new();
    let mut shared = 0;
    if let Some((held, common)) = rarity {
        let carried = (0..n).any(|i| held(i) != 0); // `to_sentence_edges` leaves a side without held keys as is
        let as_count = |i: usize| i64::from(common(i));
        let (mut head, mut tail, mut chead, mut ctail) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut stretch: Option<(usize, i64)> = None;
        for s in 0..side.lengths.len() {
            let (f, l) = (first[s], first[s + 1]);
            if f == l {
                continue;
            }
            if carried {
                edge_carries(&held, f, l, n, w, &mut head, &mut tail);
                edge_carries(&as_count, f, l, n, w, &mut chead, &mut ctail);
            }
            let at = |i: usize, head: &[Option<i64>], tail: &[Option<i64>], v: i64| {
                let from_head = head.get(i - f).copied().flatten();
                let from_tail = tail.get(l - 1 - i).copied().flatten();
                [from_head, from_tail].into_iter().flatten().fold(v, i64::max)
            };
            for (i, flag) in flags.iter_mut().enumerate().take(l).skip(f) {
                let (h, c) = if carried {
                    (at(i, &head, &tail, held(i)), at(i, &chead, &ctail, as_count(i)) > 0)
                } else {
                    (held(i), common(i))
                };
                *flag |= if c { COMMON } else { 0 } | if h > 0 { FREQUENT } else { 0 };
                if c && *flag & COPIED != 0 {
                    shared += 1;
                    stretch = Some(stretch.map_or((i, h), |(start, top)| (start, top.max(h))));
                } else if let Some((start, top)) = stretch.take() {
                    stretches.push((start, i, top));
                }
            }
        }
        if let Some((start, top)) = stretch {
            stretches.push((start, n, top));
        }
    }
    let is = |i: usize, bit: u8| flags[i] & bit != 0;
    let counted = counted_by(n, |i| is(i, COPIED) && !is(i, COMMON), |i| is(i, COPIED) && !is(i, FREQUENT), rule);
    (counted, shared, stretches)
}

/// A dense rank as a code point, past the surrogates (`matrix._no_surrogates`).
fn no_surrogates(rank: usize) -> u32 {
    let code = rank as u32;
    if code >= 0xD800 { code + 0x800 } else { code }
}

/// `matrix.rank_second`: the raw code points of a candidate's units coded as the query's were (`values`, the
/// query's distinct raw code points ascending, and `table`, the code each got); those the query lacks follow,
/// by their count in `raw` (most first, then by code point). The codes, and the distinct units of both.
pub fn rank_second(values: &[u32], table: &[u32], raw: &[u32]) -> (Vec<u32>, usize) {
    let mut counts: FxHashMap<u32, usize> = FxHashMap::default();
    raw.iter().for_each(|&c| *counts.entry(c).or_insert(0) += 1);
    let mut code: FxHashMap<u32, u32> = FxHashMap::default();
    let mut new: Vec<(u32, usize)> = Vec::new();
    for (&value, &count) in &counts {
        match values.binary_search(&value) {
            Ok(at) => {
                code.insert(value, table[at]);
            }
            Err(_) => new.push((value, count)),
        }
    }
    new.sort_unstable_by_key(|&(value, count)| (std::cmp::Reverse(count), value));
    for (k, &(value, _)) in new.iter().enumerate() {
        code.insert(value, no_surrogates(values.len() + k));
    }
    (raw.iter().map(|c| code[c]).collect(), values.len() + new.len())
}

/// The union of stretches `[start, end)` clipped to `0..n` (stretches that touch make one run, as flags per unit
/// would): the units in it and its longest run (`simdup_es.multilevel._union_runs` and `_per_row` of one row).
fn union_runs(stretches: &mut [(i64, i64)], n: i64) -> (i64, i64) {
    stretches.sort_unstable();
    let (mut units, mut longest) = (0, 0);
    let mut run: Option<(i64, i64)> = None;
    for &(start, end) in stretches.iter() {
        let (start, end) = (start.min(n), end.min(n));
        if start >= end {
            continue;
        }
        match run {
            Some((first, reach)) if start <= reach => run = Some((first, reach.max(end))),
            _ => {
                if let Some((first, reach)) = run {
                    units += reach - first;
                    longest = longest.max(reach - first);
                }
                run = Some((start, end));
            }
        }
    }
    if let Some((first, reach)) = run {
        units += reach - first;
        longest = longest.max(reach - first);
    }
    (units, longest)
}

/// What a candidate matched of a query (`simdup_es.multilevel.PartCandidate`): indices into the query's keys and
/// parts.
pub struct Matched {
    pub keys: Vec<usize>,
    pub parts: Vec<usize>,
}

/// `simdup_es.multilevel._covers` of one candidate: the query units under its matched keys or parts, those under its
/// parts, the longest run of the former, and how many distinct key values it matched. The query has `n` units, its
/// keys start at `positions` with `values`, its parts cover units `spans`; a key covers its gram's `k` units and up to
/// the next matched key when that starts at most `w` units later.
pub fn covers(n: i64, positions: &[i64], values: &[u64], spans: &[(i64, i64)], c: &Matched, k: i64, w: i64) -> [i64; 4] {
    let mut starts: Vec<i64> = c.keys.iter().map(|&i| positions[i]).collect();
    starts.sort_unstable();
    let mut stretches: Vec<(i64, i64)> = Vec::with_capacity(starts.len() + c.parts.len());
    for (i, &start) in starts.iter().enumerate() {
        let end = match starts.get(i + 1) {
            Some(&after) if after - start <= w => after,
            _ => start + k,
        };
        stretches.push((start, end.max(start + k)));
    }
    let mut in_parts: Vec<(i64, i64)> = c.parts.iter().map(|&p| spans[p]).collect();
    stretches.extend_from_slice(&in_parts);
    let (units, longest) = union_runs(&mut stretches, n);
    let (part_units, _) = union_runs(&mut in_parts, n);
    let mut matched: Vec<u64> = c.keys.iter().map(|&i| values[i]).collect();
    matched.sort_unstable();
    matched.dedup();
    [units, part_units, longest, matched.len() as i64]
}

/// `rarity` against counts held once (`simdup_es.commontext.KeyCounts`): a search reads every candidate by its
/// query's counts.
pub struct KeyTable {
    pub keys: Vec<u64>,
    pub counts: Vec<i64>,
}

impl KeyTable {
    pub fn rarity(&self, codes: &[u64], common: i64, short_common: i64, k: usize, w: usize) -> (Vec<i64>, Vec<bool>) {
        rarity(codes, &self.keys, &self.counts, common, short_common, k, w)
    }
}

#[cfg(test)]
mod cover_tests {
    use super::*;

    /// A flag per unit, as `simdup_es.reference` covers them.
    fn by_flags(n: i64, positions: &[i64], spans: &[(i64, i64)], c: &Matched, k: i64, w: i64) -> (i64, i64, i64) {
        let mut starts: Vec<i64> = c.keys.iter().map(|&i| positions[i]).collect();
        starts.sort_unstable();
        let mut flags = vec![false; n as usize];
        let mut parts = vec![false; n as usize];
        for (i, &s) in starts.iter().enumerate() {
            let end = starts.get(i + 1).filter(|&&a| a - s <= w).copied().unwrap_or(s + k).max(s + k);
            for u in s..end.min(n) {
                flags[u as usize] = true;
            }
        }
        for &p in &c.parts {
            for u in spans[p].0..spans[p].1.min(n) {
                flags[u as usize] = true;
                parts[u as usize] = true;
            }
        }
        let (mut longest, mut run) = (0, 0);
        for &f in &flags {
            run = if f { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        let count = |v: &[bool]| v.iter().filter(|&&f| f).count() as i64;
        (count(&flags), count(&parts), longest)
    }

    #[test]
    fn covers_as_flags() {
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..2000 {
            let n = next(80) as i64 + 1;
            let positions: Vec<i64> = (0..next(12)).map(|_| next(n as u64 + 3) as i64).collect();
            let values: Vec<u64> = positions.iter().map(|_| next(4)).collect();
            let spans: Vec<(i64, i64)> = (0..next(4))
                .map(|_| {
                    let a = next(n as u64 + 2) as i64;
                    (a, a + next(40) as i64)
                })
                .collect();
            let keys = (0..positions.len()).filter(|_| next(2) == 0).collect();
            let parts = (0..spans.len()).filter(|_| next(2) == 0).collect();
            let c = Matched { keys, parts };
            let got = covers(n, &positions, &values, &spans, &c, 5, 4);
            let (units, part_units, longest) = by_flags(n, &positions, &spans, &c, 5, 4);
            assert_eq!((got[0], got[1], got[2]), (units, part_units, longest));
            let mut distinct: Vec<u64> = c.keys.iter().map(|&i| values[i]).collect();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(got[3], distinct.len() as i64);
        }
    }
}
