"""The benchmark catalogue: published judgment sets (TREC Web 2009-2014 ad hoc and diversity, NTCIR-13 WWW-1) that
an operator loads as public collections with their citation and topic descriptions, so a participant evaluates a
run against them with no judgments upload (``evalserve collections import``; ``POST /v1/catalogue``)."""
