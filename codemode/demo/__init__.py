"""The offline demo: a sample catalog of a few hundred tools, and a scripted model that uses it."""

from __future__ import annotations
