//! A batch of unified texts to fingerprints and levels: what `Fingerprinter.fingerprint_many` and
//! `PartPrinter._items_many` compute after unification, on owned buffers.

use std::sync::Mutex;

use jieba_rs::Jieba;
use rustc_hash::FxHashSet;

use crate::chars::Chars;
use crate::keys::{StoredLevels, members, stored};
use crate::lexicon::{Lexicon, Tables};
use crate::parts::{PartParams, parts, token_slice};
use crate::sentences::{each_unit, paragraphs, sentences};
use crate::winnow::Winnower;

pub struct Pipeline {
    pub chars: Chars,
    pub tables: Tables,
    pub jieba: &'static Jieba,
    pub lexicon: Mutex<Lexicon>,
}

/// What the levels of a batch are cut by (`levels.PartParams` and the sentences' `min_units`).
pub struct LevelParams {
    pub parts: PartParams,
    pub with_parts: bool,
    pub key_units: usize,
    pub key_window: usize,
    pub sentence_units: usize,
    /// Whether the documents get a fingerprint of their own (`_items_many`) or only their parts (`levels_many`).
    pub with_document: bool,
    /// A part over this many bytes gets no fingerprint, as a document over `max_bytes` gets none
    /// (`levels_many` fingerprints its parts as documents).
    pub part_max_bytes: Option<usize>,
}

/// What the stores write of each document's keys (`simdup_es.keys.StoredKeys`): the part fingerprints and
/// keys a store keeps, and (with `version_json`) the members of the Elasticsearch document's `simdup` object.
pub struct Encode {
    /// Most part fingerprints a store keeps of a document (`MAX_STORED_PARTS`).
    pub max_parts: usize,
    /// The fingerprints' version as a JSON string; `None`: no JSON members.
    pub version_json: Option<String>,
    /// Whether the members hold the five-block terms (the `terms` layout).
    pub five_terms: bool,
}

/// The stored keys of a batch, flat as `Levels` (`None` members where a document has no fingerprint).
#[derive(Default)]
pub struct Encoded {
    pub members: Vec<Option<String>>,
    pub cuts: Vec<usize>,
    pub parts: Vec<u64>,
    pub part_first: Vec<usize>,
    pub keys: Vec<u64>,
    pub key_first: Vec<usize>,
}

/// The levels of a batch, flat: document `i`'s rows of each column run from `*_first[i]` to `*_first[i + 1]`.
#[derive(Default)]
pub struct Levels {
    pub fingerprints: Vec<Option<u64>>,
    /// Per sentence: start, end, units (`SentenceTable.columns`).
    pub sentences: Vec<i64>,
    pub sentence_first: Vec<i64>,
    pub units: Vec<usize>,
    /// Per part: first, stop, start, end, units.
    pub parts: Vec<u64>,
    pub part_first: Vec<usize>,
    pub part_fingerprints: Vec<Option<u64>>,
    /// Per key: hash, unit position.
    pub keys: Vec<u64>,
    pub key_first: Vec<usize>,
}

/// A text's content rows: `rows[offsets[i]..offsets[i + 1]]` are token `i`'s; `starts()`: where each
/// token starts, then the text's length (`None` if the tokens do not spell the text). `u32`: a text
/// has fewer than 2**32 characters (the server takes at most a few MB), and a 10 MB text has some
/// two million tokens.
#[derive(Default)]
struct Segmented {
    rows: Vec<u32>,
    offsets: Vec<u32>,
    starts: Vec<u32>,
    spelled: bool,
}

impl Segmented {
    fn starts(&self) -> Option<&[u32]> {
        self.spelled.then_some(&self.starts[..])
    }
}

/// The most unit starts kept for the next text (a long text's are let go before it is segmented: 4 bytes a unit).
const REUSED_STARTS: usize = 1 << 16;

/// Pieces of a text of about `CHUNK_BYTES` that jieba-rs cuts into the same tokens apart as together.
const CHUNK_BYTES: usize = 1 << 16;

/// jieba-rs's `RE_HAN_DEFAULT` class (jieba-rs 0.11 `is_han_default`, private there): the characters
/// of the runs its `cut` segments as a whole. Every other character is a token of its own (but a
/// `\r` with the `\n` after it).
fn han_default(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || matches!(c, '+' | '#' | '&' | '.' | '_' | '%' | '-');
    }
    matches!(c,
        '\u{4E00}'..='\u{9FFF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2A6DF}'
        | '\u{2A700}'..='\u{2B73F}'
        | '\u{2B740}'..='\u{2B81F}'
        | '\u{2B820}'..='\u{2CEAF}'
        | '\u{2CEB0}'..='\u{2EBEF}'
        | '\u{2F800}'..='\u{2FA1F}'
    )
}

/// `text` in pieces of about `CHUNK_BYTES` (more where no cut fits), each cut right after a
/// character jieba-rs makes a token of its own (not a `\r`): the tokens of the pieces, one after
/// another, are those of the whole text, and only a piece's tokens are held at once (48 bytes a
/// token: 100 MB for a 10 MB text cut whole).
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len();
        if rest.len() > CHUNK_BYTES {
            let mut from = CHUNK_BYTES;
            while !rest.is_char_boundary(from) {
                from += 1;
            }
            if let Some((at, c)) = rest[from..].char_indices().find(|&(_, c)| !han_default(c) && c != '\r') {
                end = from + at + c.len_utf8();
            }
        }
        let (piece, after) = rest.split_at(end);
        rest = after;
        Some(piece)
    })
}

impl Pipeline {
    /// jieba-rs's tokens of `text` (with its HMM), a piece at a time (`chunks`): each one's word and length in characters.
    fn each_token(&self, text: &str, mut f: impl FnMut(&str, usize)) {
        for piece in chunks(text) {
            for token in self.jieba.cut(piece, true) {
                f(token.word, token.end - token.start);
            }
        }
    }

    /// `text` segmented into `out` (its buffers reused from one text to the next).
    fn segment(&self, lexicon: &mut Lexicon, text: &str, n_chars: usize, out: &mut Segmented) {
        let Segmented { rows, offsets, starts, .. } = out;
        rows.clear();
        offsets.clear();
        starts.clear();
        let mut at = 0;
        self.each_token(text, |word, chars| {
            offsets.push(rows.len() as u32);
            starts.push(at as u32);
            at += chars;
            lexicon.push_rows(word, &self.tables, &self.chars, self.jieba, rows);
        });
        offsets.push(rows.len() as u32);
        starts.push(at as u32);
        out.spelled = at == n_chars;
    }

    /// The rows of the content words of `text`, as `segment` counts them.
    fn words(&self, lexicon: &mut Lexicon, text: &str) -> Vec<u32> {
        let mut rows = Vec::new();
        self.each_token(text, |word, _| lexicon.push_rows(word, &self.tables, &self.chars, self.jieba, &mut rows));
        rows
    }

    fn title_rows(&self, lexicon: &mut Lexicon, title: &str) -> FxHashSet<u32> {
        if title.is_empty() { FxHashSet::default() } else { self.words(lexicon, title).into_iter().collect() }
    }

    /// The SimHash of each text with its title (`None`: no content word).
    pub fn fingerprints(&self, texts: &[&str], titles: &[&str]) -> Vec<Option<u64>> {
        let mut lexicon = self.lexicon.lock().unwrap_or_else(|e| e.into_inner());
        lexicon.trim();
        let params = &self.tables.params;
        texts
            .iter()
            .zip(titles)
            .map(|(text, title)| {
                let rows = self.words(&mut lexicon, text);
                let title = self.title_rows(&mut lexicon, title);
                lexicon.simhash(&rows, params, &title)
            })
            .collect()
    }

    /// The hash and weight of each distinct content word of each text with its title (`fingerprints`' weights).
    pub fn weights(&self, texts: &[&str], titles: &[&str]) -> Vec<Vec<(u64, f64)>> {
        let mut lexicon = self.lexicon.lock().unwrap_or_else(|e| e.into_inner());
        texts
            .iter()
            .zip(titles)
            .map(|(text, title)| {
                let rows = self.words(&mut lexicon, text);
                let title = self.title_rows(&mut lexicon, title);
                lexicon.weights(&rows, &self.tables.params, &title)
            })
            .collect()
    }

    /// Every level of each text: its sentences, keys and parts, the fingerprints of its parts and
    /// (`with_document`) its own.
    pub fn levels(&self, texts: &[&str], titles: &[&str], lp: &LevelParams) -> Levels {
        let mut lexicon = self.lexicon.lock().unwrap_or_else(|e| e.into_inner());
        lexicon.trim();
        let mut out = Levels::default();
        out.sentence_first.push(0);
        out.part_first.push(0);
        out.key_first.push(0);
        let mut folded = String::new();
        let no_title = FxHashSet::default();
        // Buffers reused from one text to the next, rather than grown anew for each.
        let (mut chars, mut starts, mut segmented) = (Vec::<char>::new(), Vec::<u32>::new(), Segmented::default());
        for (text, title) in texts.iter().zip(titles) {
            assert!(text.len() < u32::MAX as usize, "a text of 2**32 bytes or more");
            chars.clear();
            chars.extend(text.chars());
            // The units' codes are winnowed as they come; only their starts are kept (4 bytes a unit).
            let cut = {
                starts.clear();
                let mut keys = Winnower::new(lp.key_units, lp.key_window, &mut out.keys);
                each_unit(&self.chars, &chars, &mut folded, |start, code, _| {
                    starts.push(start as u32);
                    keys.push(code);
                });
                keys.finish();
                let cut = sentences(&self.chars, &chars, &starts, lp.sentence_units);
                if starts.capacity() > REUSED_STARTS {
                    starts = Vec::new(); // a long text's, not held while it is segmented
                }
                cut
            };
            out.key_first.push(out.keys.len() / 2);
            out.sentences.extend(cut.iter().flat_map(|s| [s.start as i64, s.end as i64, s.units as i64]));
            out.sentence_first.push(out.sentences.len() as i64 / 3);
            out.units.push(cut.iter().map(|s| s.units).sum());
            let parts =
                if lp.with_parts && !cut.is_empty() { parts(&cut, &paragraphs(&chars, &cut), &lp.parts) } else { Vec::new() };
            if !lp.with_document && parts.is_empty() {
                out.fingerprints.push(None);
                out.part_first.push(out.part_fingerprints.len());
                continue;
            }
            self.segment(&mut lexicon, text, chars.len(), &mut segmented);
            let title = self.title_rows(&mut lexicon, title);
            out.fingerprints.push(if lp.with_document {
                lexicon.simhash(&segmented.rows, &self.tables.params, &title)
            } else {
                None
            });
            let mut bytes_at: Vec<u32> = Vec::new(); // each character's byte offset, made if a part is segmented alone
            for part in &parts {
                out.parts.extend([part.first, part.stop, part.start, part.end, part.units].map(|n| n as u64));
                let value = match token_slice(&self.chars, &chars, segmented.starts(), part) {
                    Some((i, j)) => lexicon.simhash(
                        &segmented.rows[segmented.offsets[i] as usize..segmented.offsets[j] as usize],
                        &self.tables.params,
                        &no_title,
                    ),
                    None => {
                        if bytes_at.is_empty() {
                            bytes_at = text.char_indices().map(|(b, _)| b as u32).chain([text.len() as u32]).collect();
                        }
                        let piece = &text[bytes_at[part.start] as usize..bytes_at[part.end] as usize];
                        let rows = self.words(&mut lexicon, piece);
                        lexicon.simhash(&rows, &self.tables.params, &no_title)
                    }
                };
                out.part_fingerprints.push(value.filter(|_| !too_large(&chars[part.start..part.end], lp.part_max_bytes)));
            }
            out.part_first.push(out.part_fingerprints.len());
        }
        out
    }
}

impl Levels {
    /// What the stores write of each document's fingerprint and levels.
    pub fn encode(&self, how: &Encode) -> Encoded {
        let mut out = Encoded { part_first: vec![0], key_first: vec![0], ..Encoded::default() };
        for (i, fingerprint) in self.fingerprints.iter().enumerate() {
            let part_fps = &self.part_fingerprints[self.part_first[i]..self.part_first[i + 1]];
            let (parts, cut, keys) =
                stored(part_fps, &self.keys[2 * self.key_first[i]..2 * self.key_first[i + 1]], how.max_parts);
            out.members.push(match (fingerprint, &how.version_json) {
                (Some(fp), Some(version)) => {
                    let mut json = String::with_capacity(200 + 19 * keys.len() + 120 * parts.len());
                    let levels = StoredLevels { units: self.units[i], cut, parts: &parts, keys: &keys };
                    members(&mut json, *fp, version, how.five_terms, Some(&levels));
                    Some(json)
                }
                _ => None,
            });
            out.cuts.push(cut);
            out.parts.extend(parts);
            out.part_first.push(out.parts.len());
            out.keys.extend(keys);
            out.key_first.push(out.keys.len());
        }
        out
    }
}

/// `Fingerprinter.too_large` of a part fingerprinted as a document: over `limit` bytes in UTF-8,
/// tested as the Python path tests it (its characters times 3 first).
fn too_large(part: &[char], limit: Option<usize>) -> bool {
    limit.is_some_and(|limit| part.len() * 3 > limit && part.iter().map(|c| c.len_utf8()).sum::<usize>() > limit)
}
