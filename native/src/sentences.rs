//! Units and sentences of a unified text: `simdup_es.sentences` (`units`, `_raw_pieces`, `_merged`,
//! `line_starts`) and the unit codes of `simdup_es.winnow.batch_codes`, a text at a time.
//!
//! Offsets are in characters (code points), as Python's are.

use xxhash_rust::xxh3::xxh3_64;

use crate::chars::{Chars, cjk_unit};

/// A sentence: characters `start .. end` of its text, holding `units` units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sentence {
    pub start: usize,
    pub end: usize,
    pub units: usize,
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn is_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '；' | '!' | '?' | ';' | '…' | '．' | '.')
}

fn is_dot(c: char) -> bool {
    matches!(c, '.' | '．')
}

fn is_closing(c: char) -> bool {
    matches!(c, '”' | '’' | '"' | '\'' | '」' | '』' | '》' | '〉' | '）' | ')' | ']' | '】' | '〕' | '}')
}

/// `sentences.ABBREVIATIONS`: abbreviations whose full stop ends no sentence (case-folded, without the last dot).
const ABBREVIATIONS: [&str; 40] = [
    "e.g", "i.e", "cf", "vs", "al", "approx", "ca", "resp", "eq", "eqs", "fig", "figs", "nos", "vol", "pp", "mr", "mrs", "ms",
    "dr", "prof", "sr", "jr", "st", "eds", "dept", "inc", "ltd", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
];

/// The units of `text` (`sentences.units`: a CJK character, or a Latin word or number whose letters
/// and digits one `'`, `’` or `.` may join), each given to `f` with where it starts and its code
/// (`batch_codes`): a CJK character's code point; a word case-folded, its code point if it is one
/// character, else the XXH3-64 of its UTF-8 (at least 2**21). A word's case-folded text is given too.
pub fn each_unit(chars: &Chars, text: &[char], folded: &mut String, mut f: impl FnMut(usize, u64, Option<&str>)) {
    let n = text.len();
    let mut i = 0;
    while i < n {
        let c = text[i];
        if cjk_unit(c) {
            f(i, c as u64, None);
            i += 1;
        } else if chars.word(c) {
            let start = i;
            i += 1;
            loop {
                while i < n && chars.word(text[i]) {
                    i += 1;
                }
                if i + 1 < n && matches!(text[i], '\'' | '.' | '’') && chars.word(text[i + 1]) {
                    i += 2;
                    continue;
                }
                break;
            }
            folded.clear();
            chars.fold_into(&text[start..i], folded);
            f(start, word_code(folded), Some(folded));
        } else {
            i += 1;
        }
    }
}

/// The code of a case-folded word (`batch_codes`): its code point if it is one character, else the XXH3-64 of
/// its UTF-8 (at least 2**21, past every code point).
pub fn word_code(folded: &str) -> u64 {
    let mut it = folded.chars();
    match (it.next(), it.next()) {
        (Some(one), None) => one as u64,
        _ => xxh3_64(folded.as_bytes()).max(1 << 21),
    }
}

/// `sentences._raw_pieces`: `(start, end, starts_line)` of every piece between boundaries, spaces trimmed.
///
/// A boundary is a run of terminators (with the closing quotes after it; the spaces and one line
/// break after those are skipped) or a line break. A run of dots alone, with no line break after
/// it, is none where a letter or digit follows, nor as a single dot after an abbreviation.
pub fn raw_pieces(chars: &Chars, text: &[char]) -> Vec<(usize, usize, bool)> {
    let n = text.len();
    let mut out = Vec::new();
    let (mut pos, mut start, mut line_start) = (0, 0, true);
    loop {
        let mut p = pos;
        while p < n && !is_break(text[p]) && !is_terminator(text[p]) {
            p += 1;
        }
        let (cut, ends_line);
        if p < n && is_terminator(text[p]) {
            let run_start = p;
            let mut q = p;
            while q < n && is_terminator(text[q]) {
                q += 1;
            }
            let run_end = q;
            while q < n && is_closing(text[q]) {
                q += 1;
            }
            let close_end = q;
            while q < n && chars.space(text[q]) && !is_break(text[q]) {
                q += 1;
            }
            let run_break = q < n && is_break(text[q]);
            pos = q + run_break as usize;
            let dots = text[run_start..run_end].iter().all(|&c| is_dot(c));
            if dots && !run_break && !is_boundary(chars, text, run_start, run_end) {
                continue;
            }
            (cut, ends_line) = (close_end, run_break);
        } else {
            let line_break = p < n;
            (cut, ends_line) = (p, line_break);
            pos = p + line_break as usize;
        }
        let (mut b, mut e) = (start, cut);
        while b < e && chars.space(text[b]) {
            b += 1;
        }
        while e > b && chars.space(text[e - 1]) {
            e -= 1;
        }
        if e > b {
            out.push((b, e, line_start));
        }
        start = pos;
        line_start = ends_line;
        if pos >= n {
            break;
        }
    }
    out
}

/// `sentences._is_boundary`: whether the run of dots `run_start .. run_end` ends a sentence.
fn is_boundary(chars: &Chars, text: &[char], run_start: usize, run_end: usize) -> bool {
    if run_end < text.len() && chars.word(text[run_end]) {
        return false;
    }
    run_end - run_start != 1 || !abbreviation_before(chars, text, run_start)
}

/// `sentences._abbreviation_before`: whether the word before the full stop at `dot` (letters and
/// digits joined by single dots, within 40 characters, a line break right before the dot
/// skipped) is an abbreviation, an initial or an acronym.
fn abbreviation_before(chars: &Chars, text: &[char], dot: usize) -> bool {
    let end = if dot > 0 && text[dot - 1] == '\n' { dot - 1 } else { dot };
    let low = dot.saturating_sub(40);
    let mut b = end;
    while b > low && chars.word(text[b - 1]) {
        b -= 1;
    }
    if b == end {
        return false;
    }
    while b >= low + 2 && text[b - 1] == '.' && chars.word(text[b - 2]) {
        b -= 1;
        while b > low && chars.word(text[b - 1]) {
            b -= 1;
        }
    }
    let mut word = String::new();
    chars.fold_into(&text[b..end], &mut word);
    ABBREVIATIONS.contains(&word.as_str()) || initials(chars, &word)
}

/// `sentences._INITIALS`: single letters joined by single dots (`j`, `u.s`, `p.m`).
fn initials(chars: &Chars, word: &str) -> bool {
    let mut count = 0;
    for (k, c) in word.chars().enumerate() {
        let ok = if k % 2 == 0 { chars.letter(c) } else { c == '.' };
        if !ok {
            return false;
        }
        count = k + 1;
    }
    count % 2 == 1
}

/// `sentences._merged` of the pieces of a text: each sentence ends at a boundary, and a fragment of
/// fewer than `min_units` units joins the sentence before it, or the next one where it starts a
/// line (or the text).
pub fn sentences(chars: &Chars, text: &[char], unit_starts: &[u32], min_units: usize) -> Vec<Sentence> {
    let mut merged: Vec<(usize, usize, usize, usize)> = Vec::new(); // start, end, first unit, stop unit
    let mut pending: Option<(usize, usize, usize, usize)> = None;
    for (start, end, line_start) in raw_pieces(chars, text) {
        let (mut start, mut line_start) = (start, line_start);
        let mut u0 = unit_starts.partition_point(|&s| (s as usize) < start);
        let u1 = unit_starts.partition_point(|&s| (s as usize) < end);
        if let Some(p) = pending.take() {
            (start, u0, line_start) = (p.0, p.2, true);
        }
        if u1 - u0 >= min_units {
            merged.push((start, end, u0, u1));
        } else if line_start || merged.is_empty() {
            pending = Some((start, end, u0, u1));
        } else if let Some(last) = merged.last_mut() {
            (last.1, last.3) = (end, u1);
        }
    }
    if let Some(p) = pending {
        match merged.last_mut() {
            Some(last) => (last.1, last.3) = (p.1, p.3),
            None => merged.push(p),
        }
    }
    if merged.first().is_some_and(|m| m.2 == m.3) {
        merged.clear(); // the whole text is punctuation (only then can a sentence have no unit)
    }
    merged.into_iter().map(|(start, end, u0, u1)| Sentence { start, end, units: u1 - u0 }).collect()
}

/// The paragraphs of a text: `(first, stop)` sentence ranges between line breaks (`"\n"`) that fall
/// between two sentences (`SentenceTable.line_starts`).
pub fn paragraphs(text: &[char], sentences: &[Sentence]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut first = 0;
    for k in 1..sentences.len() {
        if text[sentences[k - 1].end..sentences[k].start].contains(&'\n') {
            out.push((first, k));
            first = k;
        }
    }
    if !sentences.is_empty() {
        out.push((first, sentences.len()));
    }
    out
}
