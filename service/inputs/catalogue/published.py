"""The published judgment sets the catalogue knows, as data: where each one's files lie below the operator's data
directory (the layout of ``../shared/data``), what it is, how to cite it. Facts only; the files are the
publishers' (NIST, NTCIR), never shipped inside the package."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublishedSet:
    """One judgment set: ``qrels`` and ``topics`` are paths relative to the catalogue directory."""

    key: str  # stable id: the collection's ``catalogue_key``
    name: str
    qrels: str
    description: str
    citation: str
    grade_scale: str
    topics: str | None = None  # TREC Web topic XML (query, description, subtopics)
    qrels_format: str = "auto"


_WEB = "trec-web-2009-2014"
_ADHOC_GRADES = "-2 spam, 0 not relevant, 1 relevant, 2 highly relevant, 3 key, 4 navigational"
_CITATIONS = {
    2009: "C. L. A. Clarke, N. Craswell, I. Soboroff. Overview of the TREC 2009 Web Track. TREC 2009.",
    2010: "C. L. A. Clarke, N. Craswell, I. Soboroff, G. V. Cormack. Overview of the TREC 2010 Web Track."
          " TREC 2010.",
    2011: "C. L. A. Clarke, N. Craswell, I. Soboroff, E. M. Voorhees. Overview of the TREC 2011 Web Track."
          " TREC 2011.",
    2012: "C. L. A. Clarke, N. Craswell, E. M. Voorhees. Overview of the TREC 2012 Web Track. TREC 2012.",
    2013: "K. Collins-Thompson, P. Bennett, F. Diaz, C. L. A. Clarke, E. M. Voorhees. TREC 2013 Web Track"
          " Overview. TREC 2013.",
    2014: "K. Collins-Thompson, C. Macdonald, P. Bennett, F. Diaz, E. M. Voorhees. TREC 2014 Web Track Overview."
          " TREC 2014.",
}
#: (year, ad hoc qrels or None, ndeval diversity qrels, topic XML)
_WEB_FILES = (
    (2009, None, "2009/qrels.diversity", "2009/wt09.topics.full.xml"),
    (2010, "2010/10.adhoc-qrels.final.txt", "2010/10.diversity-qrels.final.txt", "2010/wt2010-topics.xml"),
    (2011, "2011/qrels.adhoc.txt", "2011/qrels-for-ndeval.txt", "2011/full-topics.xml"),
    (2012, "2012/qrels.adhoc.txt", "2012/qrels-for-ndeval.txt", "2012/full-topics.xml"),
    (2013, "2013/qrels.adhoc.txt", "2013/qrels.ndeval.txt", "2013/trec2013-topics.xml"),
    (2014, "2014/qrels.adhoc.txt", "2014/qrels.ndeval.txt", "2014/trec2014-topics.xml"),
)


def _web_sets() -> tuple[PublishedSet, ...]:
    sets: list[PublishedSet] = []
    for year, adhoc, diversity, topics in _WEB_FILES:
        if adhoc is not None:
            sets.append(PublishedSet(
                f"trec-web-{year}-adhoc", f"TREC {year} Web Track, ad hoc", f"{_WEB}/{adhoc}",
                f"Official NIST ad hoc judgments of the TREC {year} Web Track (ClueWeb09).", _CITATIONS[year],
                _ADHOC_GRADES + (" (2011: 3 navigational)" if year == 2011 else ""), f"{_WEB}/{topics}"))
        sets.append(PublishedSet(
            f"trec-web-{year}-diversity", f"TREC {year} Web Track, diversity (ndeval)", f"{_WEB}/{diversity}",
            f"Official NIST per-subtopic judgments of the TREC {year} Web Track diversity task, as ndeval reads"
            " them (topic subtopic docno grade).", _CITATIONS[year],
            "per subtopic: 0 not relevant, higher is more relevant", f"{_WEB}/{topics}"))
    return tuple(sets)


PUBLISHED: dict[str, PublishedSet] = {s.key: s for s in (
    *_web_sets(),
    PublishedSet(
        "ntcir-13-www-1", "NTCIR-13 We Want Web (WWW-1), English", "ntcir-www/wwwE.qrels",
        "Graded judgments (L0-L4) of the NTCIR-13 WWW-1 English subtask (ClueWeb12-B13), topics 0001-0100.",
        "C. Luo, T. Sakai, Y. Liu, Z. Dou, C. Xiong, J. Xu. Overview of the NTCIR-13 We Want Web Task. NTCIR-13,"
        " 2017.", "L0 not relevant to L4 highly relevant"),
)}
