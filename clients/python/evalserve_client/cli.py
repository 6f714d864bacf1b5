"""``evalserve-client``: evaluate runs on an evalserve server from the shell, with ``evalserve evaluate``'s options
and output -- ``submit --format json`` prints byte for byte what ``evalserve evaluate --format json`` prints for
the same files.

Exit codes, as ``evalserve``'s: 0 success; 2 bad input or usage (each problem printed as
``source:line:col: severity: message [code]`` on stderr, never a traceback); 1 anything else (server
unreachable, refused token, failed job, ...), in one line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from evalserve_client._version import __version__
from evalserve_client.client import RUN_ID, Client
from evalserve_client.errors import ApiError, JobFailed, Problem, ServerUnreachable, WaitTimeout, format_problem
from evalserve_client.progress import TerminalProgress

EXIT_OK, EXIT_ERROR, EXIT_INPUT = 0, 1, 2

#: What ``evalserve evaluate`` reports when no -m is given (the same default, so outputs stay identical).
DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref")
FORMATS = ("json", "tsv", "csv", "trec_eval")
TIES = ("trec", "rank", "file")
TOPICS = ("common", "complete")
QRELS_FORMATS = ("auto", "trec", "evall")

#: Refusals caused by what the user gave (a bad file, an unknown measure or id): exit 2.
BAD_INPUT_STATUSES = frozenset({400, 404, 413, 422})
#: Job errors caused by the inputs rather than by the service.
BAD_INPUT_JOB_ERRORS = frozenset({"invalid-input", "invalid-measure"})

Handler = Callable[[argparse.Namespace, Client], int]


class LocalProblems(Exception):
    """Local files that cannot be read; reported like the server's problems, before anything is sent."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"{len(problems)} input problem(s)")
        self.problems = problems


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalserve-client",
        description="Evaluate runs on an evalserve server: upload judgments and runs, wait for the job, print "
        "the results exactly as `evalserve evaluate` would.",
    )
    parser.add_argument("--version", action="version", version=f"evalserve-client {__version__}")
    server = argparse.ArgumentParser(add_help=False)
    server.add_argument("--server", metavar="URL", default=os.environ.get("EVALSERVE_URL"),
                        help="the service's base URL, e.g. https://evalserve.example.org (default: $EVALSERVE_URL)")
    server.add_argument("--token", default=os.environ.get("EVALSERVE_TOKEN"),
                        help="API token es_... (default: $EVALSERVE_TOKEN)")
    server.add_argument("--http-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="timeout of each HTTP request (default: 60)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("submit", parents=[server], help="evaluate runs (create the collection, submit, wait, print)",
                       description="Upload the judgments as a collection (or use --collection), submit the runs, "
                       "wait for the job and print its results.",
                       epilog="example: evalserve-client submit --qrels qrels.txt --run bm25.run -m AP nDCG@10")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--qrels", metavar="FILE", help="judgments file: a new collection is created from it")
    source.add_argument("--collection", metavar="ID", help="evaluate against this existing collection instead")
    p.add_argument("--qrels-format", choices=QRELS_FORMATS, default="auto",
                   help="judgment file layout (default: detected from the first line)")
    p.add_argument("--intent-weights", metavar="FILE", help="NTCIR intent probabilities 'topic intent p'")
    p.add_argument("--name", help="name of the new collection (default: the qrels file name)")
    p.add_argument("--description", default="", help="description of the new collection")
    p.add_argument("--grade-scale", default="", help="grade scale of the new collection, e.g. 0-4 (informative)")
    p.add_argument("--run", required=True, action="append", metavar="FILE", dest="runs",
                   help="a run file ('-' = stdin) or the id of a stored run; repeat for several runs")
    p.add_argument("-m", "--measure", action="extend", nargs="+", metavar="NAME", dest="measures",
                   help=f"measure names, repeatable (default: {' '.join(DEFAULT_MEASURES)})")
    p.add_argument("--ties", choices=TIES, default="trec", help="ranking policy (default: trec)")
    p.add_argument("--topics", choices=TOPICS, default="common", help="topic policy (default: common)")
    p.add_argument("--per-topic", action="store_true", help="also report each topic's value")
    p.add_argument("--wait", action=argparse.BooleanOptionalAction, default=True,
                   help="wait for the job and print its results (default); --no-wait prints the job id")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="stop waiting after this long (the job goes on)")
    _output_options(p)
    p.set_defaults(handler=submit, parser=p)

    p = sub.add_parser("status", parents=[server], help="print a job's state and progress (JSON)")
    p.add_argument("job", metavar="JOB")
    p.set_defaults(handler=status, parser=p)

    p = sub.add_parser("result", parents=[server], help="print a succeeded job's results")
    p.add_argument("job", metavar="JOB")
    p.add_argument("--per-topic", action=argparse.BooleanOptionalAction, default=None,
                   help="include each topic's value (default: what the evaluation asked for)")
    p.add_argument("--wait", action="store_true", help="wait for the job to finish first")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="with --wait: stop waiting after this long")
    _output_options(p)
    p.set_defaults(handler=result, parser=p)

    p = sub.add_parser("cancel", parents=[server], help="cancel a job (print it, JSON)")
    p.add_argument("job", metavar="JOB")
    p.set_defaults(handler=cancel, parser=p)

    p = sub.add_parser("measures", parents=[server], help="list the server's measures")
    p.add_argument("name", nargs="?", help="show one measure (name or alias)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(handler=measures, parser=p, token_optional=True)
    return parser


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="json", help="output format (default: json)")
    p.add_argument("-o", "--output", metavar="FILE", help="write results here instead of standard output")
    p.add_argument("-q", "--quiet", action="store_true", help="print neither warnings nor progress")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    if not args.server:
        args.parser.error("no server: give --server URL or set EVALSERVE_URL")
    if not args.server.startswith(("http://", "https://")):
        args.parser.error(f"--server must be an http:// or https:// URL, not {args.server!r}")
    if not args.token and not getattr(args, "token_optional", False):
        args.parser.error("no API token: give --token es_... or set EVALSERVE_TOKEN")
    handler: Handler = args.handler
    try:
        with Client(args.server, args.token, timeout=args.http_timeout) as client:
            return handler(args, client)
    except LocalProblems as exc:
        _print_problems(exc.problems)
        return EXIT_INPUT
    except ApiError as exc:
        _print_problems(exc.problems)
        _say(f"the server refused the request ({exc.status} {exc.code}): {exc.detail}")
        return EXIT_INPUT if exc.status in BAD_INPUT_STATUSES else EXIT_ERROR
    except JobFailed as exc:
        _print_problems(exc.problems)
        _say(str(exc))
        return EXIT_INPUT if exc.code in BAD_INPUT_JOB_ERRORS else EXIT_ERROR
    except WaitTimeout as exc:
        _say(f"{exc}; it goes on: `evalserve-client status {exc.job.get('id')}` follows it")
        return EXIT_ERROR
    except ServerUnreachable as exc:
        _say(str(exc))
        return EXIT_ERROR
    except httpx.HTTPError as exc:
        _say(f"HTTP error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # writing -o FILE
        _say(f"cannot write {exc.filename or 'the output'}: {exc.strerror or exc}")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


def run() -> None:
    sys.exit(main())


# -- commands -------------------------------------------------------------------------------------------------------


class _Watcher:
    """Remembers the job being waited for (to name it if the wait is interrupted) and draws the progress bar."""

    def __init__(self, quiet: bool) -> None:
        self.job: dict[str, Any] = {}
        self.bar = None if quiet else TerminalProgress()

    def __call__(self, job: dict[str, Any]) -> None:
        self.job = job
        if self.bar is not None:
            self.bar(job)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def submit(args: argparse.Namespace, client: Client) -> int:
    if args.collection and args.intent_weights:
        args.parser.error("--intent-weights belongs to a new collection; it cannot go with --collection")
    problems: list[Problem] = []
    qrels = _read_local(args.qrels, problems) if args.qrels else None
    weights = _read_local(args.intent_weights, problems) if args.intent_weights else None
    runs: list[str | tuple[str, bytes]] = [
        r if args.collection and RUN_ID.fullmatch(r) and not os.path.exists(r) else _read_local(r, problems)
        for r in args.runs
    ]
    if problems:
        raise LocalProblems(problems)
    collection = args.collection
    if qrels is not None:
        collection = client.create_collection(qrels, name=args.name or Path(args.qrels).name,
                                              description=args.description, grade_scale=args.grade_scale,
                                              qrels_format=args.qrels_format, intent_weights=weights)["id"]
    options: dict[str, Any] = {"ties": args.ties, "topics": args.topics, "per_topic": args.per_topic}
    measures = args.measures or list(DEFAULT_MEASURES)
    if not args.wait:
        job = client.evaluate(collection, runs, measures, **options, wait=False)
        print(job["id"])
        return EXIT_OK
    watcher = _Watcher(args.quiet)
    try:
        job = client.evaluate(collection, runs, measures, **options, progress=watcher, timeout=args.timeout)
    except KeyboardInterrupt:
        watcher.close()
        if watcher.job.get("id"):
            _say(f"interrupted; job {watcher.job['id']} goes on (`evalserve-client cancel {watcher.job['id']}`"
                 " stops it)")
        raise
    finally:
        watcher.close()
    return _write_results(client, job, args, args.per_topic)


def status(args: argparse.Namespace, client: Client) -> int:
    print(json.dumps(client.job(args.job), indent=2))
    return EXIT_OK


def result(args: argparse.Namespace, client: Client) -> int:
    job: dict[str, Any] = {"id": args.job}
    if args.wait:
        watcher = _Watcher(args.quiet)
        try:
            job = client.wait(args.job, progress=watcher, timeout=args.timeout)
        finally:
            watcher.close()
    return _write_results(client, job, args, args.per_topic)


def cancel(args: argparse.Namespace, client: Client) -> int:
    print(json.dumps(client.cancel(args.job), indent=2))
    return EXIT_OK


def measures(args: argparse.Namespace, client: Client) -> int:
    entries = client.measures(args.name)
    if args.format == "json":
        sys.stdout.write(json.dumps({"measures": entries}, indent=2) + "\n")
        return EXIT_OK
    for e in entries:  # the layout of `evalserve measures`
        cutoff = {"required": "@k", "optional": "[@k]", "none": ""}.get(e.get("cutoff", "none"), "")
        params = ",".join(f"{p['name']}={p['default'] if p.get('default') is not None else '?'}"
                          for p in e.get("parameters", []))
        print(e["name"] + (f"({params})" if params else "") + cutoff)
        print(f"    {e.get('summary', '')}")
        if e.get("formula"):
            print(f"    {e['formula']}")
        for p in e.get("parameters", []):
            extra = f" [{'|'.join(p['choices'])}]" if "choices" in p else ""
            when = "".join(f" (only with {k}={'|'.join(v)})" for k, v in p.get("applies_when", {}).items())
            print(f"    - {p['name']}{extra}: {p.get('description', '')}"
                  + (" (required)" if p.get("required") else "") + when)
        if e.get("aliases"):
            print(f"    aliases: {', '.join(e['aliases'])}")
        if e.get("default_follows"):
            print(f"    without parameters: the numbers of {e['default_follows']}")
        print(f"    reference: {e.get('reference', '')}\n")
    return EXIT_OK


# -- helpers --------------------------------------------------------------------------------------------------------


def _write_results(client: Client, job: dict[str, Any], args: argparse.Namespace, per_topic: bool | None) -> int:
    """Print (or write to -o) the results exactly as the server rendered them; warnings go to stderr first, as
    ``evalserve evaluate`` prints them."""
    text = client.results_text(job, args.format, per_topic)
    if not args.quiet:
        document = json.loads(text) if args.format == "json" else client.results(job, "json", per_topic=False)
        _print_problems(document.get("meta", {}).get("warnings", []))
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _read_local(path: str, problems: list[Problem]) -> tuple[str, bytes]:
    """A local input as ``(name, bytes)``; the name is the path as given -- the name ``evalserve evaluate`` gives
    the file in warnings (the server keeps only the file name for ``meta.inputs`` and run names, as it does)."""
    if path == "-":
        return "<stdin>", sys.stdin.buffer.read()
    try:
        return path, Path(path).read_bytes()
    except FileNotFoundError:
        problems.append(_local_problem(path, "file-not-found", f"no such file: {path}"))
    except IsADirectoryError:
        problems.append(_local_problem(path, "file-not-readable", f"is a directory, not a file: {path}"))
    except OSError as exc:
        problems.append(_local_problem(path, "file-not-readable", f"cannot read {path}: {exc.strerror}"))
    return path, b""


def _local_problem(source: str, code: str, message: str) -> Problem:
    return {"line": None, "column": None, "code": code, "message": message, "severity": "error", "source": source}


def _print_problems(problems: Sequence[Problem]) -> None:
    for problem in problems:
        print(format_problem(problem), file=sys.stderr)


def _say(message: str) -> None:
    print(f"evalserve-client: {message}", file=sys.stderr)


if __name__ == "__main__":
    run()
