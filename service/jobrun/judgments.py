"""Judgments a worker process keeps parsed between jobs: in a deadline rush every submission is evaluated against
the same collection, and parsing its judgments again took a fifth of a TREC-size job (issue 29). Keyed by the
judgments' bytes (sha256), file name (their problems name it) and format: a changed collection is parsed anew.
Only judgments that parse without errors are kept (a job on bad ones reports every problem as before), at most
``ENTRIES`` of them and none whose text is over ``MAX_TEXT_BYTES`` (a worker's memory after a job is bounded:
``jobrun.memory``)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from evaluation.formats import Blob
from evaluation.model import IntentWeights, Qrels
from evaluation.pipeline import parse_judgments
from evaluation.problems import Problem

#: how many collections' judgments a worker keeps parsed
ENTRIES = 4
#: judgments whose text is larger are parsed for every job (a large pool's arrays are not held by an idle worker)
MAX_TEXT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Judged:
    """Judgments as ``load_inputs`` reads them from their file: the qrels, an EvALL gold standard's intent
    weights (None for other formats), and the warnings reading them gave."""

    qrels: Qrels
    weights: IntentWeights | None
    warnings: tuple[Problem, ...]


class JudgmentsCache:
    """The last ``entries`` judgments parsed by this process, by (sha256, file name, format)."""

    def __init__(self, entries: int = ENTRIES, max_text_bytes: int = MAX_TEXT_BYTES) -> None:
        self.entries, self.max_text_bytes = entries, max_text_bytes
        self._kept: OrderedDict[tuple[str, str, str], Judged] = OrderedDict()
        self._lock = threading.Lock()

    def parsed(self, blob: Blob, fmt: str) -> Judged | None:
        """``blob``'s judgments parsed as ``fmt`` (as ``load_inputs`` parses them), kept or parsed now; None when
        they have errors or are too large to keep (``load_inputs`` then reads them itself)."""
        if len(blob.data) > self.max_text_bytes:
            return None
        key = (blob.sha256, blob.name, fmt)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                return kept
        parsed = parse_judgments(blob, fmt)
        if parsed.value is None:
            return None
        judged = Judged(*parsed.value, tuple(p for p in parsed.problems if p.severity == "warning"))
        with self._lock:
            self._kept[key] = judged
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)
        return judged
