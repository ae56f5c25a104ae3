//! A batch of unified texts to fingerprints and levels: what `Fingerprinter.fingerprint_many` and
//! `PartPrinter._items_many` compute after unification, on owned buffers.

use std::sync::Mutex;

use jieba_rs::Jieba;
use rustc_hash::FxHashSet;

use crate::chars::Chars;
use crate::lexicon::{Lexicon, Tables};
use crate::parts::{PartParams, parts, token_slice};
use crate::sentences::{paragraphs, sentences, units};
use crate::winnow::{gram_hashes, winnow};

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

/// A text's content rows: `rows[offsets[i]..offsets[i + 1]]` are token `i`'s; `starts`: where each
/// token starts, then the text's length (`None` if the tokens do not spell the text).
struct Segmented {
    rows: Vec<u32>,
    offsets: Vec<usize>,
    starts: Option<Vec<usize>>,
}

impl Pipeline {
    fn segment(&self, lexicon: &mut Lexicon, text: &str, n_chars: usize) -> Segmented {
        let tokens = self.jieba.cut(text, true);
        let mut rows = Vec::with_capacity(tokens.len());
        let mut offsets = Vec::with_capacity(tokens.len() + 1);
        let mut starts = Vec::with_capacity(tokens.len() + 1);
        let mut at = 0;
        for token in &tokens {
            offsets.push(rows.len());
            starts.push(at);
            at += token.end - token.start;
            lexicon.push_rows(token.word, &self.tables, &self.chars, self.jieba, &mut rows);
        }
        offsets.push(rows.len());
        starts.push(at);
        Segmented { rows, offsets, starts: (at == n_chars).then_some(starts) }
    }

    /// The rows of the content words of `text`, as `segment` counts them.
    fn words(&self, lexicon: &mut Lexicon, text: &str) -> Vec<u32> {
        let mut rows = Vec::new();
        for token in self.jieba.cut(text, true) {
            lexicon.push_rows(token.word, &self.tables, &self.chars, self.jieba, &mut rows);
        }
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
        for (text, title) in texts.iter().zip(titles) {
            let chars: Vec<char> = text.chars().collect();
            let found = units(&self.chars, &chars, &mut folded);
            winnow(&gram_hashes(&found.codes, lp.key_units), lp.key_window, &mut out.keys);
            out.key_first.push(out.keys.len() / 2);
            let cut = sentences(&self.chars, &chars, &found.starts, lp.sentence_units);
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
            let segmented = self.segment(&mut lexicon, text, chars.len());
            let title = self.title_rows(&mut lexicon, title);
            out.fingerprints.push(if lp.with_document {
                lexicon.simhash(&segmented.rows, &self.tables.params, &title)
            } else {
                None
            });
            let mut bytes_at: Vec<usize> = Vec::new(); // each character's byte offset, made if a part is segmented alone
            for part in &parts {
                out.parts.extend([part.first, part.stop, part.start, part.end, part.units].map(|n| n as u64));
                let value = match token_slice(&self.chars, &chars, segmented.starts.as_deref(), part) {
                    Some((i, j)) => lexicon.simhash(
                        &segmented.rows[segmented.offsets[i]..segmented.offsets[j]],
                        &self.tables.params,
                        &no_title,
                    ),
                    None => {
                        if bytes_at.is_empty() {
                            bytes_at = text.char_indices().map(|(b, _)| b).chain([text.len()]).collect();
                        }
                        let piece = &text[bytes_at[part.start]..bytes_at[part.end]];
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

/// `Fingerprinter.too_large` of a part fingerprinted as a document: over `limit` bytes in UTF-8,
/// tested as the Python path tests it (its characters times 3 first).
fn too_large(part: &[char], limit: Option<usize>) -> bool {
    limit.is_some_and(|limit| part.len() * 3 > limit && part.iter().map(|c| c.len_utf8()).sum::<usize>() > limit)
}
