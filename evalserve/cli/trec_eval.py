"""``evalserve trec_eval ARGS...``: trec_eval 10.0's command line, output and exit codes (a drop-in: scripts that
run ``trec_eval -q -m all_trec qrels run`` can run ``evalserve trec_eval`` instead and read the same bytes).

Options are read as trec_eval reads them (GNU getopt: combined flags ``-qc``, ``-mP.5``, ``-l2``, options after
the files, its long options); the meaning of measure requests and the output are
``evaluation.drop_in.trec_eval``'s. Where trec_eval stops with a misleading message or crashes, this says what is
wrong instead (same exit code where trec_eval has one).
"""

from __future__ import annotations

import getopt
import os
import sys
from typing import Any

from evalserve.cli.commands import help_of

#: trec_eval's short options (getopt string) and long options
SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
LONG = {"help": "h", "version": "v", "query_eval_wanted": "q", "measure=": "m", "complete_rel_info_wanted": "c",
        "level_for_rel=": "l", "nosummary": "n", "Debug_level=": "D", "Judged_docs_only": "J",
        "Number_docs_in_coll=": "N", "Max_retrieved_per_topic=": "M", "Rel_info_format=": "R",
        "Results_format=": "T", "Output_old_results_format": "o", "Zscore=": "Z"}

USAGE = """\
usage: evalserve trec_eval [-h] [-v] [-q] [-m measure[.params]]... [-c] [-n] [-l num] [-M num] [-J] [-N num]
                           [-R qrels|qrels_jg] [-T trec_results] [-D num[.qid]] [-Z zscores_file] qrels_file run_file
"""

HELP = USAGE + """
trec_eval 10.0's command line and output, computed by evalserve (the run file may be '-' for standard input).

  -q            print each topic's values before the summary ('all') lines
  -m MEASURE    measure, trec_eval measure name with optional parameters after a '.', e.g. P.5,10
                ndcg_cut.10 iprec_at_recall..25,.5 utility.2,-1,0,0 ndcg.1=3,2=9; or a nickname:
                official (the default), all_trec, set; repeatable
  -c            average over every judged topic; a topic the run lacks scores 0
  -l NUM        lowest grade that counts as relevant (default 1)
  -n            no summary lines
  -M NUM        evaluate only each topic's first NUM documents
  -J            drop documents that are not judged (or judged with a negative grade) before evaluating
  -N NUM        number of documents in the collection (read by utility's fourth parameter)
  -R FORMAT     judgment format: qrels, or qrels_jg (the second column names a judgment group; for the
                *_avgjg measures, -m qrels_jg); prefs and qrels_prefs are refused
  -T FORMAT     run format: trec_results only
  -D NUM[.QID]  debug level; with .QID only that topic is evaluated (no debug output is printed)
  -Z FILE       print z-scores: each value's (value - mean) / stddev, from FILE's 'qid measure mean stddev'
                lines
  -v            print the version trec_eval reports and exit
  -h            this help

`evalserve measures` documents every measure; `evalserve evaluate` reads more formats and writes JSON, TSV, CSV.
"""


def register(sub: Any) -> None:
    """Listed by ``evalserve --help``; ``evalserve.cli.main`` hands the words after ``trec_eval`` to ``main``."""
    sub.add_parser("trec_eval", help=help_of("trec_eval"), add_help=False)


def main(argv: list[str]) -> int:
    """Run trec_eval's command line ``argv`` (without the program name); returns the exit code."""
    try:
        pairs, files = getopt.gnu_getopt(argv, SHORT, list(LONG))
    except getopt.GetoptError as exc:
        return _usage(str(exc))
    flags = [(LONG.get(k.lstrip("-"), LONG.get(k.lstrip("-") + "=", k.lstrip("-"))), v) for k, v in pairs]
    from evaluation.drop_in.trec_eval import VERSION, TrecEvalUsageError, select

    for key, value in flags:  # in order, as trec_eval's getopt loop: -v exits there, a bad -m stops there
        if key == "v":
            print(f"trec_eval version {VERSION}", file=sys.stderr)
            return 0
        if key == "m":
            try:
                select([value])
            except TrecEvalUsageError as exc:
                return _refuse(str(exc), exc.exit_code)
    if any(k == "h" for k, _ in flags):
        sys.stdout.write(HELP)
        return 0
    if len(files) != 2:
        return _usage(f"expected two files, the judgments and the run; got {len(files)}")
    return _evaluate(flags, files[0], files[1])


def _evaluate(flags: list[tuple[str, str]], qrels_path: str, run_path: str) -> int:
    from evaluation.drop_in.trec_eval import (
        Options,
        TrecEvalUsageError,
        c_atol,
        evaluate,
        last_run_tag,
        last_run_tag_of_file,
        read_zscores,
    )
    from evaluation.file_digest import NoDigest
    from evaluation.formats.source import Blob, DecodeLimits
    from evaluation.formats.trec_run import RunFile
    from evaluation.pipeline import load_inputs
    from evaluation.problems import InputError

    requests: list[str] = []
    options: dict[str, Any] = {}
    zscores_path: str | None = None
    for key, value in flags:
        if key == "m":
            requests.append(value)
        elif key == "q":
            options["per_topic"] = True
        elif key == "n":
            options["summary"] = False
        elif key == "c":
            options["complete"] = True
        elif key == "l":
            options["level"] = c_atol(value)
        elif key == "M":
            options["max_per_topic"] = c_atol(value)
        elif key == "J":
            options["judged_only"] = True
        elif key == "D":
            _level, _, qid = value.partition(".")
            if qid:
                options["only_topic"] = qid
        elif key == "R" and value == "qrels_jg":
            options["rel_format"] = "qrels_jg"
        elif key == "R" and value != "qrels":
            return _refuse(f"-R {value}: evalserve trec_eval reads qrels and qrels_jg judgments only; preference"
                           " judgments are read by `evalserve evaluate`", 2)
        elif key == "T" and value != "trec_results":
            return _refuse(f"-T {value}: evalserve trec_eval reads trec_results runs only", 2)
        elif key == "Z":
            zscores_path = value
    runid = last_run_tag_of_file(run_path) if run_path != "-" and os.path.isfile(run_path) else None
    # a plain run file is read in bounded memory and not hashed (trec_eval prints no digest); anything else whole
    run_source = RunFile(run_path, limits=DecodeLimits.from_env(), digest=NoDigest()) if runid is not None \
        else open_input(run_path)
    if runid is None:
        runid = last_run_tag(run_source.data) if isinstance(run_source, Blob) else ""
    try:
        # (the judgments' bytes are opened by the reader, and let go once read)
        inputs = load_inputs(lambda: open_input(qrels_path), [run_source], qrels_format="trec", run_format="trec")
    except InputError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        if exc.omitted:
            print(f"... and {exc.omitted} more errors", file=sys.stderr)
        return 2
    try:
        zscores = None
        if zscores_path is not None:
            zscores_blob = open_input(zscores_path)
            if isinstance(zscores_blob, InputError):
                return _refuse(f"-Z {zscores_path}: {zscores_blob.problems[0].message}", 2)
            zscores = read_zscores(zscores_blob.data)
        outcome = evaluate(inputs.qrels, inputs.runs[0], runid, requests, Options(**options), zscores)
    except TrecEvalUsageError as exc:
        return _refuse(str(exc), exc.exit_code)
    for note in outcome.notes:
        print(f"evalserve trec_eval: note: {note}", file=sys.stderr)
    if outcome.missing:
        print(f"evalserve trec_eval: not computed (not in evalserve yet): {', '.join(outcome.missing)}",
              file=sys.stderr)
    sys.stdout.write(outcome.text)
    if outcome.exit_code:
        return _refuse(outcome.error, outcome.exit_code)
    return 0


def open_input(path: str) -> Any:
    """The file's bytes as a ``Blob``, or the InputError met opening it (``evalserve evaluate``'s limits)."""
    from evaluation.formats import load
    from evaluation.formats.source import DecodeLimits
    from evaluation.problems import InputError

    try:
        return load(path, limits=DecodeLimits.from_env())
    except InputError as exc:
        return exc


def _usage(message: str) -> int:
    print(f"evalserve trec_eval: {message}", file=sys.stderr)
    sys.stderr.write(USAGE)
    return 1


def _refuse(message: str, code: int) -> int:
    print(f"evalserve trec_eval: {message}", file=sys.stderr)
    return code
