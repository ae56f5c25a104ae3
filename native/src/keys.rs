//! A document's index keys as the stores write them (`simdup_es.keys`, `simdup_es.store.base.stored_levels`):
//! the part fingerprints and keys a store keeps, and the members of the Elasticsearch document's `simdup`
//! object (but its id) as JSON text, written directly.

use std::fmt::Write;

const BLOCKS: usize = 8;
const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"; // URL-safe base64's digits
const HEX: &[u8; 16] = b"0123456789abcdef";
/// `keys.KEY_BITS`: the bits of a winnowed key its term holds (its first), as 7 base64 digits.
const KEY_BITS: u32 = 42;

/// `keys.QUAD_BLOCKS`: the 8 blocks paired (0-1, 2-3, 4-5, 6-7), and the unions of two pairs, in
/// `itertools.combinations` order.
const QUAD_BLOCKS: [[usize; 4]; 6] = [[0, 1, 2, 3], [0, 1, 4, 5], [0, 1, 6, 7], [2, 3, 4, 5], [2, 3, 6, 7], [4, 5, 6, 7]];
/// `keys.FIVE_BLOCKS`: every 5-subset of the 8 blocks, in `itertools.combinations` order.
const FIVE_BLOCKS: [[usize; 5]; 56] = five_blocks();

const fn five_blocks() -> [[usize; 5]; 56] {
    let mut out = [[0; 5]; 56];
    let mut n = 0;
    let mut pick = [0, 1, 2, 3, 4]; // the next subset, ascending; subsets in lexicographic order
    loop {
        out[n] = pick;
        n += 1;
        let mut i = 5;
        while i > 0 && pick[i - 1] == BLOCKS - 5 + i - 1 {
            i -= 1;
        }
        if i == 0 {
            break;
        }
        pick[i - 1] += 1;
        let mut j = i;
        while j < 5 {
            pick[j] = pick[j - 1] + 1;
            j += 1;
        }
    }
    out
}

/// Byte `j` of a fingerprint (block `j`, lowest first).
fn block(fingerprint: u64, j: usize) -> u64 {
    fingerprint >> (8 * j) & 0xFF
}

/// `keys._subset_keys` of one fingerprint and one subset `n`: `n`, then the subset's bytes, most significant first.
fn subset_key(fingerprint: u64, n: usize, subset: &[usize]) -> u64 {
    subset.iter().fold(n as u64, |key, &j| key << 8 | block(fingerprint, j))
}

/// `"` + `digits` URL-safe base64 digits of `key` (most significant first) + `"`.
fn push_b64(out: &mut String, key: u64, digits: usize) {
    out.push('"');
    for i in (0..digits).rev() {
        out.push(B64[(key >> (6 * i) & 63) as usize] as char);
    }
    out.push('"');
}

/// `"` + 16 lower-case hex digits of `value` + `"` (`keys.hex_json`'s terms).
fn push_hex(out: &mut String, value: u64) {
    out.push('"');
    for i in (0..16).rev() {
        out.push(HEX[(value >> (4 * i) & 15) as usize] as char);
    }
    out.push('"');
}

/// Comma-separated items, each written by `write`.
fn push_list<T: Copy>(out: &mut String, items: &[T], mut write: impl FnMut(&mut String, T)) {
    out.push('[');
    for (i, &item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write(out, item);
    }
    out.push(']');
}

/// What the stores keep of a document's levels (`stored_levels`): its part fingerprints (without `None`), an evenly
/// spread `max_parts` of them when there are more, how many were left out, and its distinct keys ascending.
pub fn stored(part_fingerprints: &[Option<u64>], keys: &[u64], max_parts: usize) -> (Vec<u64>, usize, Vec<u64>) {
    let fps: Vec<u64> = part_fingerprints.iter().flatten().copied().collect();
    let n = fps.len();
    let kept: Vec<u64> = if n <= max_parts { fps } else { (0..max_parts).map(|i| fps[i * n / max_parts]).collect() };
    let cut = n - kept.len();
    let mut values: Vec<u64> = keys.iter().step_by(2).copied().collect(); // (hash, position) pairs
    values.sort_unstable();
    values.dedup();
    (kept, cut, values)
}

/// A document's levels as stored: units, parts left out, kept part fingerprints, distinct keys.
pub struct StoredLevels<'a> {
    pub units: usize,
    pub cut: usize,
    pub parts: &'a [u64],
    pub keys: &'a [u64],
}

/// `keys.members_json`: the members of a document's `simdup` object but its id, appended to `out`:
/// `"fp":…,"version":…`, the 8 block terms, the 56 five-block terms with `five_terms` (the `terms`
/// layout), and with `levels` its units, parts left out, keys, the parts' quads and fingerprints.
/// `version_json` is the version as a JSON string (quoted).
pub fn members(out: &mut String, fingerprint: u64, version_json: &str, five_terms: bool, levels: Option<&StoredLevels>) {
    out.push_str("\"fp\":\"");
    write!(out, "{fingerprint:016x}").expect("writing to a String");
    out.push_str("\",\"version\":");
    out.push_str(version_json);
    for j in 0..BLOCKS {
        let b = block(fingerprint, j) as usize;
        out.push_str(",\"b");
        out.push((b'0' + j as u8) as char);
        out.push_str("\":\"");
        out.push(HEX[b >> 4] as char);
        out.push(HEX[b & 15] as char);
        out.push('"');
    }
    if five_terms {
        out.push_str(",\"dk\":");
        let terms: Vec<u64> = FIVE_BLOCKS.iter().enumerate().map(|(n, five)| subset_key(fingerprint, n, five)).collect();
        push_list(out, &terms, |out, key| push_b64(out, key, 8));
    }
    let Some(levels) = levels else { return };
    write!(out, ",\"units\":{},\"parts_cut\":{},\"sk\":", levels.units, levels.cut).expect("writing to a String");
    push_list(out, levels.keys, |out, key| push_b64(out, key >> (64 - KEY_BITS), KEY_BITS as usize / 6));
    out.push_str(",\"pq\":[");
    for (i, &part) in levels.parts.iter().enumerate() {
        for (n, quad) in QUAD_BLOCKS.iter().enumerate() {
            if i > 0 || n > 0 {
                out.push(',');
            }
            push_b64(out, subset_key(part, n, quad), 6);
        }
    }
    out.push_str("],\"pf\":");
    push_list(out, levels.parts, push_hex);
}
