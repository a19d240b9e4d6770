"""The docs' generators live beside the mkdocs hook (``docs/hooks``), not in a package:
put that folder on ``sys.path`` before the test modules import them. Without the ``docs``
extra (mkdocs), the tests of the site's build are not collected; the pages' code still
runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HOOKS = Path(__file__).resolve().parents[2] / "docs" / "hooks"
if str(HOOKS) not in sys.path:
    sys.path.insert(0, str(HOOKS))

collect_ignore = (
    [] if importlib.util.find_spec("mkdocs") else ["test_generated.py", "test_site_build.py"]
)
