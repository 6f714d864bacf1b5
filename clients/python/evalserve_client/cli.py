"""``evalserve-client``: evaluate runs on an evalserve server from the shell, with ``evalserve evaluate``'s options
and output -- ``submit --format json`` prints byte for byte what ``evalserve evaluate --format json`` prints for
the same files.

Exit codes, as ``evalserve``'s: 0 success; 2 bad input or usage (each problem printed as
``source:line:col: severity: message [code]`` on stderr, never a traceback); 1 anything else (server
unreachable, refused token, failed job, ...), in one line.

``evalserve-client task ...`` works with shared tasks (leaderboards): ``list``, ``register``, ``submit`` (with
``--wait``: a progress bar, then the scores), ``status`` (``--per-topic``: the score on every topic too) and
``leaderboard``. A submission the task refuses -- an
invalid run (422), a closed phase (409), a used-up quota (429) -- exits 2; a failed evaluation exits 1.
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
from evalserve_client.client import LEADERBOARD_FORMATS, RUN_ID, Client
from evalserve_client.errors import ApiError, JobFailed, Problem, ServerUnreachable, WaitTimeout, format_problem
from evalserve_client.progress import TerminalProgress

EXIT_OK, EXIT_ERROR, EXIT_INPUT = 0, 1, 2

#: What ``evalserve evaluate`` reports when no -m is given (the same default, so outputs stay identical).
DEFAULT_MEASURES = ("AP", "P@10", "nDCG@10", "RR", "Rprec", "Bpref")
FORMATS = ("json", "tsv", "csv", "trec_eval", "html", "latex")  # html, latex: a report for people
TIES = ("trec", "rank", "file")
TOPICS = ("common", "complete")
QRELS_FORMATS = ("auto", "trec", "evall")

#: Refusals caused by what the user gave (a bad file, an unknown measure or id): exit 2.
BAD_INPUT_STATUSES = frozenset({400, 404, 413, 422})
#: Job errors caused by the inputs rather than by the service.
BAD_INPUT_JOB_ERRORS = frozenset({"invalid-input", "invalid-measure"})
#: A shared task also refuses what the participant sent: a closed phase, a taken team name (409), a used-up
#: quota (429) -- exit 2 too.
TASK_INPUT_STATUSES = BAD_INPUT_STATUSES | {409, 429}
SUBMISSION_FORMATS = ("json", "table")
SELECTIONS = ("latest", "all")

Handler = Callable[[argparse.Namespace, Client], int]


class LocalProblems(Exception):
    """Local files that cannot be read, or measures the server does not know; reported like the server's problems,
    before anything is stored."""

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

    _task_parsers(sub, server)
    return parser


def _task_parsers(sub: Any, server: argparse.ArgumentParser) -> None:
    """``task list|register|submit|status|leaderboard``: shared tasks."""
    group = sub.add_parser("task", help="shared tasks: register, submit runs, follow them, read leaderboards",
                           description="Take part in a shared task: register a team, submit runs (checked "
                           "against the phase's deadline and your quota), follow their evaluation and read the "
                           "leaderboard.")
    group.set_defaults(help_parser=group)
    tasks = group.add_subparsers(dest="task_command", metavar="SUBCOMMAND")

    p = tasks.add_parser("list", parents=[server], help="the tasks you may see")
    p.add_argument("--format", choices=SUBMISSION_FORMATS, default="table", help="output format (default: table)")
    p.set_defaults(handler=task_list, parser=p, token_optional=True)

    p = tasks.add_parser("register", parents=[server], help="register your token for a task under a team name")
    p.add_argument("task", metavar="TASK")
    p.add_argument("team", metavar="TEAM")
    p.add_argument("--code", help="the registration code, for tasks that ask for one")
    p.set_defaults(handler=task_register, parser=p, input_statuses=TASK_INPUT_STATUSES)

    p = tasks.add_parser("submit", parents=[server], help="submit a run to a task (and wait for its scores)",
                         description="Submit a run file (gzip files go up as they are) to the task's open phase "
                         "and print the submission; with --wait follow its evaluation and print the scores.",
                         epilog="example: evalserve-client task submit task_... bm25.run.gz --description "
                         "'BM25, k1=0.9' --wait --format table")
    p.add_argument("task", metavar="TASK")
    p.add_argument("run", metavar="RUN", help="the run file ('-' = stdin)")
    p.add_argument("--description", default="", help="what this run is (shown on the leaderboard)")
    p.add_argument("--phase", help="the phase (default: the one open now)")
    p.add_argument("--baseline", action="store_true", help="organisers: submit a baseline run")
    p.add_argument("--wait", action="store_true", help="wait for the evaluation and print the scores")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="with --wait: stop waiting after this long (the evaluation goes on)")
    p.add_argument("--format", choices=SUBMISSION_FORMATS, default="json", help="output format (default: json)")
    p.add_argument("-q", "--quiet", action="store_true", help="print neither warnings nor progress")
    p.set_defaults(handler=task_submit, parser=p, input_statuses=TASK_INPUT_STATUSES)

    p = tasks.add_parser("status", parents=[server], help="a submission's state, progress and scores")
    p.add_argument("task", metavar="TASK")
    p.add_argument("submission", metavar="SUBMISSION")
    p.add_argument("--format", choices=SUBMISSION_FORMATS, default="json", help="output format (default: json)")
    p.add_argument("--per-topic", action="store_true",
                   help="also the score on every topic (your own submissions, if the task gives per-topic feedback)")
    p.set_defaults(handler=task_status, parser=p)

    p = tasks.add_parser("leaderboard", parents=[server], help="print a task's leaderboard",
                         description="Print (or write to -o) the leaderboard as the server renders it. A public "
                         "task's leaderboard needs no token.")
    p.add_argument("task", metavar="TASK")
    p.add_argument("--format", choices=LEADERBOARD_FORMATS, default="json", help="output format (default: json)")
    p.add_argument("--phase", help="the phase (default: the one open now, else the last one)")
    p.add_argument("--version", type=int, metavar="N", help="the judgments version (default: the current one)")
    p.add_argument("--selection", choices=SELECTIONS, default="latest",
                   help="latest: each team's chosen or latest submission (default); all: every submission")
    p.add_argument("-o", "--output", metavar="FILE", help="write the leaderboard here instead of standard output")
    p.set_defaults(handler=task_leaderboard, parser=p, token_optional=True)


def _output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="json", help="output format (default: json)")
    p.add_argument("-o", "--output", metavar="FILE", help="write results here instead of standard output")
    p.add_argument("-q", "--quiet", action="store_true", help="print neither warnings nor progress")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        getattr(args, "help_parser", parser).print_help(sys.stderr)
        return EXIT_INPUT
    if not args.server:
        args.parser.error("no server: give --server URL or set EVALSERVE_URL")
    if not args.server.startswith(("http://", "https://")):
        args.parser.error(f"--server must be an http:// or https:// URL, not {args.server!r}")
    if not args.token and not getattr(args, "token_optional", False):
        args.parser.error("no API token: give --token es_... or set EVALSERVE_TOKEN")
    handler: Handler = args.handler
    try:
        client = Client(args.server, args.token, timeout=args.http_timeout)
    except ValueError as exc:  # the client's own checks of its arguments (a malformed token): usage errors
        args.parser.error(str(exc))
    try:
        with client:
            return handler(args, client)
    except LocalProblems as exc:
        _print_problems(exc.problems)
        return EXIT_INPUT
    except ApiError as exc:
        _print_problems(exc.problems)
        later = f" (retry after {_duration(exc.retry_after)})" if exc.status == 429 and exc.retry_after else ""
        _say(f"the server refused the request ({exc.status} {exc.code}): {exc.detail}{later}")
        return EXIT_INPUT if exc.status in getattr(args, "input_statuses", BAD_INPUT_STATUSES) else EXIT_ERROR
    except JobFailed as exc:
        _print_problems(exc.problems)
        _say(str(exc))
        return EXIT_INPUT if exc.code in BAD_INPUT_JOB_ERRORS else EXIT_ERROR
    except WaitTimeout as exc:
        follow = (f"task status {exc.job.get('task')} {exc.job.get('id')}" if exc.kind == "submission"
                  else f"status {exc.job.get('id')}")
        _say(f"{exc}; it goes on: `evalserve-client {follow}` follows it")
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
    measures = args.measures or list(DEFAULT_MEASURES)
    if qrels is not None:  # nothing is stored before the request is known good: the measures first
        bad = client.check_measures(measures)
        if bad:
            raise LocalProblems(bad)
    collection = args.collection
    if qrels is not None:
        collection = client.create_collection(qrels, name=args.name or Path(args.qrels).name,
                                              description=args.description, grade_scale=args.grade_scale,
                                              qrels_format=args.qrels_format, intent_weights=weights)["id"]
    options: dict[str, Any] = {"ties": args.ties, "topics": args.topics, "per_topic": args.per_topic}
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


# -- shared tasks ---------------------------------------------------------------------------------------------------


def task_list(args: argparse.Namespace, client: Client) -> int:
    tasks = client.tasks()
    if args.format == "json":
        print(json.dumps(tasks, indent=2))
        return EXIT_OK
    rows = [(t["id"], t.get("current_phase") or "-", t.get("role") or "-", t.get("team") or "-",
             t.get("visibility") or "-", t.get("name") or "") for t in tasks]
    _print_table([("TASK", "OPEN PHASE", "ROLE", "TEAM", "VISIBILITY", "NAME"), *rows])
    return EXIT_OK


def task_register(args: argparse.Namespace, client: Client) -> int:
    print(json.dumps(client.register(args.task, args.team, args.code), indent=2))
    return EXIT_OK


def task_submit(args: argparse.Namespace, client: Client) -> int:
    problems: list[Problem] = []
    path, content = _read_local(args.run, problems)
    if problems:
        raise LocalProblems(problems)
    # the task's organisers see the file name, not the participant's directories; problems name the path as given
    name = path if args.run == "-" else Path(path).name
    try:
        submission = client.submit_to_task(args.task, (name, content), description=args.description,
                                           phase=args.phase, baseline=args.baseline)
    except ApiError as exc:
        _name_local_source(exc.problems, name, path)
        raise
    if not args.quiet:
        _print_problems(_name_local_source(submission.get("warnings") or [], name, path))
    if args.wait:
        watcher = _Watcher(args.quiet)
        try:
            submission = client.wait_for_submission(args.task, submission, timeout=args.timeout,
                                                     on_progress=watcher)
        except KeyboardInterrupt:
            watcher.close()
            _say(f"interrupted; submission {submission['id']} is evaluated all the same"
                 f" (`evalserve-client task status {args.task} {submission['id']}` follows it)")
            raise
        except JobFailed as exc:
            watcher.close()
            _print_submission(exc.job, args.format)
            raise
        finally:
            watcher.close()
    _print_submission(submission, args.format)
    return EXIT_OK


def task_status(args: argparse.Namespace, client: Client) -> int:
    submission = client.task_submission(args.task, args.submission)
    if args.per_topic:
        found = client.task_submission_per_topic(args.task, args.submission)
        submission = {**submission, "topics": found.get("topics") or [], "per_topic": found.get("per_topic")}
    _print_submission(submission, args.format)
    return EXIT_OK


def task_leaderboard(args: argparse.Namespace, client: Client) -> int:
    text = client.leaderboard_text(args.task, format=args.format, phase=args.phase, version=args.version,
                                   selection=args.selection)
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _name_local_source(problems: list[Problem], sent: str, path: str) -> list[Problem]:
    """The problems, those in the file sent as ``sent`` now naming it by its local ``path``."""
    for problem in problems:
        if problem.get("source") == sent:
            problem["source"] = path
    return problems


def _print_submission(submission: dict[str, Any], fmt: str) -> None:
    """The submission as JSON, or as ``field  value`` lines followed by one line per score."""
    if fmt == "json":
        print(json.dumps(submission, indent=2))
        return
    run = submission.get("run") or {}
    progress = float(submission.get("progress") or 0.0)
    state = str(submission.get("state") or "")
    stage = str(submission.get("stage") or "")
    rows: list[tuple[str, str]] = [
        ("submission", str(submission.get("id"))), ("task", str(submission.get("task"))),
        ("team", str(submission.get("team"))), ("phase", str(submission.get("phase"))),
        ("run", str(run.get("name") or run.get("filename") or "")),
        ("description", str(submission.get("description") or "")),
        ("state", state + (f" ({stage}, {progress:.0%})" if stage and stage != state and state == "running" else "")),
    ]
    error = submission.get("error")
    if error:
        rows.append(("error", f"{error.get('message', '')} [{error.get('code', '?')}]"))
    scores = submission.get("scores")
    if scores:
        rows.extend((measure, repr(value) if isinstance(value, float) else str(value))
                    for measure, value in scores.items())
    elif submission.get("scores_hidden_until"):
        rows.append(("scores", f"hidden until {submission['scores_hidden_until']}"))
    _print_table([(field, value or "-") for field, value in rows])
    per_topic = submission.get("per_topic")
    if per_topic:
        print()
        _print_table(_per_topic_rows(per_topic, submission.get("topics") or [], scores or {}))


def _per_topic_rows(per_topic: dict[str, dict[str, Any]], topics: Sequence[str],
                    means: dict[str, Any]) -> list[list[str]]:
    """A header, one row per topic with a column per measure, and the means last."""
    measures = list(per_topic)

    def cell(value: Any) -> str:
        return repr(value) if isinstance(value, float) else "-" if value is None else str(value)

    rows = [["topic", *measures]]
    rows.extend([str(t), *(cell(per_topic[m].get(t)) for m in measures)] for t in topics)
    rows.append(["mean", *(cell(means.get(m)) for m in measures)])
    return rows


def _print_table(rows: Sequence[Sequence[str]]) -> None:
    """Left-aligned columns, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def _duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h 5 min``: how long until a refused request may be tried again."""
    whole = int(seconds + 0.999)
    if whole < 120:
        return f"{whole} s"
    hours, minutes = divmod((whole + 59) // 60, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


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
