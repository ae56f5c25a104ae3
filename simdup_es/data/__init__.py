"""Data files shipped with simdup-es (stop words, sample corpus)."""
