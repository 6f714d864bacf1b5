"""The ``evalserve`` console script: a one-shot command goes to the warm engine when one is running (``warm``:
nothing heavy is imported before that is known), else runs here (``main.run``) and starts one for the next
command. Every other command runs here."""

from __future__ import annotations

import os
import sys

from evalserve.cli.commands import is_one_shot, requested


def run() -> None:
    argv = sys.argv[1:]
    if is_one_shot(requested(argv)):
        from evalserve.cli import warm

        if warm.enabled():
            code = warm.delegate(argv)
            if code is not None:
                os._exit(code)  # (it printed nothing, and nothing of its own needs tearing down)
            warm.spawn(warm.identity())
    from evalserve.cli.main import run as in_process

    in_process()


if __name__ == "__main__":
    run()
