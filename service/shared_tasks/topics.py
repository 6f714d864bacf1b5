"""A submission is checked at upload against the topics of the task's hidden judgments: a run that shares no topic
with them could only fail (``no-topics-scored``), so it is refused at once (422) and nothing is stored. The answer
tells the participant no more than that there is no topic in common -- never which topics are judged or how many
-- and quotes only the run's own topics."""

from __future__ import annotations

import threading
from collections import OrderedDict

from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.core.state import ServiceState
from evalserve.service.inputs.uploads import to_blob
from evalserve.service.store.models import Collection
from evaluation.evaluator import shown_topics
from evaluation.model import Run
from evaluation.pipeline import parse_judgments

_CACHED = 16  # judgments whose topic sets are kept (tasks being submitted to at once)
_topics: OrderedDict[str, frozenset[str]] = OrderedDict()  # qrels sha256 -> its topics
_lock = threading.Lock()


def judged_topics(s: Session, st: ServiceState, collection: Collection) -> frozenset[str]:
    """The topics of the collection's judgments (read once per judgments file, then kept by its checksum)."""
    sha = collection.qrels_sha256
    with _lock:
        if sha in _topics:
            _topics.move_to_end(sha)
            return _topics[sha]
    blob = to_blob(st.blobs.get(s, sha), collection.qrels_filename, st.settings.decode_limits)
    qrels, _ = parse_judgments(blob, collection.qrels_format).unwrap()
    topics = frozenset(qrels.topics)
    with _lock:
        _topics[sha] = topics
        while len(_topics) > _CACHED:
            _topics.popitem(last=False)
    return topics


def check_common_topics(s: Session, st: ServiceState, collection: Collection, run: Run, filename: str) -> None:
    """422 ``no-topics-scored`` when no topic of ``run`` is judged: the message names the run's topics only."""
    judged = judged_topics(s, st, collection)
    if any(topic in judged for topic in run.topics):
        return
    message = (f"{filename}: no topic of this run is among the task's judged topics, so it could not be scored;"
               f" its {len(run.topics)} topic(s) ({shown_topics(run.topics)}) have no topic in common with the"
               " judgments. Are these the task's topic ids? Nothing was stored and no submission was counted")
    problem = {"line": None, "column": None, "code": ProblemCode.NO_TOPICS_SCORED, "message": message,
               "severity": "error", "source": filename}
    raise ServiceError(422, ProblemCode.NO_TOPICS_SCORED, message, [problem])
