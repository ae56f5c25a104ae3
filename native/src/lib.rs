//! `simdup_es._native`: the compiled core of simdup-es, a thin PyO3 layer over the crate.
//!
//! Texts come in as Python strings and go out as flat byte buffers and lists of numbers, converted
//! once per batch; no Python object is made per token, sentence or key. The work runs with the GIL
//! released (but the word-level check's, which reads the Python side's dicts in place). `simdup_es.native` loads the module, checks its revision and builds the pipeline from
//! a fingerprinter's tables; the Python modules it replaces stay the reference.

mod chars;
mod keys;
mod lcs;
mod lexicon;
mod parts;
mod passages;
mod pipeline;
mod script;
mod sentences;
mod winnow;
mod words;

use std::mem::take;
use std::sync::{Mutex, OnceLock};

use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::{PyUnicodeEncodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::string::PyStringData;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use rustc_hash::{FxHashMap, FxHashSet};

use chars::Chars;
use lexicon::{HashTable, Params, Tables};
use parts::PartParams;
use pipeline::{Encode, LevelParams};
use sentences::{each_unit, sentences, word_code};

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

/// The values written straight into a new `bytes` (no buffer of them beside it: a long text's columns are tens of MB).
fn bytes_of<'py, const N: usize>(
    py: Python<'py>,
    values: impl ExactSizeIterator<Item = [u8; N]>,
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * N, |buffer| {
        for (into, value) in buffer.chunks_exact_mut(N).zip(values) {
            into.copy_from_slice(&value);
        }
        Ok(())
    })
}

/// The texts and titles as UTF-8 of their own, read from the strings' code points: taken as `&str`, a Python string
/// keeps a UTF-8 copy of itself for as long as it lives (a 5 MB query's for all of its search).
fn texts_of(texts: &[Bound<'_, PyString>], titles: &[Bound<'_, PyString>]) -> PyResult<(Vec<String>, Vec<String>)> {
    if texts.len() != titles.len() {
        return Err(PyValueError::new_err(format!("{} texts but {} titles", texts.len(), titles.len())));
    }
    let mut chars = Vec::new();
    let mut owned = |text: &Bound<'_, PyString>| -> PyResult<String> {
        chars.clear();
        read_chars(text, &mut chars)?;
        Ok(chars.iter().collect())
    };
    let texts = texts.iter().map(&mut owned).collect::<PyResult<_>>()?;
    Ok((texts, titles.iter().map(&mut owned).collect::<PyResult<_>>()?))
}

/// The character table of `native.char_table`: a flag byte per code point, and what `str.casefold` makes of a character.
fn chars_of(char_flags: &[u8], folds: Vec<(u32, String)>) -> PyResult<Chars> {
    let folds: FxHashMap<u32, Box<str>> = folds.into_iter().map(|(c, s)| (c, s.into())).collect();
    Chars::new(char_flags.to_vec(), folds).map_err(PyValueError::new_err)
}

fn strs(owned: &[String]) -> Vec<&str> {
    owned.iter().map(String::as_str).collect()
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
        let chars = chars_of(&char_flags, folds)?;
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
    fn fingerprints<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        titles: Vec<Bound<'py, PyString>>,
    ) -> PyResult<Vec<Option<u64>>> {
        let (texts, titles) = texts_of(&texts, &titles)?;
        Ok(py.detach(|| self.0.fingerprints(&strs(&texts), &strs(&titles))))
    }

    /// The `(hash, weight)` of each distinct content word of each unified text with its title, the floats
    /// `fingerprints` makes integers (the tests hold them to `simdup_es.tokens.weigh_batch`).
    fn weights<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        titles: Vec<Bound<'py, PyString>>,
    ) -> PyResult<Vec<Vec<(u64, f64)>>> {
        let (texts, titles) = texts_of(&texts, &titles)?;
        Ok(py.detach(|| self.0.weights(&strs(&texts), &strs(&titles))))
    }

    /// Every level of each unified text, flat (`simdup_es.native.levels`): a tuple of the documents'
    /// fingerprints (`None` unless `with_document`), sentences (start, end, units: int64 bytes) and
    /// each text's first sentence, units, parts (first, stop, start, end, units: uint64 bytes) and
    /// each text's first part, the parts' fingerprints, keys (hash, position: uint64 bytes) and each
    /// text's first key. With `store_parts` (the most part fingerprints a store keeps), six more: what the
    /// stores write of each document (`simdup_es.keys.StoredKeys`): its members of the `simdup` object as JSON
    /// (with `version_json`, the version as a JSON string; the five-block terms with `five_terms`; `None`
    /// where no fingerprint), its parts left out, the kept part fingerprints (uint64 bytes) and each
    /// text's first, its distinct keys ascending (uint64 bytes) and each text's first.
    #[pyo3(signature = (texts, titles, *, min_units, window_units, max_units, overlap, key_units, key_window,
                        with_parts, sentence_units, with_document, part_max_bytes, store_parts = None,
                        version_json = None, five_terms = false))]
    #[allow(clippy::too_many_arguments)]
    fn levels<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        titles: Vec<Bound<'py, PyString>>,
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
        store_parts: Option<usize>,
        version_json: Option<String>,
        five_terms: bool,
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
        let encode = store_parts.map(|max_parts| Encode { max_parts, version_json, five_terms });
        let (mut out, encoded) = py.detach(|| {
            let out = self.0.levels(&strs(&texts), &strs(&titles), &lp);
            let encoded = encode.as_ref().map(|how| out.encode(how));
            (out, encoded)
        });
        drop((texts, titles));
        // Each column freed once written out: the peak holds one of them twice, not all of them.
        let sentences = bytes_of(py, take(&mut out.sentences).iter().map(|v| v.to_ne_bytes()))?;
        let sentence_first = bytes_of(py, take(&mut out.sentence_first).iter().map(|v| v.to_ne_bytes()))?;
        let parts = bytes_of(py, take(&mut out.parts).iter().map(|v| v.to_ne_bytes()))?;
        let keys = bytes_of(py, take(&mut out.keys).iter().map(|v| v.to_ne_bytes()))?;
        let found = (
            out.fingerprints,
            sentences,
            sentence_first,
            out.units,
            parts,
            out.part_first,
            out.part_fingerprints,
            keys,
            out.key_first,
        )
            .into_pyobject(py)?;
        let Some(stored) = encoded else { return Ok(found) };
        let more = (
            stored.members,
            stored.cuts,
            bytes_of(py, stored.parts.iter().map(|v| v.to_ne_bytes()))?,
            stored.part_first,
            bytes_of(py, stored.keys.iter().map(|v| v.to_ne_bytes()))?,
            stored.key_first,
        )
            .into_pyobject(py)?;
        PyTuple::new(py, found.iter().chain(more.iter()).collect::<Vec<_>>())
    }
}

fn flags<'py>(py: Python<'py>, values: &[bool]) -> Bound<'py, PyBytes> {
    PyBytes::new(py, &values.iter().map(|&v| u8::from(v)).collect::<Vec<u8>>())
}

/// A side's `held` per unit (`simdup_es.commontext.Rarity`) in the width [`held_bytes`] chose (or any of them).
enum HeldBuffer {
    I16(PyBuffer<i16>),
    I32(PyBuffer<i32>),
    I64(PyBuffer<i64>),
}

impl HeldBuffer {
    fn of(values: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(b) = PyBuffer::<i16>::get(values) {
            return Ok(Self::I16(b));
        }
        if let Ok(b) = PyBuffer::<i32>::get(values) {
            return Ok(Self::I32(b));
        }
        Ok(Self::I64(PyBuffer::<i64>::get(values)?))
    }

    fn in_place<'a>(&'a self, py: Python<'a>) -> PyResult<HeldSlice<'a>> {
        Ok(match self {
            Self::I16(b) => HeldSlice::I16(in_place(b, py)?),
            Self::I32(b) => HeldSlice::I32(in_place(b, py)?),
            Self::I64(b) => HeldSlice::I64(in_place(b, py)?),
        })
    }
}

/// A [`HeldBuffer`]'s items where they lie.
#[derive(Clone, Copy)]
enum HeldSlice<'a> {
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl HeldSlice<'_> {
    fn len(self) -> usize {
        match self {
            Self::I16(v) => v.len(),
            Self::I32(v) => v.len(),
            Self::I64(v) => v.len(),
        }
    }

    fn get(self, i: usize) -> i64 {
        match self {
            Self::I16(v) => i64::from(v[i]),
            Self::I32(v) => i64::from(v[i]),
            Self::I64(v) => v[i],
        }
    }
}

/// `held` per unit as bytes of the narrowest of int16, int32 and int64 that holds every value, and that width's
/// numpy type: a long query's is kept for all its comparisons (document counts: 2 bytes a unit in a store of up
/// to 32,767 documents rather than 8).
fn held_bytes<'py>(py: Python<'py>, held: &[i64]) -> PyResult<(Bound<'py, PyBytes>, &'static str)> {
    let (lo, hi) = held.iter().fold((0i64, 0i64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    Ok(if i16::try_from(lo).is_ok() && i16::try_from(hi).is_ok() {
        (bytes_of(py, held.iter().map(|&v| (v as i16).to_ne_bytes()))?, "int16")
    } else if i32::try_from(lo).is_ok() && i32::try_from(hi).is_ok() {
        (bytes_of(py, held.iter().map(|&v| (v as i32).to_ne_bytes()))?, "int32")
    } else {
        (bytes_of(py, held.iter().map(|v| v.to_ne_bytes()))?, "int64")
    })
}

/// A read-only, C-contiguous buffer's items where they lie, for as long as the GIL is held (`py`).
fn in_place<'a, T: Element>(buffer: &'a PyBuffer<T>, _py: Python<'a>) -> PyResult<&'a [T]> {
    let items = buffer
        .as_slice_ptr()
        .filter(|_| buffer.readonly())
        .ok_or_else(|| PyValueError::new_err("an array read in place must be read-only and C-contiguous"))?;
    // SAFETY: `PyBuffer<T>` checked the items' type, size and alignment, and holds the exporter (the memory
    // lives as long as `buffer`). The module runs with the GIL (`gil_used`, the default) and the slice is read
    // with it held (never across `py.detach`, and calling no Python code): no Python code runs meanwhile, and
    // the exporter marked the buffer read-only, so no one writes it through this view while it is read.
    Ok(unsafe { items.as_ref() })
}

/// The query's grams of `k` codes, hashed and sorted (`simdup_es.winnow.GramIndex`: `sorted`, `order`, of `n`
/// units), held once for all the texts it is compared with: the hash (8 bytes) and the position (4) of each gram.
#[pyclass(frozen, module = "simdup_es._native")]
struct Grams {
    sorted: Vec<u64>,
    order: Vec<u32>, // 4 bytes a gram: a text of more than 4 billion units is never compared
    n: usize,
    k: usize,
    buckets: passages::Buckets,
}

#[pymethods]
impl Grams {
    #[new]
    fn new(py: Python<'_>, sorted: PyBuffer<u64>, order: PyBuffer<i64>, n: usize, k: usize) -> PyResult<Self> {
        let (sorted, order) = (sorted.to_vec(py)?, order.to_vec(py)?);
        if sorted.len() != order.len() || order.iter().any(|&i| i < 0 || i > i64::from(u32::MAX) || i as usize + k > n) {
            return Err(PyValueError::new_err("Grams: order must hold a gram of the query for each sorted hash"));
        }
        let buckets = passages::Buckets::of(&sorted);
        Ok(Self { sorted, order: order.into_iter().map(|i| i as u32).collect(), n, k, buckets })
    }

    /// The grams of `k` of unit `codes`, hashed and sorted here: the `sorted` and `order` of
    /// `simdup_es.winnow.GramIndex(codes, k)` (a stable sort: equal hashes in text order), without that index made
    /// in numpy and copied (a 5 MB query's hashes, their temporaries and copies took 60 MB at once). The hashes are
    /// put in order in place: beyond what it keeps (12 bytes a unit) it holds a byte a unit.
    #[staticmethod]
    fn of_codes(py: Python<'_>, codes: PyBuffer<u32>, k: usize) -> PyResult<Self> {
        if k == 0 {
            return Err(PyValueError::new_err("Grams.of_codes: k must be at least 1"));
        }
        let codes: Vec<u64> = codes.to_vec(py)?.into_iter().map(u64::from).collect();
        let n = codes.len();
        if n > u32::MAX as usize {
            return Err(PyValueError::new_err("Grams.of_codes: more than 4,294,967,295 units"));
        }
        let (sorted, order) = py.detach(move || {
            let mut hashes = winnow::gram_hashes(&codes, k);
            drop(codes);
            let mut order: Vec<u32> = (0..hashes.len() as u32).collect();
            order.sort_unstable_by_key(|&i| (hashes[i as usize], i));
            permute(&mut hashes, &order);
            (hashes, order)
        });
        let buckets = passages::Buckets::of(&sorted);
        Ok(Self { sorted, order, n, k, buckets })
    }

    /// `simdup_es.winnow.shared_runs_with` of these grams and `b`'s codes: two byte strings, 1 for each unit
    /// (of the query, of `b`) in a shared run.
    fn shared_runs<'py>(&self, py: Python<'py>, b: PyBuffer<u32>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let b: Vec<u64> = b.to_vec(py)?.into_iter().map(u64::from).collect();
        let grams = passages::Grams { sorted: &self.sorted, order: &self.order, n: self.n, k: self.k, buckets: &self.buckets };
        let (a, b) = py.detach(|| passages::shared_runs(&grams, &b));
        Ok((flags(py, &a), flags(py, &b)))
    }
}

/// `simdup_es.lcs.lcs_length` of two code sequences, its bit vectors over the shorter (`lcs::lcs_length`).
#[pyfunction]
fn lcs_length(py: Python<'_>, a: PyBuffer<u32>, b: PyBuffer<u32>) -> PyResult<usize> {
    let (a, b) = (a.to_vec(py)?, b.to_vec(py)?);
    Ok(py.detach(|| lcs::lcs_length(&a, &b)))
}

/// `simdup_es.winnow.batch_codes` of one text's units from its sentence scan (`Scanner.scan`): the code point of
/// each unit's first character (`points`), which units are words (`word_at`) and their case-folded text (`words`);
/// uint64 bytes, a code a unit.
#[pyfunction]
fn unit_codes<'py>(
    py: Python<'py>,
    points: PyBuffer<u32>,
    word_at: PyBuffer<i64>,
    words: Vec<PyBackedStr>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (points, word_at) = (points.to_vec(py)?, word_at.to_vec(py)?);
    if word_at.len() != words.len() || word_at.iter().any(|&at| at < 0 || at as usize >= points.len()) {
        return Err(PyValueError::new_err("unit_codes: a word for each of word_at, each a unit of points"));
    }
    let mut codes: Vec<u64> = points.iter().map(|&p| p as u64).collect();
    for (&at, word) in word_at.iter().zip(&words) {
        codes[at as usize] = word_code(word);
    }
    bytes_of(py, codes.iter().map(|v| v.to_ne_bytes()))
}

/// `values[i] = values[order[i]]` for every `i` at once (`order` a permutation), in place: each cycle of `order`
/// followed once, with a flag a value.
fn permute(values: &mut [u64], order: &[u32]) {
    let mut done = vec![false; values.len()];
    for start in 0..values.len() {
        if done[start] {
            continue;
        }
        let first = values[start];
        let mut at = start;
        loop {
            done[at] = true;
            let next = order[at] as usize;
            if next == start {
                values[at] = first;
                break;
            }
            values[at] = values[next];
            at = next;
        }
    }
}

/// `simdup_es.commontext.rarity` of unit `codes` by the counts of the ascending `keys`: `held` (int64 bytes) and
/// `common` (a byte a unit), with grams of `k` and chains of grams at most `w` apart.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn rarity<'py>(
    py: Python<'py>,
    codes: PyBuffer<u64>,
    keys: PyBuffer<u64>,
    counts: PyBuffer<i64>,
    common: i64,
    short_common: i64,
    k: usize,
    w: usize,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let (codes, keys, counts) = (codes.to_vec(py)?, keys.to_vec(py)?, counts.to_vec(py)?);
    if keys.len() != counts.len() || !keys.is_sorted() {
        return Err(PyValueError::new_err("rarity: the keys must be ascending, one per count"));
    }
    let (held, common) = py.detach(|| passages::rarity(&codes, &keys, &counts, common, short_common, k, w));
    Ok((bytes_of(py, held.iter().map(|v| v.to_ne_bytes()))?, flags(py, &common)))
}

/// The counts of a query's keys (`simdup_es.commontext.KeyCounts`: `keys` ascending, one count each), copied once for
/// every text read by them (`rarity`).
#[pyclass(frozen, module = "simdup_es._native")]
struct KeyTable(passages::KeyTable);

#[pymethods]
impl KeyTable {
    #[new]
    fn new(py: Python<'_>, keys: PyBuffer<u64>, counts: PyBuffer<i64>) -> PyResult<Self> {
        let (keys, counts) = (keys.to_vec(py)?, counts.to_vec(py)?);
        if keys.len() != counts.len() || !keys.is_sorted() {
            return Err(PyValueError::new_err("KeyTable: the keys must be ascending, one per count"));
        }
        Ok(Self(passages::KeyTable { keys, counts }))
    }

    /// `rarity` of unit `codes` by these counts: `held` in the narrowest width that holds it ([`held_bytes`]), that
    /// width's numpy type, and `common`.
    fn rarity<'py>(
        &self,
        py: Python<'py>,
        codes: PyBuffer<u64>,
        common: i64,
        short_common: i64,
        k: usize,
        w: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, &'static str, Bound<'py, PyBytes>)> {
        let codes = codes.to_vec(py)?;
        let (held, common) = py.detach(|| self.0.rarity(&codes, common, short_common, k, w));
        let (held, width) = held_bytes(py, &held)?;
        Ok((held, width, flags(py, &common)))
    }
}

/// `simdup_es.multilevel._covers`: per candidate, the query units under its matched keys (`keys`: indices into the
/// query's keys, which start at `positions` with `values`) or parts (`parts`: indices into `spans`, each part's units
/// `(start, stop)`), those under its parts, the longest run of the former and its distinct key values, as four lists.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn covers(
    n: i64,
    positions: PyBuffer<i64>,
    values: PyBuffer<u64>,
    spans: Vec<(i64, i64)>,
    keys: Vec<Vec<usize>>,
    parts: Vec<Vec<usize>>,
    k: i64,
    w: i64,
    py: Python<'_>,
) -> PyResult<(Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>)> {
    let (positions, values) = (positions.to_vec(py)?, values.to_vec(py)?);
    if positions.len() != values.len()
        || keys.len() != parts.len()
        || keys.iter().flatten().any(|&i| i >= positions.len())
        || parts.iter().flatten().any(|&p| p >= spans.len())
    {
        return Err(PyValueError::new_err("covers: a key or part index past the query's"));
    }
    let mut out: (Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>) = Default::default();
    for (keys, parts) in keys.into_iter().zip(parts) {
        let [units, part_units, longest, distinct] =
            passages::covers(n, &positions, &values, &spans, &passages::Matched { keys, parts }, k, w);
        out.0.push(units);
        out.1.push(part_units);
        out.2.push(longest);
        out.3.push(distinct);
    }
    Ok(out)
}

/// `simdup_es.multilevel.counted_units(...).sum()` of `copied` (a byte a unit) with the side's `held` (int16, int32
/// or int64) and `common` (empty: nothing is common), `smaller` the smaller side's units; all read in place.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn counted(
    py: Python<'_>,
    copied: PyBuffer<u8>,
    held: Bound<'_, PyAny>,
    common: PyBuffer<u8>,
    passage_units: usize,
    passage_gap: usize,
    short_units: usize,
    smaller: usize,
) -> PyResult<usize> {
    let held = HeldBuffer::of(&held)?;
    let (copied, held, common) = (in_place(&copied, py)?, held.in_place(py)?, in_place(&common, py)?);
    let rule = passages::Rule { passage_units, gap: passage_gap, short_units, smaller };
    let none = held.len() != copied.len() || common.len() != copied.len();
    Ok(passages::counted_by(
        copied.len(),
        |i| copied[i] != 0 && (none || common[i] == 0),
        |i| copied[i] != 0 && (none || held.get(i) <= 0),
        &rule,
    ))
}

/// `simdup_es.multilevel.copied_shares` of one side (`passages::side_shares`): its counted copied units, its
/// copied common units and their stretches `(start, stop, documents)`. `runs`, `held` (int16, int32 or int64) and
/// `common` (read-only,
/// C-contiguous) are read where they lie ([`in_place`]), the GIL held: no copy of a long query's 8 bytes a unit,
/// and the work is a few passes over them.
#[pyfunction]
#[pyo3(signature = (lengths, marked, runs, core, held, common, *, passage_units, passage_gap, short_units, smaller, w))]
#[allow(clippy::too_many_arguments)]
fn side_shares(
    py: Python<'_>,
    lengths: PyBuffer<i64>,
    marked: Vec<usize>,
    runs: PyBuffer<u8>,
    core: Option<(usize, usize)>,
    held: Bound<'_, PyAny>,
    common: PyBuffer<u8>,
    passage_units: usize,
    passage_gap: usize,
    short_units: usize,
    smaller: usize,
    w: usize,
) -> PyResult<(usize, usize, Vec<passages::Held>)> {
    let held = HeldBuffer::of(&held)?;
    let lengths = lengths.to_vec(py)?;
    if marked.iter().any(|&s| s >= lengths.len()) || core.is_some_and(|(lo, hi)| lo > hi || hi > lengths.len()) {
        return Err(PyValueError::new_err("side_shares: a marked sentence or the core is past the sentences"));
    }
    let (runs, held, common) = (in_place(&runs, py)?, held.in_place(py)?, in_place(&common, py)?);
    let runs_of = |i: usize| runs[i] != 0;
    let side = passages::Side { lengths: &lengths, marked: &marked, runs: &runs_of, runs_len: runs.len(), core };
    let rule = passages::Rule { passage_units, gap: passage_gap, short_units, smaller };
    let n: usize = lengths.iter().map(|&n| n.max(0) as usize).sum();
    let (held_of, common_of) = (|i: usize| held.get(i), |i: usize| common[i] != 0);
    // Of another length than the side (or empty): nothing is common.
    let rarity = (held.len() == n && common.len() == n)
        .then_some((&held_of as &dyn Fn(usize) -> i64, &common_of as &dyn Fn(usize) -> bool) as passages::PerUnit<'_>);
    Ok(passages::side_shares(&side, rarity, &rule, w))
}

/// `simdup_es.matrix.rank_second` of a candidate's raw unit code points (`raw`, sentences of `lengths` units)
/// against the query's distinct ones (`values`, ascending) and their codes (`table`): its codes (uint32 bytes),
/// the text of them, each sentence's, and the distinct units of both texts; with `fold` (`keep`, `span`) and
/// more than 256 distinct units, also each sentence folded (`simdup_es.matrix.folded_sentences`), else `None`. With
/// `view_from` sentences or more, each of these is the sentences' text whole, not a list.
#[pyfunction]
#[pyo3(signature = (values, table, raw, lengths, fold = None, view_from = usize::MAX))]
#[allow(clippy::type_complexity)]
fn rank_second<'py>(
    py: Python<'py>,
    values: PyBuffer<u32>,
    table: PyBuffer<u32>,
    raw: PyBuffer<u32>,
    lengths: PyBuffer<i64>,
    fold: Option<(u32, u32)>,
    view_from: usize,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyString>, Bound<'py, PyAny>, usize, Option<Bound<'py, PyAny>>)> {
    let (values, table, raw, lengths) = (values.to_vec(py)?, table.to_vec(py)?, raw.to_vec(py)?, lengths.to_vec(py)?);
    if values.len() != table.len()
        || !values.is_sorted()
        || lengths.iter().any(|&n| n < 0)
        || lengths.iter().sum::<i64>() != raw.len() as i64
        || fold.is_some_and(|(keep, span)| span == 0 || keep.saturating_add(span) > 256)
    {
        return Err(PyValueError::new_err(
            "rank_second: values ascending, one code each, lengths that add up to the units, and a fold below 256",
        ));
    }
    let (codes, distinct) = py.detach(|| passages::rank_second(&values, &table, &raw));
    let chars = codes
        .iter()
        .map(|&c| char::from_u32(c))
        .collect::<Option<Vec<char>>>()
        .ok_or_else(|| PyValueError::new_err("rank_second: more distinct units than code points"))?;
    // A long text's sentences stay one string (`SlicedStrings` cuts them when read): a string each is some
    // 100 bytes a sentence.
    let split = |chars: &[char]| -> PyResult<Bound<'py, PyAny>> {
        if lengths.len() >= view_from {
            return Ok(new_string(py, chars)?.into_any());
        }
        let mut at = 0;
        let mut out = Vec::with_capacity(lengths.len());
        for &n in &lengths {
            out.push(new_string(py, &chars[at..at + n as usize])?);
            at += n as usize;
        }
        Ok(PyList::new(py, out)?.into_any())
    };
    let folded = match fold {
        Some((keep, span)) if distinct > 256 => {
            let folded: Vec<char> =
                codes.iter().map(|&c| char::from((if c < keep { c } else { keep + c % span }) as u8)).collect();
            Some(split(&folded)?)
        }
        _ => None,
    };
    let bytes: Vec<u8> = codes.iter().flat_map(|c| c.to_ne_bytes()).collect();
    let whole = new_string(py, &chars)?;
    let sentences = if lengths.len() >= view_from { whole.clone().into_any() } else { split(&chars)? };
    Ok((PyBytes::new(py, &bytes), whole, sentences, distinct, folded))
}

/// `simdup_es.compare.word_score` of each pair of word counts (dicts of word to count), with the thesaurus's
/// groups of each word (a dict of word to a tuple of group numbers; `None`: no synonyms).
#[pyfunction]
#[pyo3(signature = (pairs, ids = None))]
fn word_scores(pairs: Vec<(Bound<'_, PyDict>, Bound<'_, PyDict>)>, ids: Option<Bound<'_, PyDict>>) -> PyResult<Vec<f64>> {
    pairs.iter().map(|(i, j)| words::word_score(i, j, ids.as_ref())).collect()
}

/// Appends the characters of a Python string to `out` (read in place, in the string's own width);
/// for a string that holds a surrogate (which is no character), the `UnicodeEncodeError` encoding it to
/// UTF-8 raises, which OpenCC's wrapper does first.
fn read_chars(text: &Bound<'_, PyString>, out: &mut Vec<char>) -> PyResult<()> {
    let surrogate =
        |at: usize| PyUnicodeEncodeError::new_err(("utf-8", text.clone().unbind(), at, at + 1, "surrogates not allowed"));
    // SAFETY: the string is alive and immutable while `text` is borrowed and the GIL held.
    match unsafe { text.data()? } {
        PyStringData::Ucs1(data) => out.extend(data.iter().map(|&b| char::from(b))),
        PyStringData::Ucs2(data) => {
            out.reserve(data.len());
            for (at, &u) in data.iter().enumerate() {
                out.push(char::from_u32(u32::from(u)).ok_or_else(|| surrogate(at))?);
            }
        }
        PyStringData::Ucs4(data) => {
            out.reserve(data.len());
            for (at, &u) in data.iter().enumerate() {
                out.push(char::from_u32(u).ok_or_else(|| surrogate(at))?);
            }
        }
    }
    Ok(())
}

/// A Python string of `chars` (CPython stores it in the narrowest width that holds them).
fn new_string<'py>(py: Python<'py>, chars: &[char]) -> PyResult<Bound<'py, PyString>> {
    let length = pyo3::ffi::Py_ssize_t::try_from(chars.len()).map_err(|_| PyValueError::new_err("a text too long"))?;
    // SAFETY: a char is a u32 (a Unicode scalar value), which is what the four-byte kind reads.
    unsafe {
        let ptr = pyo3::ffi::PyUnicode_FromKindAndData(pyo3::ffi::PyUnicode_4BYTE_KIND as _, chars.as_ptr().cast(), length);
        Ok(Bound::from_owned_ptr_or_err(py, ptr)?.cast_into_unchecked())
    }
}

/// OpenCC's conversions on the package's flat tables (`simdup_es.opencc_tables.native_script`).
#[pyclass(frozen, module = "simdup_es._native")]
struct Script(script::Script);

#[pymethods]
impl Script {
    /// `tables`: the text form of each flat table; `configs`: of t2s, s2twp and tw2sp in this order (without
    /// their normalization), the index of its segmentation table (`None` for none) and of each table of its chain.
    #[new]
    fn new(py: Python<'_>, tables: Vec<PyBackedStr>, configs: Vec<(Option<usize>, Vec<usize>)>) -> PyResult<Self> {
        if configs.len() != 3 {
            return Err(PyValueError::new_err("three configs: t2s, s2twp, tw2sp"));
        }
        let count = tables.len();
        let tables: Vec<&str> = tables.iter().map(|t| &**t).collect();
        let trie =
            py.detach(|| script::Trie::parse(&tables)).map_err(|e| PyValueError::new_err(format!("a flat OpenCC table: {e}")))?;
        let mut out = Vec::new();
        for (segmentation, chain) in configs {
            if chain.is_empty() || segmentation.iter().chain(&chain).any(|&t| t >= count) {
                return Err(PyValueError::new_err("a config's chain is empty or names a table that is not there"));
            }
            out.push(script::Config { segmentation, chain });
        }
        Ok(Self(script::Script { trie, configs: out }))
    }

    /// Each text through t2s where `t2s[i]`, then s2twp and tw2sp (each piece between NULs on its own).
    /// `UnicodeEncodeError` for a text that holds a surrogate, as OpenCC's wrapper raises (UTF-8 cannot hold it).
    fn to_simplified<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        t2s: Vec<bool>,
    ) -> PyResult<Vec<Bound<'py, PyString>>> {
        if texts.len() != t2s.len() {
            return Err(PyValueError::new_err("one t2s flag per text"));
        }
        let (mut chars, mut ends) = (Vec::new(), Vec::with_capacity(texts.len()));
        for text in &texts {
            read_chars(text, &mut chars)?;
            ends.push(chars.len());
        }
        let (out, out_ends) = py.detach(|| self.0.to_simplified(&chars, &ends, &t2s));
        let mut start = 0;
        out_ends
            .iter()
            .map(|&end| {
                let s = new_string(py, &out[start..end]);
                start = end;
                s
            })
            .collect()
    }

    /// `text` through one config (0: t2s, 1: s2twp, 2: tw2sp), each piece between NULs on its own.
    fn convert(&self, py: Python<'_>, config: usize, text: &str) -> PyResult<String> {
        if config >= self.0.configs.len() {
            return Err(PyValueError::new_err("config 0, 1 or 2"));
        }
        Ok(py.detach(|| {
            let chars: Vec<char> = text.chars().collect();
            let mut out = Vec::with_capacity(chars.len());
            self.0.convert(config, &chars, &mut out, &mut script::Scratch::default());
            out.into_iter().collect()
        }))
    }
}

/// The sentence scan of `sentences.scan` (the units of a text and its sentences), with the character table of
/// `native.char_table`.
#[pyclass(frozen)]
struct Scanner(Chars);

#[pymethods]
impl Scanner {
    #[new]
    #[pyo3(signature = (*, char_flags, folds))]
    fn new(char_flags: PyBackedBytes, folds: Vec<(u32, String)>) -> PyResult<Self> {
        Ok(Self(chars_of(&char_flags, folds)?))
    }

    /// `text`'s sentences of at least `min_units` units (int64, a row each: start, stop, units), the code point of
    /// each unit's first character (uint32), which units are words (int64) and their case-folded text.
    #[allow(clippy::type_complexity)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
        min_units: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Vec<String>)> {
        let mut chars = Vec::new();
        read_chars(text, &mut chars)?;
        if chars.len() >= u32::MAX as usize {
            return Err(PyValueError::new_err("a text of 2**32 characters or more"));
        }
        let (columns, points, word_at, words) = py.detach(|| {
            let (mut starts, mut points, mut word_at, mut words) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            each_unit(&self.0, &chars, &mut String::new(), |start, _, word| {
                if let Some(word) = word {
                    word_at.push(starts.len() as i64);
                    words.push(word.to_owned());
                }
                starts.push(start as u32);
                points.push(chars[start] as u32);
            });
            let cut = sentences(&self.0, &chars, &starts, min_units);
            let columns: Vec<i64> = cut.iter().flat_map(|s| [s.start as i64, s.end as i64, s.units as i64]).collect();
            (columns, points, word_at, words)
        });
        Ok((
            bytes_of(py, columns.iter().map(|v| v.to_ne_bytes()))?,
            bytes_of(py, points.iter().map(|v| v.to_ne_bytes()))?,
            bytes_of(py, word_at.iter().map(|v| v.to_ne_bytes()))?,
            words,
        ))
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("REVISION", env!("SIMDUP_NATIVE_REVISION"))?;
    m.add("RJIEBA", RJIEBA)?;
    m.add_class::<Jieba>()?;
    m.add_class::<Pipeline>()?;
    m.add_class::<Grams>()?;
    m.add_class::<KeyTable>()?;
    m.add_class::<Script>()?;
    m.add_class::<Scanner>()?;
    for f in [
        wrap_pyfunction!(rarity, m)?,
        wrap_pyfunction!(counted, m)?,
        wrap_pyfunction!(covers, m)?,
        wrap_pyfunction!(side_shares, m)?,
        wrap_pyfunction!(rank_second, m)?,
        wrap_pyfunction!(word_scores, m)?,
        wrap_pyfunction!(lcs_length, m)?,
        wrap_pyfunction!(unit_codes, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
