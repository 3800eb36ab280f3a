"""The import path `codemode.hybrid`, kept for existing code: the hybrid ranker lives in `codemode.search.hybrid`."""

from __future__ import annotations

from codemode.search.hybrid import FusionParams, HybridSearch, embedding_text

__all__ = ["FusionParams", "HybridSearch", "embedding_text"]
