//! OpenCC's conversions on the project's flat tables: what `simdup_es.text.to_simplified` runs.
//!
//! The package flattens each (group) table of OpenCC's three configs into one text table
//! (`simdup_es.opencc_tables`); this converts with them as OpenCC's C++ library (1.4) does:
//!
//! - a config with a segmentation table cuts the text into segments by forward maximum matching:
//!   each key found is a segment, and each run of characters between keys is one segment; without
//!   one, the whole text is one segment;
//! - each segment goes through each table of the conversion chain in turn (the next table sees the
//!   whole converted segment), by forward maximum matching: the longest key starting at a place is
//!   replaced by its first value; where no key starts, an ideographic description sequence
//!   (⿰氵青) is copied whole, else one character;
//! - a NUL ends a piece: each piece between NULs converts on its own (`simdup_es.text` converts
//!   them so with OpenCC too).
//!
//! `tests/unit/test_script_native.py` holds it to OpenCC on the corpus and on random text.

use rustc_hash::FxHashMap;

/// The code points below this find their first node in an array, the others in a hash map.
const DENSE: usize = 0x10000;
/// The most tables one trie holds (a bit each in a node's word).
pub const MAX_TABLES: usize = 8;

/// The keys of every table, in one trie by character (the tables share most keys: a pass warms the
/// nodes the next one reads). A node is known by its *word*: its number (bits `0..NODE`), where its
/// values start in `values` (bits `NODE..BASE`: one entry per table that has the node as a key, in
/// table order), then a bit per table that has it as a key (`VALUE`) and a bit per table that has a
/// longer key beginning with it (`LONGER`). A value is its key's first value in that table.
pub struct Trie {
    first: Vec<u64>,                   // code point (< DENSE) -> word of the one-character node, 0 for none
    first_astral: FxHashMap<u32, u64>, // the same for the code points from DENSE on
    edges: FxHashMap<u64, u64>,        // edge(node, code point) -> word of the child
    values: Vec<(u32, u32)>,           // (start in `pool`, length), or (the character, 1)
    pool: Vec<char>,
    pairs: Vec<u64>,  // a bit set: the first two characters of each longer key set a bit (PAIR_BITS)
    starts: Vec<u64>, // per table, a bit set of the code points below DENSE: a key of it may start there
    within_keys: u64, // bit s * MAX_TABLES + t: table t's keys are within table s's (`Trie::within`)
}

const NODE: u32 = 24;
const BASE: u32 = 48;
const VALUE: u32 = BASE;
const LONGER: u32 = BASE + MAX_TABLES as u32;

/// The bits of `Trie::pairs`: most places where a table has a longer key beginning with the character
/// there but none beginning with the two, found without looking the second one up.
const PAIR_BITS: u32 = 19;

#[inline]
fn pair_bit(a: char, b: char) -> usize {
    let h = (u64::from(a as u32) << 21 | u64::from(b as u32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> (64 - PAIR_BITS)) as usize
}

/// A trie being built: each node's VALUE and LONGER bits and its values by table.
struct Building {
    edges: FxHashMap<u64, u32>,
    depth1: FxHashMap<u32, char>, // the one-character nodes: their character
    bits: Vec<u64>,
    values: Vec<Vec<(usize, u32, u32)>>,
    pool: Vec<char>,
}

impl Trie {
    /// A trie of `tables`, each in its text form, as OpenCC reads a text dictionary: `key<TAB>value value...`
    /// a line, the first value the one converted to; empty lines and lines that begin with `#` skipped, a
    /// BOM at the start ignored. Duplicate keys, a key or value of no character, and NULs are refused.
    pub fn parse(tables: &[&str]) -> Result<Self, String> {
        if tables.len() > MAX_TABLES {
            return Err(format!("{} tables, at most {MAX_TABLES}", tables.len()));
        }
        let lines = tables.iter().map(|t| t.matches('\n').count()).sum();
        let mut b = Building {
            edges: FxHashMap::with_capacity_and_hasher(lines, Default::default()),
            depth1: FxHashMap::default(),
            bits: vec![0],
            values: vec![Vec::new()],
            pool: Vec::new(),
        };
        for (t, text) in tables.iter().enumerate() {
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            for (number, line) in text.split('\n').enumerate() {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if line.is_empty() || line.starts_with('#') {
                    continue;
                }
                let what = |e: &str| format!("table {t}, line {}: {e}", number + 1);
                let (key, values) = line.split_once('\t').ok_or_else(|| what("no tab"))?;
                let value = values.split(' ').next().unwrap_or("");
                if key.is_empty() || value.is_empty() || key.contains('\0') || value.contains('\0') {
                    return Err(what("an empty key or value, or a NUL"));
                }
                b.insert(t, key, value).map_err(|e| what(&e))?;
            }
        }
        let (mut base, mut values) = (Vec::with_capacity(b.values.len()), Vec::new());
        for node_values in &mut b.values {
            base.push(values.len() as u64);
            node_values.sort_unstable();
            values.extend(node_values.iter().map(
                |&(_, start, length)| {
                    if length == 1 { (b.pool[start as usize] as u32, 1) } else { (start, length) }
                },
            ));
        }
        if b.bits.len() >= 1 << NODE || values.len() >= 1 << (BASE - NODE) {
            return Err("too many keys".into());
        }
        let word = |node: u32| u64::from(node) | base[node as usize] << NODE | b.bits[node as usize];
        let mut first = vec![0u64; DENSE];
        let mut first_astral = FxHashMap::default();
        let mut edges = FxHashMap::default();
        edges.reserve(b.edges.len());
        let mut pairs = vec![0u64; 1 << (PAIR_BITS - 6)];
        for (&edge, &node) in &b.edges {
            let (parent, c) = ((edge >> 32) as u32, edge as u32);
            if parent != 0 {
                edges.insert(edge, word(node));
                if let Some(&first) = b.depth1.get(&parent) {
                    let bit = pair_bit(first, char::from_u32(c).expect("a character"));
                    pairs[bit >> 6] |= 1 << (bit & 63);
                }
            } else if (c as usize) < DENSE {
                first[c as usize] = word(node);
            } else {
                first_astral.insert(c, word(node));
            }
        }
        // Each table's first characters, and the ideographic description characters (which stop a run
        // of characters copied as they are, as OpenCC's scan does).
        let mut starts = vec![0u64; tables.len() * DENSE / 64];
        for t in 0..tables.len() {
            let mask = (1u64 << (VALUE as usize + t)) | (1u64 << (LONGER as usize + t));
            for c in (0..DENSE).filter(|&c| first[c] & mask != 0 || arity_of(c as u32) != 0) {
                let bit = t * DENSE + c;
                starts[bit >> 6] |= 1 << (bit & 63);
            }
        }
        // Which tables' keys of two characters or more are all keys of which others (`lacking[t]`: the tables
        // that lack one of t's), where no key of the first begins with an ideographic description character.
        let mut lacking = [0u64; MAX_TABLES];
        for (n, &bits) in b.bits.iter().enumerate().skip(1) {
            let keyed = (bits >> VALUE) & 0xFF;
            if keyed != 0 && !b.depth1.contains_key(&(n as u32)) {
                for (_, lack) in lacking.iter_mut().enumerate().filter(|&(t, _)| keyed & (1 << t) != 0) {
                    *lack |= !keyed;
                }
            }
        }
        let after_description = (0x2FF0..=0x2FFF).fold(0, |acc, c| acc | first[c] >> VALUE | first[c] >> LONGER) & 0xFF;
        let mut within = 0u64;
        for t in (0..tables.len()).filter(|&t| after_description & (1 << t) == 0) {
            for s in (0..tables.len()).filter(|&s| lacking[t] & (1 << s) == 0) {
                within |= 1 << (s * MAX_TABLES + t);
            }
        }
        Ok(Trie { first, first_astral, edges, values, pool: b.pool, pairs, starts, within_keys: within })
    }

    #[inline]
    fn first_word(&self, c: char) -> u64 {
        if (c as usize) < DENSE { self.first[c as usize] } else { self.first_astral.get(&(c as u32)).copied().unwrap_or(0) }
    }

    /// The longest key of table `t` at the start of `text`: its length and its node's word.
    #[inline]
    fn longest(&self, t: usize, text: &[char]) -> Option<(usize, u64)> {
        let (value, longer) = (1u64 << (VALUE as usize + t), 1u64 << (LONGER as usize + t));
        let mut word = self.first_word(*text.first()?);
        if word & (value | longer) == 0 {
            return None;
        }
        let mut best = (word & value != 0).then_some((1, word));
        if word & longer == 0 || text.len() < 2 || {
            let bit = pair_bit(text[0], text[1]);
            self.pairs[bit >> 6] & (1 << (bit & 63)) == 0
        } {
            return best;
        }
        let mut at = 1;
        while word & longer != 0 && at < text.len() {
            match self.edges.get(&edge(word as u32 & ((1 << NODE) - 1), text[at])) {
                Some(&w) => word = w,
                None => break,
            }
            at += 1;
            if word & value != 0 {
                best = Some((at, word));
            }
        }
        best
    }

    /// Table `t`'s value at the node of `word` (which has one), appended to `out`.
    #[inline]
    fn push_value(&self, t: usize, word: u64, out: &mut Vec<char>) {
        let before = ((word >> VALUE) as u32 & ((1u32 << t) - 1)).count_ones() as usize;
        match self.values[(word >> NODE) as usize % (1 << (BASE - NODE)) + before] {
            (c, 1) => out.push(char::from_u32(c).expect("a character")),
            (start, length) => out.extend_from_slice(&self.pool[start as usize..(start + length) as usize]),
        }
    }

    /// How many characters at the start of `text` no key of table `t` begins with, and which are no
    /// ideographic description character (a bit set's word a character, without a look at the trie).
    #[inline]
    fn skip(&self, t: usize, text: &[char]) -> usize {
        let base = t * DENSE;
        text.iter()
            .position(|&c| {
                let c = c as usize;
                c >= DENSE || self.starts[(base + c) >> 6] & (1 << ((base + c) & 63)) != 0
            })
            .unwrap_or(text.len())
    }

    /// Whether every key of table `t` of two characters or more is a key of table `s`, and no key of `t`
    /// begins with an ideographic description character. Then, in a run of characters between the
    /// keys that segmentation with `s` found, `t` finds keys of one character only (a longer one there
    /// would be a key of `s`, found where it starts) and stops where `s` stopped.
    pub fn within(&self, s: usize, t: usize) -> bool {
        self.within_keys & (1 << (s * MAX_TABLES + t)) != 0
    }

    /// `text` converted by table `t` as `convert` does, looking up keys of one character only: where `t`
    /// has no longer key in it (a run between the keys of a segmentation table `t` is `within`).
    fn convert_characters(&self, t: usize, text: &[char], out: &mut Vec<char>) {
        let value = 1u64 << (VALUE as usize + t);
        let mut at = 0;
        while at < text.len() {
            let skipped = self.skip(t, &text[at..]);
            out.extend_from_slice(&text[at..at + skipped]);
            at += skipped;
            if at == text.len() {
                break;
            }
            let word = self.first_word(text[at]);
            if word & value != 0 {
                self.push_value(t, word, out);
                at += 1;
            } else {
                let length = unmatched(&text[at..]);
                out.extend_from_slice(&text[at..at + length]);
                at += length;
            }
        }
    }

    /// `text` converted by table `t`, appended to `out`.
    fn convert(&self, t: usize, text: &[char], out: &mut Vec<char>) {
        let mut at = 0;
        while at < text.len() {
            let skipped = self.skip(t, &text[at..]);
            if skipped > 0 {
                out.extend_from_slice(&text[at..at + skipped]);
                at += skipped;
                if at == text.len() {
                    break;
                }
            }
            if let Some((length, word)) = self.longest(t, &text[at..]) {
                self.push_value(t, word, out);
                at += length;
            } else {
                let length = unmatched(&text[at..]);
                if length == 1 {
                    out.push(text[at]);
                } else {
                    out.extend_from_slice(&text[at..at + length]);
                }
                at += length;
            }
        }
    }

    /// The segments of `text` (start, end, the word of the key or 0 for a run of characters between keys), as
    /// OpenCC's maximum-matching segmentation with table `t` cuts it.
    fn segments(&self, t: usize, text: &[char], out: &mut Vec<(usize, usize, u64)>) {
        let (mut at, mut run) = (0, 0);
        while at < text.len() {
            at += self.skip(t, &text[at..]);
            if at == text.len() {
                break;
            }
            if let Some((length, word)) = self.longest(t, &text[at..]) {
                if run < at {
                    out.push((run, at, 0));
                }
                out.push((at, at + length, word));
                at += length;
                run = at;
            } else {
                at += unmatched(&text[at..]);
            }
        }
        if run < at {
            out.push((run, at, 0));
        }
    }
}

impl Building {
    fn insert(&mut self, t: usize, key: &str, value: &str) -> Result<(), String> {
        let mut node = 0u32;
        for (k, c) in key.chars().enumerate() {
            self.bits[node as usize] |= 1 << (LONGER as usize + t); // the root's bits are never read
            let next = self.bits.len();
            node = *self.edges.entry(edge(node, c)).or_insert_with(|| next as u32);
            if node as usize == next {
                u32::try_from(next).map_err(|_| "too many keys")?;
                self.bits.push(0);
                self.values.push(Vec::new());
                if k == 0 {
                    self.depth1.insert(node, c);
                }
            }
        }
        let bit = 1 << (VALUE as usize + t);
        if self.bits[node as usize] & bit != 0 {
            return Err(format!("the key {key:?} twice"));
        }
        self.bits[node as usize] |= bit;
        let start = u32::try_from(self.pool.len()).map_err(|_| "values too long")?;
        self.pool.extend(value.chars());
        let length = u32::try_from(self.pool.len()).map_err(|_| "values too long")? - start;
        self.values[node as usize].push((t, start, length));
        Ok(())
    }
}

#[inline]
fn edge(node: u32, c: char) -> u64 {
    (u64::from(node) << 32) | u64::from(c as u32)
}

/// How many characters at the start of `text` (where no key starts) OpenCC copies as they are: a whole
/// ideographic description sequence, else one character.
#[inline]
fn unmatched(text: &[char]) -> usize {
    if arity(text[0]) == 0 {
        return 1;
    }
    let mut code_points = 0;
    match description(text, 16, &mut code_points) {
        Parse::Complete(length) => length,
        Parse::Incomplete | Parse::Invalid => 1,
    }
}

/// The operands of an ideographic description character (U+2FF0..U+2FFF), 0 for any other character.
#[inline]
fn arity(c: char) -> usize {
    arity_of(c as u32)
}

#[inline]
fn arity_of(c: u32) -> usize {
    match c {
        0x2FF2 | 0x2FF3 => 3,
        0x2FFE | 0x2FFF => 1,
        0x2FF0..=0x2FFD => 2,
        _ => 0,
    }
}

enum Parse {
    Complete(usize),
    Incomplete,
    Invalid,
}

/// The ideographic description sequence at the start of `text`, as OpenCC's
/// `ConsumeIdeographicDescriptionSequence` parses it: at most 16 deep and 64 characters.
fn description(text: &[char], depth_left: usize, code_points: &mut usize) -> Parse {
    let Some(&c) = text.first() else { return Parse::Incomplete };
    if depth_left == 0 || *code_points >= 64 {
        return Parse::Invalid;
    }
    *code_points += 1;
    let mut at = 1;
    for _ in 0..arity(c) {
        if at >= text.len() {
            return Parse::Incomplete;
        }
        match description(&text[at..], depth_left - 1, code_points) {
            Parse::Complete(length) => at += length,
            other => return other,
        }
    }
    Parse::Complete(at)
}

/// One config: its segmentation table (if any) and its conversion chain, as table numbers of `Script::trie`.
pub struct Config {
    pub segmentation: Option<usize>,
    pub chain: Vec<usize>,
}

/// The configs `to_simplified` runs (t2s, s2twp, tw2sp, without their normalization) over their tables.
pub struct Script {
    pub trie: Trie,
    pub configs: Vec<Config>,
}

/// Buffers reused from text to text.
#[derive(Default)]
pub struct Scratch {
    segments: Vec<(usize, usize, u64)>,
    a: Vec<char>,
    b: Vec<char>,
}

impl Script {
    /// `text` converted by config `config` (each piece between NULs on its own), appended to `out`.
    pub fn convert(&self, config: usize, text: &[char], out: &mut Vec<char>, scratch: &mut Scratch) {
        let mut first = true;
        for piece in text.split(|&c| c == '\0') {
            if !first {
                out.push('\0');
            }
            first = false;
            self.convert_piece(&self.configs[config], piece, out, scratch);
        }
    }

    fn convert_piece(&self, config: &Config, text: &[char], out: &mut Vec<char>, scratch: &mut Scratch) {
        scratch.segments.clear();
        match config.segmentation {
            Some(t) => self.trie.segments(t, text, &mut scratch.segments),
            None if !text.is_empty() => scratch.segments.push((0, text.len(), 0)),
            None => {}
        }
        let Scratch { segments, a, b } = scratch;
        let (&head, rest) = config.chain.split_first().expect("a chain of one table or more");
        let within = config.segmentation.is_some_and(|s| self.trie.within(s, head));
        let value = 1u64 << (VALUE as usize + head);
        for &(start, end, word) in segments.iter() {
            let segment = &text[start..end];
            // The first table converts the segment (into `out` when it is the only one): a key of the
            // segmentation is the segment whole, which that table converts at once if it has the key too.
            let into = if rest.is_empty() {
                &mut *out
            } else {
                a.clear();
                &mut *a
            };
            if word & value != 0 {
                self.trie.push_value(head, word, into);
            } else if word == 0 && within {
                self.trie.convert_characters(head, segment, into);
            } else {
                self.trie.convert(head, segment, into);
            }
            let Some((&last, middle)) = rest.split_last() else { continue };
            for &t in middle {
                b.clear();
                self.trie.convert(t, a, b);
                std::mem::swap(a, b);
            }
            self.trie.convert(last, a, out);
        }
    }

    /// Each text through t2s (where `t2s[i]`), then s2twp and tw2sp (configs 0, 1, 2); text `i` is
    /// `chars[ends[i - 1]..ends[i]]`, and so is its conversion in the characters returned with their ends.
    pub fn to_simplified(&self, chars: &[char], ends: &[usize], t2s: &[bool]) -> (Vec<char>, Vec<usize>) {
        let mut scratch = Scratch::default();
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut out = Vec::with_capacity(chars.len() + chars.len() / 8);
        let mut out_ends = Vec::with_capacity(ends.len());
        let mut start = 0;
        for (&end, &with_t2s) in ends.iter().zip(t2s) {
            let mut text = &chars[start..end];
            start = end;
            for config in [0, 1, 2] {
                if config == 0 && !with_t2s {
                    continue;
                }
                if config == 2 {
                    self.convert(config, text, &mut out, &mut scratch);
                    break;
                }
                y.clear();
                self.convert(config, text, &mut y, &mut scratch);
                std::mem::swap(&mut x, &mut y);
                text = &x;
            }
            out_ends.push(out.len());
        }
        (out, out_ends)
    }
}
