"""Make ``import evalserve`` find the real package, not this folder.

While pytest runs, ``tests/`` is on ``sys.path`` (prepend import mode, for ``tests/conftest.py``). Under a bare
``pytest`` the checkout itself is not, and the editable install's finder comes after the path finder, so this
folder (``tests/evalserve``, no ``__init__.py``) would be imported as a namespace package named ``evalserve``:
``importlib.resources`` then finds no ``samples/`` and ``evalserve demo`` fails. ``python -m pytest`` puts the
checkout on the path already; this does the same for every other way of starting pytest.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
