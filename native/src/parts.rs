//! Parts of a text (`simdup_es.levels.parts_of_columns`, `_windows`) and which of them are slices of
//! the text's tokens (`simdup_es.parts.part_spans`).

use crate::chars::Chars;
use crate::sentences::Sentence;

/// `levels.PartParams`, what cutting needs of it.
pub struct PartParams {
    pub min_units: usize,
    pub window_units: usize,
    pub max_units: usize,
    pub overlap: f64,
}

/// Sentences `first .. stop` of a text: characters `start .. end`, `units` units.
#[derive(Clone, Copy, Debug)]
pub struct Part {
    pub first: usize,
    pub stop: usize,
    pub start: usize,
    pub end: usize,
    pub units: usize,
}

/// The parts of a text cut into `sentences` and `paragraphs` (`parts_of_columns`): short paragraphs
/// merged into runs, runs longer than `max_units` cut into overlapping windows of whole sentences.
pub fn parts(sentences: &[Sentence], paragraphs: &[(usize, usize)], params: &PartParams) -> Vec<Part> {
    let mut before = Vec::with_capacity(sentences.len() + 1); // units before each sentence
    before.push(0);
    for s in sentences {
        before.push(before[before.len() - 1] + s.units);
    }
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut cur: Option<(usize, usize)> = None;
    let mut got = 0;
    for &(first, stop) in paragraphs {
        let n = before[stop] - before[first];
        match cur {
            None => (cur, got) = (Some((first, stop)), n),
            Some((a, _)) if got < params.min_units || (n < params.min_units && got + n <= params.max_units) => {
                (cur, got) = (Some((a, stop)), got + n)
            }
            Some(run) => {
                runs.push(run);
                (cur, got) = (Some((first, stop)), n);
            }
        }
    }
    if let Some(run) = cur {
        match runs.last_mut() {
            Some(last) if got < params.min_units => last.1 = run.1, // a short tail joins the run before it
            _ => runs.push(run),
        }
    }
    let mut out = Vec::new();
    for (first, stop) in runs {
        let spans = if before[stop] - before[first] <= params.max_units {
            vec![(first, stop)]
        } else {
            windows(sentences, first, stop, params)
        };
        for (a, b) in spans {
            let (start, end) = (sentences[a].start, sentences[b - 1].end);
            out.push(Part { first: a, stop: b, start, end, units: before[b] - before[a] });
        }
    }
    out
}

/// `levels._windows`: windows of whole sentences of about `window_units` over `first .. stop`, overlapping.
fn windows(sentences: &[Sentence], first: usize, stop: usize, params: &PartParams) -> Vec<(usize, usize)> {
    let step_units = ((params.window_units as f64 * (1.0 - params.overlap)).round_ties_even() as usize).max(1);
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut i = first;
    loop {
        let (mut j, mut got) = (i, 0);
        while j < stop && (got < params.window_units || j == i) {
            got += sentences[j].units;
            j += 1;
        }
        // A last window shorter than half a window is folded into the previous one.
        if j == stop
            && got < params.window_units / 2
            && let Some(last) = out.last_mut()
        {
            last.1 = stop;
            break;
        }
        out.push((i, j));
        if j == stop {
            break;
        }
        // Advance by about step_units, at least one sentence, never past this window's end.
        let (mut next, mut moved) = (i, 0);
        while next + 1 < j && moved < step_units {
            moved += sentences[next].units;
            next += 1;
        }
        i = next.max(i + 1);
    }
    out
}

/// `parts._JOINS`: a character jieba may segment together with its neighbours.
fn joins(chars: &Chars, c: char) -> bool {
    chars.alnum(c)
        || matches!(c, '_' | '+' | '#' | '&' | '.' | '%' | '-')
        || matches!(c as u32, 0x3400..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x10FFFF)
}

/// `parts._apart`: whether jieba never joins the characters on either side of offset `at` into one run.
fn apart(chars: &Chars, text: &[char], at: usize) -> bool {
    at == 0 || at == text.len() || !joins(chars, text[at - 1]) || !joins(chars, text[at])
}

/// `part_spans` of one part: `Some((i, j))` where its tokens are tokens `i .. j` of the text's
/// (`token_starts`: where each token starts, then the text's length; `None`: the tokens do not
/// spell the text), else `None`: the part is segmented on its own.
pub fn token_slice(chars: &Chars, text: &[char], token_starts: Option<&[u32]>, part: &Part) -> Option<(usize, usize)> {
    let starts = token_starts?;
    let i = starts.partition_point(|&s| (s as usize) < part.start);
    let j = starts.partition_point(|&s| (s as usize) < part.end);
    let at = |k: usize| starts.get(k).map(|&s| s as usize);
    let on_tokens = at(i) == Some(part.start) && at(j) == Some(part.end);
    (on_tokens && apart(chars, text, part.start) && apart(chars, text, part.end)).then_some((i, j))
}
