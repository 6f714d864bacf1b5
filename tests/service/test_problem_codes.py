"""Problem codes are one vocabulary (``core.problem_codes.ProblemCode``): no code in ``service/`` or ``workers/`` is
a bare string, and every code is in docs/api.md's list of problem codes (and every code listed there is one)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from evalserve.service.core.problem_codes import EngineCode, ProblemCode

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (ROOT / "service", ROOT / "workers")
#: calls that take a problem code -> the position of the code among their arguments
CODE_CALLS = {"ServiceError": 1, "ApiProblem": 1, "problem_response": 1, "error_detail": 0, "_error": 0,
              "TargetError": 0}


def _name(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _spelled_out(node: ast.expr) -> bool:
    """A code written as text: a string literal, an f-string, text glued together, or either wrapped in a call
    (``ProblemCode("...")``, ``EngineCode(f"...")``) instead of naming a member."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _spelled_out(node.left) or _spelled_out(node.right)
    if isinstance(node, ast.Call) and _name(node.func) in ("ProblemCode", "EngineCode") and node.args:
        return isinstance(node.args[0], ast.Constant | ast.JoinedStr)
    return False


def code_arguments(tree: ast.AST) -> list[ast.expr]:
    """Every problem code given in ``tree``: the code argument of the calls that take one, and the value of a
    ``"code"`` key in a dict display (a problem-list entry, a job's error)."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _name(node.func) in CODE_CALLS:
            position = CODE_CALLS[_name(node.func) or ""]
            if len(node.args) > position:
                found.append(node.args[position])
            found += [k.value for k in node.keywords if k.arg == "code"]
        elif isinstance(node, ast.Dict):
            found += [v for k, v in zip(node.keys, node.values)
                      if isinstance(k, ast.Constant) and k.value == "code"]
    return found


def spelled_out_codes(source: str, filename: str = "<source>") -> list[str]:
    return [f"{filename}:{node.lineno}: {ast.unparse(node)}" for node in code_arguments(ast.parse(source))
            if _spelled_out(node)]


def _files() -> list[Path]:
    return [p for folder in SOURCES for p in sorted(folder.rglob("*.py")) if p.name != "problem_codes.py"]


def test_no_problem_code_is_a_string_literal() -> None:
    wrong = [w for path in _files() for w in spelled_out_codes(path.read_text(), str(path.relative_to(ROOT)))]
    assert not wrong, ("problem codes must be ProblemCode members (add a new one to"
                       " service/core/problem_codes.py and docs/api.md):\n" + "\n".join(wrong))


def test_the_scan_sees_the_codes() -> None:
    given = [node for path in _files() for node in code_arguments(ast.parse(path.read_text()))]
    assert len(given) >= 100, len(given)  # the calls are still found under these names
    assert sum(isinstance(n, ast.Attribute) and _name(n.value) == "ProblemCode" for n in given) >= 90


def test_the_scan_catches_a_literal_code() -> None:
    source = '''
raise ServiceError(404, "not-found", "no such thing")
raise ApiProblem(401, code=f"un{'authorized'}", detail="x")
problem_response(429, ProblemCode("rate-limited"), "slow down")
jobs.error_detail("time" + "-limit", "too slow")
problems.append({"field": "x", "code": "invalid-field"})
raise TargetError(EngineCode("webhook-target-refused"), "no")
raise ServiceError(404, ProblemCode.NOT_FOUND, "fine")
raise ServiceError(422, EngineCode(exc.problems[0].code), "fine: an engine code passed on")
raise ServiceError(409, ProblemCode.of_job(job.state), "fine")
'''
    assert sorted(int(line.split(":")[1]) for line in spelled_out_codes(source)) == [2, 3, 4, 5, 6, 7]


def test_members_are_their_values() -> None:
    import json

    assert json.dumps({"code": ProblemCode.NOT_FOUND}) == '{"code": "not-found"}'
    assert f"/problems/{ProblemCode.QUOTA_EXCEEDED}" == "/problems/quota-exceeded"
    assert ProblemCode.INVALID_UPLOAD == "invalid-upload" and str(ProblemCode.INVALID_UPLOAD) == "invalid-upload"
    assert all(re.fullmatch(r"[a-z]+(-[a-z]+)*", code) for code in ProblemCode)
    assert {ProblemCode.of_job(s) for s in ("queued", "running", "failed", "cancelled")} == {
        ProblemCode.JOB_QUEUED, ProblemCode.JOB_RUNNING, ProblemCode.JOB_FAILED, ProblemCode.JOB_CANCELLED}
    assert EngineCode("per-topic-missing") == "per-topic-missing"


def test_codes_the_service_takes_from_elsewhere_are_members() -> None:
    from evalserve.service.webhooks import targets
    from evaluation.formats.source import TOO_LARGE_CODES  # answered as the 413's code (inputs.uploads)

    assert {ProblemCode(c) for c in TOO_LARGE_CODES} == {ProblemCode.DECOMPRESSED_TOO_LARGE,
                                                          ProblemCode.INPUT_TOO_LARGE}
    assert targets.REFUSED is ProblemCode.WEBHOOK_TARGET_REFUSED
    assert targets.UNRESOLVABLE is ProblemCode.WEBHOOK_TARGET_UNRESOLVABLE


def _table_codes(text: str, header: str, column: int) -> set[str]:
    """The codes in ``column`` of the markdown table whose header line is ``header``."""
    lines = text[text.index(header):].splitlines()
    codes: set[str] = set()
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        codes |= set(re.findall(r"`([a-z-]+)`", line.strip("|").split("|")[column]))
    return codes


#: docs/api.md, "Errors: application/problem+json": the answers' codes, in the second column
API_ERRORS = ("| Status | `code` | When |", 1)
#: docs/api.md, "Job callbacks": a failed job's ``error.code``, in the first column
JOB_ERRORS = ("| `error.code` | Cause |", 0)


def test_every_problem_code_is_in_the_api_guide() -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    listed = _table_codes(text, *API_ERRORS) | _table_codes(text, *JOB_ERRORS)
    missing = sorted(code.value for code in ProblemCode if code not in listed)
    assert not missing, f"docs/api.md's list of problem codes lacks: {missing}"
    unknown = sorted(listed - {code.value for code in ProblemCode})
    assert not unknown, f"docs/api.md lists problem codes that ProblemCode lacks: {unknown}"


def test_every_failed_job_code_is_with_the_job_errors() -> None:
    given = {ProblemCode[node.attr] for path in _files() for call in ast.walk(ast.parse(path.read_text()))
             if isinstance(call, ast.Call) and _name(call.func) in ("error_detail", "_error")
             for node in call.args[:1] if isinstance(node, ast.Attribute) and _name(node.value) == "ProblemCode"}
    assert ProblemCode.WORKER_LOST in given and ProblemCode.TIME_LIMIT in given
    listed = _table_codes((ROOT / "docs" / "api.md").read_text(), *JOB_ERRORS)
    missing = sorted(code.value for code in given if code not in listed)
    assert not missing, f"docs/api.md's table of failed jobs' error.code lacks: {missing}"
