"""Loading published judgment sets as public collections: read the files below the operator's catalogue
directory, validate them as every upload is validated (``uploads.create_collection``), keep the citation and
topic descriptions. Idempotent: a set already loaded (same ``catalogue_key``) is left as it is."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalserve.service.core.errors import ServiceError
from evalserve.service.core.problem_codes import ProblemCode
from evalserve.service.inputs.catalogue.published import PUBLISHED, PublishedSet
from evalserve.service.inputs.catalogue.topics import read_topic_xml
from evalserve.service.inputs.uploads import create_collection
from evalserve.service.store.db import savepoint
from evalserve.service.store.models import Collection
from evalserve.service.store.storage import HasStores


@dataclass(frozen=True)
class Loaded:
    """What became of one set: ``created``, ``exists`` (loaded before) or ``missing`` (its files are not there)."""

    key: str
    status: str
    collection: str | None = None
    detail: str = ""


def wanted(keys: Sequence[str] | None) -> list[PublishedSet]:
    """The sets named (all of them when none is), or a 422 naming every unknown key."""
    if not keys:
        return list(PUBLISHED.values())
    unknown = [k for k in keys if k not in PUBLISHED]
    if unknown:
        raise ServiceError(422, ProblemCode.UNKNOWN_CATALOGUE_KEY, f"no published set {', '.join(unknown)}; known:"
                           f" {', '.join(PUBLISHED)}")
    return [PUBLISHED[k] for k in dict.fromkeys(keys)]


def load_published(s: Session, stores: HasStores, owner_id: str, root: Path,
                   keys: Sequence[str] | None = None) -> list[Loaded]:
    """Load the named sets (default: every one) found below ``root`` as public collections owned by ``owner_id``,
    in the session (the caller commits)."""
    out = []
    for published in wanted(keys):
        existing = s.scalars(select(Collection.id).where(Collection.catalogue_key == published.key)).first()
        if existing is not None:
            out.append(Loaded(published.key, "exists", existing))
            continue
        qrels_path = root / published.qrels
        if not qrels_path.is_file():
            out.append(Loaded(published.key, "missing", detail=f"no file {published.qrels} in {root}"))
            continue
        topics: dict[str, Any] = {}
        detail = ""
        if published.topics and (root / published.topics).is_file():
            try:
                topics = read_topic_xml((root / published.topics).read_bytes())
            except ValueError as exc:  # the judgments are what matters; say why the descriptions are missing
                detail = f"topics not read from {published.topics}: {exc}"
        form = {"name": published.name, "description": published.description, "grade_scale": published.grade_scale,
                "qrels_format": published.qrels_format, "catalogue_key": published.key,
                "citation": published.citation, "topics": topics}
        try:
            with savepoint(s):  # only this set is given up if another import loads it at the same moment
                row = create_collection(s, stores, owner_id, form, (qrels_path.name, qrels_path.read_bytes()), None)
        except IntegrityError:  # loaded at the same moment by another import
            out.append(Loaded(published.key, "exists", detail="loaded concurrently"))
            continue
        out.append(Loaded(published.key, "created", row.id, detail))
    return out
