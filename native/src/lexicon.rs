//! Tokens to weights to SimHash: `simdup_es.tokens.Lexicon`, `weigh_batch` and `simdup_es.simhash`.
//!
//! `weight(w) = TF(w) * IDF(w) * (1 + POS(w) + LEN(w) + MARK(w) + TITLE(w))`, with the same
//! floating-point operations in the same order as the Python path, then made integers (the
//! heaviest word of a document weighs 2**24) before they are summed into the 64 bits: the same
//! bits whatever the order of the words.

use jieba_rs::Jieba;
use rustc_hash::{FxHashMap, FxHashSet};
use xxhash_rust::xxh3::xxh3_64;

use crate::chars::Chars;

const NOUN: usize = 0;
const OTHER: usize = 2;
const QUANT: f64 = (1u64 << 24) as f64;
/// The cache of words is cleared beyond this many (`Lexicon.MAX_ENTRIES`): a bound on memory for
/// endless streams of new tokens.
const MAX_ENTRIES: usize = 200_000;

/// `FingerprintParams`, what weighing needs of it (the boosts as floats).
pub struct Params {
    pub max_count: u64,
    /// `POS(w)` of nouns, verbs, other content words and function words.
    pub pos_boosts: [f64; 4],
    pub length_boost: f64,
    pub mark_boost: f64,
    pub title_boost: f64,
}

/// Values of words keyed by their 64-bit hash (`tokens.HashTable`): `keys` ascending.
pub struct HashTable<T> {
    pub keys: Vec<u64>,
    pub values: Vec<T>,
}

impl<T: Copy> HashTable<T> {
    fn get(&self, hash: u64) -> Option<T> {
        self.keys.binary_search(&hash).ok().map(|i| self.values[i])
    }
}

/// What weights come from: the tables and words a fingerprinter was built with.
pub struct Tables {
    pub params: Params,
    pub stop_words: FxHashSet<Box<str>>,
    pub marked_words: FxHashSet<Box<str>>,
    /// Part-of-speech class (0 noun, 1 verb, 2 other, 3 function word) of the dictionary's words.
    pub pos: HashTable<i64>,
    pub idf: HashTable<f64>,
    pub idf_default: f64,
}

/// What a document does not change about a content word's weight.
struct Row {
    idf: f64,
    /// `1 + POS(w) + MARK(w)`.
    boost: f64,
    /// Its length in characters.
    len: usize,
    hash: u64,
}

/// A cache entry that is no row: the token is no content word (punctuation, white space or a stop word).
const SKIP: u32 = u32::MAX;
/// A cache entry with this bit is `PIECES | i`: a Latin compound jieba keeps whole (`a.out`) and Python jieba
/// cuts (`a . out`), whose pieces' rows are `pieces[i]` (`SKIP`: a piece that is no content word).
const PIECES: u32 = 1 << 31;

/// The rows of the words seen so far (`tokens.Lexicon`): a token seen before costs one lookup.
#[derive(Default)]
pub struct Lexicon {
    /// Each token seen, by its 64-bit hash, as the dictionary's tables key words (a string a word cost some
    /// 60 bytes more: a long text's new words grew the cache by megabytes). Two words of one hash would share
    /// an entry; among the cache's 200,000 words at most, that is about one chance in 10^9.
    cache: FxHashMap<u64, u32>,
    pieces: Vec<Box<[u32]>>,
    rows: Vec<Row>,
    count: Vec<u32>, // scratch, by row: occurrences in the group being weighed
    touched: Vec<u32>,
    weights: Vec<f64>,
}

impl Lexicon {
    /// Called before each batch: the cache stays bounded.
    pub fn trim(&mut self) {
        if self.cache.len() > MAX_ENTRIES {
            *self = Self::default();
        }
    }

    /// The content rows of `token` appended to `out` (none, one, or a compound's pieces').
    pub fn push_rows(&mut self, token: &str, t: &Tables, chars: &Chars, jieba: &Jieba, out: &mut Vec<u32>) {
        let hash = xxh3_64(token.as_bytes());
        let entry = match self.cache.get(&hash) {
            Some(&entry) => entry,
            None => {
                let entry = match compound_pieces(token, jieba) {
                    Some(pieces) => {
                        let rows = pieces.iter().map(|p| self.word_row(p, t, chars)).collect();
                        self.pieces.push(rows);
                        PIECES | (self.pieces.len() - 1) as u32
                    }
                    None => self.word_row(token, t, chars),
                };
                self.cache.insert(hash, entry);
                entry
            }
        };
        match entry {
            SKIP => {}
            e if e & PIECES != 0 => out.extend(self.pieces[(e & !PIECES) as usize].iter().copied().filter(|&r| r != SKIP)),
            row => out.push(row),
        }
    }

    /// The row of a token that is no compound, added if new; `SKIP` where it is no content word.
    fn word_row(&mut self, word: &str, t: &Tables, chars: &Chars) -> u32 {
        let hash = xxh3_64(word.as_bytes());
        if let Some(&entry) = self.cache.get(&hash).filter(|&&e| e & PIECES == 0) {
            return entry; // a row, or SKIP
        }
        if t.stop_words.contains(word) || !word.chars().any(|c| chars.alnum(c)) {
            self.cache.insert(hash, SKIP);
            return SKIP;
        }
        // Words jieba does not know are mostly names and terms its HMM found (nouns) or Latin-script
        // words (other content words).
        let pos = t.pos.get(hash).map_or(if word.is_ascii() { OTHER } else { NOUN }, |p| p as usize);
        let mark = if t.marked_words.contains(word) { t.params.mark_boost } else { 0.0 };
        let row = self.rows.len() as u32;
        self.rows.push(Row {
            idf: t.idf.get(hash).unwrap_or(t.idf_default),
            boost: (1.0 + t.params.pos_boosts[pos]) + mark,
            len: word.chars().count(),
            hash,
        });
        self.cache.insert(hash, row);
        row
    }

    /// The weights of a document or part whose content words are `rows` (with repeats), in
    /// `self.weights`, one for each row of `self.touched`; false when there are none. `title`: the
    /// rows of its title's words (a document's; parts have none). `release` clears them.
    fn weigh(&mut self, rows: &[u32], params: &Params, title: &FxHashSet<u32>) -> bool {
        if self.count.len() < self.rows.len() {
            self.count.resize(self.rows.len(), 0);
        }
        for &r in rows {
            let c = &mut self.count[r as usize];
            if *c == 0 {
                self.touched.push(r);
            }
            *c += 1;
        }
        let capped = |c: u32| (c as u64).min(params.max_count);
        let total = self.touched.iter().map(|&r| capped(self.count[r as usize])).sum::<u64>() as f64;
        let lengths = self.touched.iter().map(|&r| self.rows[r as usize].len);
        let (len_min, len_max) = lengths.fold((usize::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
        let len_span = len_max.saturating_sub(len_min);
        let len_scale = if len_span > 0 { params.length_boost / len_span as f64 } else { 0.0 };
        // (c / total) * IDF * boost, with boost = (1 + POS + MARK) + LEN + TITLE: the order of weigh_batch.
        self.weights.clear();
        for &r in &self.touched {
            let row = &self.rows[r as usize];
            let mut boost = row.boost + (row.len - len_min) as f64 * len_scale;
            if title.contains(&r) {
                boost += params.title_boost;
            }
            self.weights.push(capped(self.count[r as usize]) as f64 / total * row.idf * boost);
        }
        !self.touched.is_empty()
    }

    fn release(&mut self) {
        for &r in &self.touched {
            self.count[r as usize] = 0;
        }
        self.touched.clear();
    }

    /// The SimHash of a document or part whose content words are `rows`, `None` when there are none
    /// (see `weigh`): the weights made integers, the heaviest 2**24, and summed bit by bit.
    pub fn simhash(&mut self, rows: &[u32], params: &Params, title: &FxHashSet<u32>) -> Option<u64> {
        if !self.weigh(rows, params, title) {
            return None;
        }
        let peak = self.weights.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let peak = if peak <= 0.0 { 1.0 } else { peak };
        let mut sums = [0i64; 64];
        for (&r, &weight) in self.touched.iter().zip(&self.weights) {
            let q = (weight / peak * QUANT).round_ties_even() as i64;
            let hash = self.rows[r as usize].hash;
            for (bit, sum) in sums.iter_mut().enumerate() {
                *sum += if hash >> bit & 1 == 1 { q } else { -q };
            }
        }
        self.release();
        Some(sums.iter().enumerate().fold(0u64, |fp, (bit, &s)| fp | ((s > 0) as u64) << bit))
    }

    /// The hash and weight of each distinct content word of `rows` (see `weigh`), for the tests.
    pub fn weights(&mut self, rows: &[u32], params: &Params, title: &FxHashSet<u32>) -> Vec<(u64, f64)> {
        self.weigh(rows, params, title);
        let out = self.touched.iter().zip(&self.weights).map(|(&r, &w)| (self.rows[r as usize].hash, w)).collect();
        self.release();
        out
    }
}

/// `tokens._pieces` of a token jieba-rs keeps whole where Python jieba cuts it: letters or digits
/// next to `_+#&.%-` (`a.out`, `mh-alias`), not a dictionary word, in more than one piece of
/// Python jieba's `re_skip` (`[a-zA-Z0-9]+(?:\.\d+)?%?`) and the runs between them.
fn compound_pieces(token: &str, jieba: &Jieba) -> Option<Vec<String>> {
    let b = token.as_bytes();
    let special = |c: u8| matches!(c, b'_' | b'+' | b'#' | b'&' | b'.' | b'%' | b'-');
    if !b.iter().all(|&c| c.is_ascii_alphanumeric() || special(c)) {
        return None;
    }
    let glued =
        b.windows(2).any(|p| (p[0].is_ascii_alphanumeric() && special(p[1])) || (special(p[0]) && p[1].is_ascii_alphanumeric()));
    if !glued {
        return None;
    }
    let mut pieces = Vec::new();
    let (mut i, mut other) = (0, 0); // other: where the run between matches starts
    while i < b.len() {
        if !b[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            i += 1;
        }
        if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            i += 2;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i < b.len() && b[i] == b'%' {
            i += 1;
        }
        if start > other {
            pieces.push(token[other..start].to_string());
        }
        pieces.push(token[start..i].to_string());
        other = i;
    }
    if other < b.len() {
        pieces.push(token[other..].to_string());
    }
    (pieces.len() > 1 && !jieba.has_word(token)).then_some(pieces)
}
