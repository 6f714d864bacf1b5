"""The docs keep up with the code: every registered measure and every problem code is documented."""

from __future__ import annotations

import re
from pathlib import Path

from evaluation.measures.registry import default_registry

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "evaluation"
# the first hyphenated string literal passed to a problem-making call is its code
CODE = re.compile(
    r'(?:\.add|report_fields|InputError\.single|Problem)\(\s*(?:[a-z_0-9]+,\s*){0,5}"([a-z]+(?:-[a-z]+)+)"'
)


def test_every_measure_is_in_the_catalogue_page() -> None:
    text = (ROOT / "docs" / "measures.md").read_text()
    missing = [d.name for d in default_registry() if f"`{d.name}" not in text]
    assert not missing, f"docs/measures.md does not describe: {missing}"


def test_every_problem_code_is_documented() -> None:
    sources = [*ENGINE.rglob("*.py"), *(ROOT / "evalserve").rglob("*.py")]
    codes = {c for path in sources for c in CODE.findall(path.read_text())}
    assert len(codes) >= 15, codes  # the pattern still finds the codes
    text = (ROOT / "docs" / "formats.md").read_text()
    missing = sorted(c for c in codes if f"`{c}`" not in text)
    assert not missing, f"docs/formats.md does not document: {missing}"


def test_the_api_guide_lists_every_side_input_upload_field() -> None:
    from evaluation.side_registry import SIDE_KINDS

    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    missing = [k for k in SIDE_KINDS if f"`{k}`" not in text]
    assert not missing, f"docs/api.md does not list the collection upload fields: {missing}"
