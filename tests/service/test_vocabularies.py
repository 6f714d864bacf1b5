"""The service's vocabularies are StrEnums listed once: the formats (with their media types) and the values of its
tables. Each member is the very string clients send and see, and every other list of them (the API's answers, the
Python client's choices, docs/api.md) agrees with the enum."""

from __future__ import annotations

import json
import re
from pathlib import Path

from evaluation.formats.run_formats import RUN_FORMATS, RunFormat, detect_run_format
from evaluation.pipeline import QRELS_FORMATS, QrelsFormat
from evaluation.result_formats import (
    EVALUATION_FORMATS,
    LEADERBOARD_FORMATS,
    MEDIA_TYPES,
    META_FORMATS,
    REPORT_FORMATS,
    ResultFormat,
    one_of,
)

ROOT = Path(__file__).resolve().parents[2]


def test_members_are_their_strings() -> None:
    assert json.dumps([ResultFormat.TREC_EVAL, RunFormat.PYEVALL_JSON, QrelsFormat.EVALL]) == \
        '["trec_eval", "pyevall-json", "evall"]'
    assert f"{ResultFormat.LATEX}" == "latex" and ResultFormat("csv") is ResultFormat.CSV
    assert detect_run_format(b"[{}]") == "pyevall-json" and detect_run_format(b"1 Q0 d 1 2.0 t\n") == "trec"


def test_every_result_format_has_one_media_type() -> None:
    assert set(MEDIA_TYPES) == set(ResultFormat)
    assert {f: f.media_type for f in ResultFormat} == MEDIA_TYPES
    assert ResultFormat.LATEX.media_type == "application/x-latex" and ResultFormat.TABLE.media_type == "text/plain"
    assert set(REPORT_FORMATS) <= set(EVALUATION_FORMATS) & set(META_FORMATS)
    assert one_of(META_FORMATS) == "json, table, html or latex"


def test_the_lists_keep_their_order() -> None:
    """The order is the one the CLI's --help, the OpenAPI document's enums and the client show."""
    assert [f.value for f in EVALUATION_FORMATS] == ["json", "tsv", "csv", "trec_eval", "html", "latex"]
    assert [f.value for f in ResultFormat] == [*(f.value for f in EVALUATION_FORMATS), "table"]
    assert [f.value for f in META_FORMATS] == ["json", "table", "html", "latex"]
    assert [f.value for f in LEADERBOARD_FORMATS] == ["json", "csv", "latex", "html"]
    assert list(RUN_FORMATS) == ["auto", "trec", "evall", "pyevall-json", "pyevall-tsv"]
    assert list(QRELS_FORMATS) == ["auto", "trec", "evall"]


def test_the_service_answers_the_enums_media_types() -> None:
    from evalserve.service.jobs.kinds import KINDS
    from evalserve.service.web.api.jobs import MEDIA
    from evalserve.service.web.api.tasks import LEADERBOARD_MEDIA

    assert MEDIA == {"json": "application/json", "tsv": "text/tab-separated-values", "csv": "text/csv",
            "trec_eval": "text/plain", "table": "text/plain", "html": "text/html",
            "latex": "application/x-latex"}  # as they always were
    assert {f.value: MEDIA_TYPES[f] for f in LEADERBOARD_FORMATS} == LEADERBOARD_MEDIA
    assert KINDS["evaluation"].formats == EVALUATION_FORMATS and KINDS["meta"].formats == META_FORMATS
    assert KINDS["evaluation"].formats_message == "an evaluation result is json, tsv, csv, trec_eval, html or latex"
    assert KINDS["meta"].formats_message == "a meta-evaluation result is json, table, html or latex"


def test_the_python_client_lists_the_same_formats() -> None:
    """The client (httpx only) cannot import the engine: its own lists must agree with the enums."""
    from evalserve_client.cli import FORMATS
    from evalserve_client.client import LEADERBOARD_FORMATS as CLIENT_LEADERBOARD_FORMATS

    assert list(FORMATS) == [f.value for f in EVALUATION_FORMATS]
    assert list(CLIENT_LEADERBOARD_FORMATS) == [f.value for f in LEADERBOARD_FORMATS]


def test_the_api_guide_gives_each_format_its_media_type() -> None:
    text = (ROOT / "docs" / "api.md").read_text()
    table = text[text.index("| `format` | Media type | Content |"):].splitlines()[2:]
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| `([a-z/+.-]+)` \|", "\n".join(table[:len(ResultFormat)]), re.M))
    assert rows == {f.value: f.media_type for f in ResultFormat}


def test_the_tables_vocabularies_keep_their_strings() -> None:
    """Stored in the database and shown by the API: the strings themselves must never change."""
    from evalserve.service.store.models import DeliveryState, RegistrationMode, SortOrder, TaskVisibility

    assert [v.value for v in TaskVisibility] == ["public", "private", "blinded"]
    assert [m.value for m in RegistrationMode] == ["open", "code"]
    assert [o.value for o in SortOrder] == ["desc", "asc"]
    assert [s.value for s in DeliveryState] == ["pending", "delivered", "failed"]


def test_the_tables_defaults_are_members() -> None:
    from evalserve.service.jobs.kinds import KINDS, JobKindName
    from evalserve.service.store.models import (
        DeliveryState,
        Job,
        RegistrationMode,
        RunRecord,
        SortOrder,
        Task,
        TaskVisibility,
        WebhookDelivery,
    )

    def default(column: object) -> object:
        return column.default.arg  # type: ignore[attr-defined]

    assert [k.value for k in JobKindName] == ["evaluation", "meta"] and list(KINDS) == list(JobKindName)
    assert default(Job.__table__.c.kind) == JobKindName.EVALUATION  # spelled out: the store ranks below jobs
    assert Job.__table__.c.kind.server_default.arg == JobKindName.EVALUATION
    assert default(Task.__table__.c.visibility) == TaskVisibility.PUBLIC
    assert default(Task.__table__.c.registration) == RegistrationMode.OPEN
    assert default(Task.__table__.c.sort_order) == SortOrder.DESC
    assert default(WebhookDelivery.__table__.c.state) == DeliveryState.PENDING
    assert default(RunRecord.__table__.c.run_format) == RunFormat.TREC


def test_webhook_delivery_outcomes() -> None:
    from evalserve.service.webhooks.delivery import DeliveryOutcome

    assert [o.value for o in DeliveryOutcome] == ["delivered", "retry", "failed", "skipped", "deferred"]


def test_the_cli_offers_plain_strings() -> None:
    """argparse names a bad choice's alternatives with repr(): a member would show as <RunFormat.AUTO: 'auto'>."""
    import argparse

    from evalserve.cli.main import build_parser

    def choices(parser: argparse.ArgumentParser) -> list[object]:
        found: list[object] = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    found += choices(sub)
            elif action.choices is not None:
                found += list(action.choices)
        return found

    offered = choices(build_parser())
    assert "pyevall-json" in offered and "trec_eval" in offered and "table" in offered
    assert [c for c in offered if type(c) is not str] == []
