"""Python client for the evalserve evaluation service: upload judgments and runs, queue evaluations, wait for them
and fetch the results -- the same JSON document ``evalserve evaluate`` prints offline.

    from evalserve_client import Client

    with Client("https://evalserve.example.org", token) as client:
        collection = client.create_collection("qrels.txt", name="TREC Web 2012")
        job = client.evaluate(collection, ["bm25.run", "dense.run.gz"], ["AP", "nDCG@10"], per_topic=True)
        document = client.results(job)
"""

from __future__ import annotations

from evalserve_client._version import __version__
from evalserve_client.client import Client
from evalserve_client.errors import ApiError, EvalserveError, JobFailed, ServerUnreachable, WaitTimeout, format_problem

__all__ = ["ApiError", "Client", "EvalserveError", "JobFailed", "ServerUnreachable", "WaitTimeout", "__version__",
           "format_problem"]
