//! `simdup_es._native`: the compiled core of simdup-es, a thin PyO3 layer over the crate.
//!
//! Texts come in as Python strings and go out as flat byte buffers and lists of numbers, converted
//! once per batch; no Python object is made per token, sentence or key. The work runs with the GIL
//! released. `simdup_es.native` loads the module, checks its revision and builds the pipeline from
//! a fingerprinter's tables; the Python modules it replaces stay the reference.

mod chars;
mod lexicon;
mod parts;
mod pipeline;
mod sentences;
mod winnow;

use std::sync::{Mutex, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyTuple};
use rustc_hash::{FxHashMap, FxHashSet};

use chars::Chars;
use lexicon::{HashTable, Params, Tables};
use parts::PartParams;
use pipeline::LevelParams;

/// The rjieba release whose jieba-rs this crate links (jieba-rs 0.11.0): the Python path segments
/// with it, and the fingerprint version names it.
const RJIEBA: &str = "0.2.2";

/// jieba-rs's own dictionary (its `src/data/dict.txt`, which `Jieba::new` loads).
const DICTIONARY: &str = include_str!("../data/jieba-dict.txt");

/// This process's jieba-rs, its dictionary loaded on first use (about 0.1 s, 33 MiB).
fn jieba() -> &'static jieba_rs::Jieba {
    static JIEBA: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    JIEBA.get_or_init(|| jieba_rs::Jieba::with_dict(&mut DICTIONARY.as_bytes()).expect("jieba-rs's dictionary loads"))
}

/// jieba-rs as `rjieba.Jieba` offers it (`cut`, `has_word`), over the module's one dictionary.
#[pyclass(frozen, module = "simdup_es._native")]
struct Jieba;

#[pymethods]
impl Jieba {
    #[new]
    fn new() -> Self {
        Self
    }

    #[pyo3(signature = (text, hmm = true))]
    fn cut<'a>(&self, py: Python<'_>, text: &'a str, hmm: bool) -> Vec<&'a str> {
        py.detach(|| jieba().cut(text, hmm).into_iter().map(|t| t.word).collect())
    }

    fn has_word(&self, word: &str) -> bool {
        jieba().has_word(word)
    }
}

/// Unified texts to fingerprints and levels, with a fingerprinter's tables (`simdup_es.native.pipeline`).
#[pyclass(frozen, module = "simdup_es._native")]
struct Pipeline(pipeline::Pipeline);

fn u64s(bytes: &[u8], what: &str) -> PyResult<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!("{what}: {} bytes is no whole number of 64-bit values", bytes.len())));
    }
    Ok(bytes.chunks_exact(8).map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes"))).collect())
}

fn table<T>(keys: &[u8], values: &[u8], what: &str, cast: impl Fn(u64) -> T) -> PyResult<HashTable<T>> {
    let (keys, values) = (u64s(keys, what)?, u64s(values, what)?);
    if keys.len() != values.len() || !keys.is_sorted() {
        return Err(PyValueError::new_err(format!("{what}: the keys must be ascending, one per value")));
    }
    Ok(HashTable { keys, values: values.into_iter().map(cast).collect() })
}

fn bytes_of<'py>(py: Python<'py>, values: impl IntoIterator<Item = [u8; 8]>) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &values.into_iter().flatten().collect::<Vec<u8>>())
}

fn texts_of<'a>(texts: &'a [PyBackedStr], titles: &'a [PyBackedStr]) -> PyResult<(Vec<&'a str>, Vec<&'a str>)> {
    if texts.len() != titles.len() {
        return Err(PyValueError::new_err(format!("{} texts but {} titles", texts.len(), titles.len())));
    }
    Ok((texts.iter().map(|t| &**t).collect(), titles.iter().map(|t| &**t).collect()))
}

#[pymethods]
impl Pipeline {
    /// `char_flags`: a byte per code point (`chars.rs`); `folds`: each character `str.casefold`
    /// changes and what it becomes; the POS and IDF tables as ascending 64-bit keys (word hashes) and
    /// their values (int64 classes, float64 IDFs) in native byte order; the boosts of `FingerprintParams`.
    #[new]
    #[pyo3(signature = (*, char_flags, folds, stop_words, marked_words, pos_keys, pos_values, idf_keys, idf_values,
                        idf_default, max_count, pos_boosts, length_boost, mark_boost, title_boost))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        char_flags: PyBackedBytes,
        folds: Vec<(u32, String)>,
        stop_words: Vec<String>,
        marked_words: Vec<String>,
        pos_keys: PyBackedBytes,
        pos_values: PyBackedBytes,
        idf_keys: PyBackedBytes,
        idf_values: PyBackedBytes,
        idf_default: f64,
        max_count: u64,
        pos_boosts: [f64; 4],
        length_boost: f64,
        mark_boost: f64,
        title_boost: f64,
    ) -> PyResult<Self> {
        let folds: FxHashMap<u32, Box<str>> = folds.into_iter().map(|(c, s)| (c, s.into())).collect();
        let chars = Chars::new(char_flags.to_vec(), folds).map_err(PyValueError::new_err)?;
        let pos = table(&pos_keys, &pos_values, "pos", |v| v as i64)?;
        if pos.values.iter().any(|&p| !(0..4).contains(&p)) {
            return Err(PyValueError::new_err("pos: a class is 0 (noun), 1 (verb), 2 (other) or 3 (function word)"));
        }
        let tables = Tables {
            params: Params { max_count, pos_boosts, length_boost, mark_boost, title_boost },
            stop_words: stop_words.into_iter().map(Into::into).collect::<FxHashSet<_>>(),
            marked_words: marked_words.into_iter().map(Into::into).collect::<FxHashSet<_>>(),
            pos,
            idf: table(&idf_keys, &idf_values, "idf", f64::from_bits)?,
            idf_default,
        };
        Ok(Self(pipeline::Pipeline { chars, tables, jieba: jieba(), lexicon: Mutex::default() }))
    }

    /// The SimHash of each unified text with its unified title (`""`: none); `None` where no content word.
    fn fingerprints(&self, py: Python<'_>, texts: Vec<PyBackedStr>, titles: Vec<PyBackedStr>) -> PyResult<Vec<Option<u64>>> {
        let (texts, titles) = texts_of(&texts, &titles)?;
        Ok(py.detach(|| self.0.fingerprints(&texts, &titles)))
    }

    /// The `(hash, weight)` of each distinct content word of each unified text with its title, the floats
    /// `fingerprints` makes integers (the tests hold them to `simdup_es.tokens.weigh_batch`).
    fn weights(&self, py: Python<'_>, texts: Vec<PyBackedStr>, titles: Vec<PyBackedStr>) -> PyResult<Vec<Vec<(u64, f64)>>> {
        let (texts, titles) = texts_of(&texts, &titles)?;
        Ok(py.detach(|| self.0.weights(&texts, &titles)))
    }

    /// Every level of each unified text, flat (`simdup_es.native.levels`): a tuple of the documents'
    /// fingerprints (`None` unless `with_document`), sentences (start, end, units: int64 bytes) and
    /// each text's first sentence, units, parts (first, stop, start, end, units: uint64 bytes) and
    /// each text's first part, the parts' fingerprints, keys (hash, position: uint64 bytes) and each
    /// text's first key.
    #[pyo3(signature = (texts, titles, *, min_units, window_units, max_units, overlap, key_units, key_window,
                        with_parts, sentence_units, with_document, part_max_bytes))]
    #[allow(clippy::too_many_arguments)]
    fn levels<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        titles: Vec<PyBackedStr>,
        min_units: usize,
        window_units: usize,
        max_units: usize,
        overlap: f64,
        key_units: usize,
        key_window: usize,
        with_parts: bool,
        sentence_units: usize,
        with_document: bool,
        part_max_bytes: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (texts, titles) = texts_of(&texts, &titles)?;
        let lp = LevelParams {
            parts: PartParams { min_units, window_units, max_units, overlap },
            with_parts,
            key_units,
            key_window,
            sentence_units,
            with_document,
            part_max_bytes,
        };
        let out = py.detach(|| self.0.levels(&texts, &titles, &lp));
        (
            out.fingerprints,
            bytes_of(py, out.sentences.iter().map(|v| v.to_ne_bytes())),
            bytes_of(py, out.sentence_first.iter().map(|v| v.to_ne_bytes())),
            out.units,
            bytes_of(py, out.parts.iter().map(|v| v.to_ne_bytes())),
            out.part_first,
            out.part_fingerprints,
            bytes_of(py, out.keys.iter().map(|v| v.to_ne_bytes())),
            out.key_first,
        )
            .into_pyobject(py)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("REVISION", env!("SIMDUP_NATIVE_REVISION"))?;
    m.add("RJIEBA", RJIEBA)?;
    m.add_class::<Jieba>()?;
    m.add_class::<Pipeline>()?;
    Ok(())
}
