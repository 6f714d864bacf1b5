"""Run one command inside a mounted container root, as ``docker run`` would start it: called by
``tests/deploy/image.py`` in a private mount namespace (``unshare --mount``) with one JSON argument -- root, uid,
gid, workdir, env, argv and an optional host directory for /data. Mounts /proc and /dev (and /data), enters the
root with chroot, drops to the user and execs the command, keeping this process's pid (the "main process")."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def main() -> None:
    spec = json.loads(sys.argv[1])
    root = spec["root"]
    mounts = [["mount", "-t", "proc", "proc", f"{root}/proc"], ["mount", "--rbind", "/dev", f"{root}/dev"]]
    if spec.get("volume"):
        mounts.append(["mount", "--bind", spec["volume"], f"{root}/data"])
    for command in mounts:
        subprocess.run(command, check=True)
    os.chroot(root)
    os.chdir(spec["workdir"])
    os.setgroups([])
    os.setgid(spec["gid"])
    os.setuid(spec["uid"])
    os.execvpe(spec["argv"][0], spec["argv"], spec["env"])


if __name__ == "__main__":
    main()
