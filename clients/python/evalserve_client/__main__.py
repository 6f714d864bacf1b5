"""``python -m evalserve_client``: the ``evalserve-client`` command."""

from __future__ import annotations

import sys

from evalserve_client.cli import main

if __name__ == "__main__":
    sys.exit(main())
