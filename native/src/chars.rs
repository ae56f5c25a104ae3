//! Character classes, as the Python interpreter that loads the module has them.
//!
//! Python's regular expressions and string methods decide what a letter, a digit or white space
//! is by its own Unicode tables, whose version changes with the interpreter (Unicode 14 on 3.11,
//! 15 on 3.12). The package builds one flag byte per code point from those tables
//! (`simdup_es.native.char_table`) and hands it here, so every class below is the Python one
//! by construction, whatever Unicode version Rust's own tables are.

use rustc_hash::FxHashMap;

/// `[^\W_]`: a letter or digit (`str.isalnum`), what the token filter and units look for.
pub const ALNUM: u8 = 1;
/// `\d` (`str.isdecimal`).
pub const DIGIT: u8 = 2;
/// `\s` (`str.isspace`): what `str.strip` and `str.split` remove.
pub const SPACE: u8 = 4;
/// `str.casefold` changes the character (the folded string is in `Chars::folds`).
pub const FOLDS: u8 = 8;

/// Code points (`sys.maxunicode + 1`).
pub const CODE_POINTS: usize = 0x110000;

pub struct Chars {
    flags: Vec<u8>,
    folds: FxHashMap<u32, Box<str>>,
}

impl Chars {
    pub fn new(flags: Vec<u8>, folds: FxHashMap<u32, Box<str>>) -> Result<Self, String> {
        if flags.len() != CODE_POINTS {
            return Err(format!("the character table has {} entries, not {CODE_POINTS}", flags.len()));
        }
        Ok(Self { flags, folds })
    }

    #[inline]
    pub fn flags(&self, c: char) -> u8 {
        self.flags[c as usize]
    }

    #[inline]
    pub fn alnum(&self, c: char) -> bool {
        self.flags(c) & ALNUM != 0
    }

    #[inline]
    pub fn space(&self, c: char) -> bool {
        self.flags(c) & SPACE != 0
    }

    /// A letter or digit of a Latin unit (`sentences._WORD`): alphanumeric, not counted as CJK.
    #[inline]
    pub fn word(&self, c: char) -> bool {
        self.alnum(c) && !cjk_unit(c)
    }

    /// `[^\W\d_]`: a letter, for initials.
    #[inline]
    pub fn letter(&self, c: char) -> bool {
        self.flags(c) & (ALNUM | DIGIT) == ALNUM
    }

    /// `s.casefold()` appended to `out`.
    pub fn fold_into(&self, s: &[char], out: &mut String) {
        for &c in s {
            if self.flags(c) & FOLDS != 0
                && let Some(folded) = self.folds.get(&(c as u32))
            {
                out.push_str(folded);
                continue;
            }
            out.push(c);
        }
    }
}

/// A character counted as one unit (`sentences._CJK_RANGES`): CJK ideographs, kana, Hangul syllables.
#[inline]
pub fn cjk_unit(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x3134F)
}
