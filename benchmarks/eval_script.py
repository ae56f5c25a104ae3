"""How close the zh_CN and zh_TW forms of the same man pages get, per script normalisation.

Uses data/manpages-pairs.jsonl from scripts/fetch-corpus (the zh_TW pages are the
zh_CN translation converted with Taiwan vocabulary). Prints, for character-only
conversion (t2s) and for the round trip simdup uses (t2s -> s2twp -> tw2sp), the mean
Hamming distance of each pair and the share within distance 3; and the same for a
pure character conversion of the zh_CN page (s2t), which must stay at 0.

    python benchmarks/eval_script.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import opencc

import simdup_es.reference as reference_module
import simdup_es.text as text_module
from simdup_es.fingerprint import Doc, Fingerprinter

DATA = Path(os.environ.get("SIMDUP_DATA") or Path(__file__).resolve().parent.parent / "data")


class _Unchanged:
    @staticmethod
    def convert(text: str) -> str:
        return text


def _t2s_only(config: str):  # type: ignore[no-untyped-def]
    """unify_reference's OpenCC configs with the round trip (s2twp, tw2sp) left out."""
    return _OPENCC(config) if config == "t2s" else _Unchanged


_OPENCC = text_module.converter


def main() -> None:
    pairs = [json.loads(line) for line in open(DATA / "manpages-pairs.jsonl", encoding="utf-8")]
    pairs = [p for p in pairs if len(p["zh_cn"]) < 20_000]
    s2t = [opencc.OpenCC("s2t").convert(p["zh_cn"]) for p in pairs]
    print(f"{len(pairs)} man pages in zh_CN and zh_TW")
    for name, opencc_of in {"t2s (characters only)": _t2s_only, "t2s -> s2twp -> tw2sp (simdup)": _OPENCC}.items():
        # Unified here, step by step (unify_reference, which unify equals), with the
        # configs of this option; the workers fingerprint the unified texts.
        reference_module.converter = opencc_of
        try:
            cn, tw, pure = ([reference_module.unify_reference(x) for x in texts]
                            for texts in ([p["zh_cn"] for p in pairs], [p["zh_tw"] for p in pairs], s2t))
        finally:
            reference_module.converter = _OPENCC
        fp = Fingerprinter()
        cn, tw, pure = ([r.unwrap() for r in fp.map(Doc(text_module.UnifiedText(x)) for x in texts)] for texts in (cn, tw, pure))
        d = np.array([a.distance(b) for a, b in zip(cn, tw)])
        e = np.array([a.distance(b) for a, b in zip(cn, pure)])
        print(f"{name:32s} zh_CN~zh_TW mean {d.mean():5.2f}, within 3: {(d <= 3).mean():6.1%} | "
              f"zh_CN~s2t(zh_CN) mean {e.mean():4.2f}, within 3: {(e <= 3).mean():6.1%}")


if __name__ == "__main__":
    main()
