"""The docs' generators live beside the mkdocs hook (``docs/hooks``), not in a package:
put that folder on ``sys.path`` before the test modules import them."""

from __future__ import annotations

import sys
from pathlib import Path

HOOKS = Path(__file__).resolve().parents[2] / "docs" / "hooks"
if str(HOOKS) not in sys.path:
    sys.path.insert(0, str(HOOKS))
