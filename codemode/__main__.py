"""`python -m codemode` runs the command line."""

from __future__ import annotations

import sys

from codemode.cli import console

sys.exit(console())
