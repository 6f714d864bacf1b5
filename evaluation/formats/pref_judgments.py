"""Reader and writer of preference judgments (spec 6.1), the ``preference_judgments`` side input of Prf and nPrf.

One judgment per line, whitespace-separated:

- ``topic user left right winner`` -- a simple pairwise preference: the user preferred ``winner`` (which is
  ``left`` or ``right``);
- ``topic user top left right winner`` -- a conditional preference: having read ``top``, the user would rather see
  ``winner`` next. A top of ``-`` makes the line a pairwise preference (so files can keep six columns).

``user`` is any label (an assessor, a crowd worker, a simulated profile). Blank lines and lines starting with ``#``
are skipped. Errors: a line without 5 or 6 fields, a winner that is neither candidate, a document compared with
itself, a top document that is also a candidate. The same user judging the same pair (after the same top) again is
one warning for the whole file (sampled designs do it on purpose): every judgment counts. (Not to be confused
with ``evaluation.formats.preferences``, user labels over pairs of *runs* for meta-evaluation.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.formats.lexer import Fields, Rows, decode, report_fields, tokenize
from evaluation.formats.source import SourceLike, load
from evaluation.model import IntArray
from evaluation.preference.judgments import PreferenceJudgments
from evaluation.problems import InputError, Parsed, ProblemLog

_NO_TOP = b"-"
#: columns of (top, left, right, winner) in the two layouts (-1: no top column)
_LAYOUTS = {5: (-1, 2, 3, 4), 6: (2, 3, 4, 5)}


@dataclass(frozen=True)
class _Part:
    """The well-formed lines of one layout, as byte-string columns."""

    line: IntArray
    topic: np.ndarray
    user: np.ndarray
    top: np.ndarray
    has_top: np.ndarray
    left: np.ndarray
    right: np.ndarray
    winner: np.ndarray
    winner_column: IntArray


def parse_preference_judgments(source: SourceLike) -> Parsed[PreferenceJudgments]:
    """Read preference judgments, collecting every problem."""
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    log = ProblemLog(source=blob.name)
    fields = tokenize(blob.data)
    content = fields.content_lines()
    bad = np.flatnonzero(content & (fields.counts != 5) & (fields.counts != 6))
    shown = bad[: log.room()]
    log.count_omitted(int(bad.size - shown.size))
    for i in shown.tolist():
        log.add("pref-fields", "preference judgments have 5 fields (topic user left right winner) or 6 (topic"
                f" user top left right winner); this line has {int(fields.counts[i])}", line=i + 1, column=1)
    parts = [_part(_rows(fields, content, n), n, log) for n in (5, 6)]
    judgments = _assemble(parts, blob.name, log)
    if len(judgments) == 0 and not log.has_errors:
        log.add("empty-pref-judgments", "the file has no preference judgments")
    return Parsed.from_log(judgments, log)


def read_preference_judgments(source: SourceLike) -> PreferenceJudgments:
    """Read preference judgments or raise InputError listing their problems."""
    return parse_preference_judgments(source).unwrap()


def format_preference_judgments(judgments: PreferenceJudgments) -> bytes:
    """The judgments as a file ``parse_preference_judgments`` reads back (pairwise lines have 5 fields)."""
    lines = []
    for topic, user, top, left, right, winner in judgments.records():
        head = f"{topic} {user} " + ("" if top is None else f"{top} ")
        lines.append(f"{head}{left} {right} {winner}\n")
    return "".join(lines).encode()


def _rows(fields: Fields, content: np.ndarray, ncols: int) -> Rows:
    lines = np.flatnonzero(content & (fields.counts == ncols))
    idx = fields.first[lines][:, None] + np.arange(ncols)
    return Rows(fields.buf, fields.starts[idx], fields.ends[idx], lines + 1, fields.line_start[lines])


def _part(rows: Rows, ncols: int, log: ProblemLog) -> _Part:
    """Check the lines of one layout; return the well-formed ones."""
    top_col, left_col, right_col, winner_col = _LAYOUTS[ncols]
    n = len(rows)
    left, right, winner = rows.text(left_col), rows.text(right_col), rows.text(winner_col)
    if top_col >= 0:
        top = rows.text(top_col)
        has_top = top != _NO_TOP
    else:
        top = np.zeros(n, dtype="S1")
        has_top = np.zeros(n, dtype=bool)
    same = left == right
    if same.any():
        report_fields(log, rows, same, right_col, "pref-same-document", "document {} is compared with itself")
    wrong_winner = ~same & (winner != left) & (winner != right)
    if wrong_winner.any():
        report_fields(log, rows, wrong_winner, winner_col, "pref-winner",
                      "the winner {!r} is neither of the two documents compared")
    top_candidate = has_top & ((top == left) | (top == right))
    if top_candidate.any():
        report_fields(log, rows, top_candidate, top_col, "pref-top-candidate",
                      "the top document {} is also one of the two documents compared")
    ok = ~(same | wrong_winner | top_candidate)
    return _Part(rows.line[ok], rows.text(0)[ok], rows.text(1)[ok], top[ok], has_top[ok], left[ok], right[ok],
                 winner[ok], rows.columns(winner_col)[ok])


def _assemble(parts: list[_Part], name: str, log: ProblemLog) -> PreferenceJudgments:
    """Intern the labels of the well-formed lines (file order) and warn about repeated judgments."""
    line = np.concatenate([p.line for p in parts])
    order = np.argsort(line, kind="stable")
    line = line[order]

    def column(attr: str) -> np.ndarray:
        return np.concatenate([getattr(p, attr) for p in parts])[order]

    topic_vocab, topic = np.unique(column("topic"), return_inverse=True)
    user_vocab, user = np.unique(column("user"), return_inverse=True)
    has_top = column("has_top").astype(bool)
    left, right, winner, top = column("left"), column("right"), column("winner"), column("top")
    docnos, inverse = np.unique(np.concatenate((left, right, top[has_top])), return_inverse=True)
    inverse = inverse.ravel()
    n = line.size
    left_id, right_id = inverse[:n], inverse[n : 2 * n]
    top_id = np.full(n, -1, dtype=np.int64)
    top_id[has_top] = inverse[2 * n :]
    right_wins = winner == right
    judgments = PreferenceJudgments(
        tuple(decode(topic_vocab)), tuple(decode(user_vocab)), docnos.astype(docnos.dtype), topic.ravel().astype(
            np.int64), user.ravel().astype(np.int64), top_id, left_id.astype(np.int64), right_id.astype(np.int64),
        right_wins, name)
    _warn_repeated(judgments, line, column("winner_column"), log)
    return judgments


def _warn_repeated(j: PreferenceJudgments, line: IntArray, winner_column: IntArray, log: ProblemLog) -> None:
    if len(j) == 0:
        return
    lo, hi = np.minimum(j.left, j.right), np.maximum(j.left, j.right)
    key = np.stack((j.topic, j.user, j.top, lo, hi), axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    earlier = first[inverse.ravel()]
    repeated = np.flatnonzero(earlier != np.arange(len(j)))
    if repeated.size == 0:
        return
    i = int(repeated[0])
    k = int(earlier[i])
    more = f" ({repeated.size} judgments repeat an earlier one)" if repeated.size > 1 else ""
    log.add("pref-repeated", f"user {j.users[int(j.user[i])]} already judged this pair for topic"
            f" {j.topics[int(j.topic[i])]} (line {int(line[k])}){more}; every judgment counts",
            severity="warning", line=int(line[i]), column=int(winner_column[i]))
