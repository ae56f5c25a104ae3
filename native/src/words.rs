//! The comparison matrix's word-level check (`simdup_es.compare.word_score`) over the word counts the
//! Python side keeps per sentence (dicts of word to count) and a thesaurus's word-to-groups dict, read
//! in place: a dict lookup per word, no copy of the words.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rustc_hash::FxHashSet;

/// The words of one sentence left without an exact partner in the other, with the counts left over.
fn leftover<'py>(own: &Bound<'py, PyDict>, other: &Bound<'py, PyDict>) -> PyResult<Vec<(Bound<'py, PyAny>, u64)>> {
    let mut out = Vec::new();
    for (word, count) in own.iter() {
        let (mine, theirs) = (count.extract::<u64>()?, other.get_item(&word)?.map_or(Ok(0), |c| c.extract::<u64>())?);
        if mine > theirs {
            out.push((word, mine - theirs));
        }
    }
    Ok(out)
}

/// The group numbers of each word (none for a word the thesaurus lacks).
fn groups(words: &[(Bound<'_, PyAny>, u64)], ids: &Bound<'_, PyDict>) -> PyResult<Vec<Vec<i64>>> {
    words
        .iter()
        .map(|(word, _)| match ids.get_item(word)? {
            Some(found) => found.cast::<PyTuple>()?.iter().map(|g| g.extract::<i64>()).collect(),
            None => Ok(Vec::new()),
        })
        .collect()
}

/// The counts of the leftover words that share a group with the other side's leftover words.
fn similar(left: &[(Bound<'_, PyAny>, u64)], ids: &[Vec<i64>], other: &FxHashSet<i64>) -> u64 {
    left.iter().zip(ids).filter(|(_, g)| g.iter().any(|x| other.contains(x))).map(|((_, c), _)| c).sum()
}

/// `w_ij` of two sentences' word counts; `ids`: the thesaurus's groups of each word (`None`: no synonyms).
pub fn word_score(words_i: &Bound<'_, PyDict>, words_j: &Bound<'_, PyDict>, ids: Option<&Bound<'_, PyDict>>) -> PyResult<f64> {
    let total = |d: &Bound<'_, PyDict>| d.values().iter().map(|c| c.extract::<u64>()).sum::<PyResult<u64>>();
    let (n_i, n_j) = (total(words_i)?, total(words_j)?);
    if n_i == 0 || n_j == 0 {
        return Ok(0.0);
    }
    let mut right = 0;
    for (word, count) in words_i.iter() {
        if let Some(other) = words_j.get_item(&word)? {
            right += count.extract::<u64>()?.min(other.extract::<u64>()?);
        }
    }
    let (mut similar_i, mut similar_j) = (0, 0);
    if let Some(ids) = ids.filter(|_| right < n_i.min(n_j)) {
        let (left_i, left_j) = (leftover(words_i, words_j)?, leftover(words_j, words_i)?);
        let (ids_i, ids_j) = (groups(&left_i, ids)?, groups(&left_j, ids)?);
        let all_i: FxHashSet<i64> = ids_i.iter().flatten().copied().collect();
        let all_j: FxHashSet<i64> = ids_j.iter().flatten().copied().collect();
        if !all_i.is_disjoint(&all_j) {
            similar_i = similar(&left_i, &ids_i, &all_j);
            similar_j = similar(&left_j, &ids_j, &all_i);
        }
    }
    Ok(((right + similar_i) as f64 / n_i as f64).min((right + similar_j) as f64 / n_j as f64))
}
