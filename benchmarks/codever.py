"""Which ndcg-duck code a benchmark measures.

The work tree may be edited (or mid-merge) while benchmarks run, so by default the benchmarks
measure a committed revision: `git archive REV ndcg_duck sql` is unpacked once into
benchmarks/data/code/<sha>/ and put first on PYTHONPATH (sys.path in process), where the
package finds its sql/ beside it. REV 'worktree' measures the live work tree instead.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CODE = HERE / "data" / "code"


def resolve(rev: str) -> tuple:
    """(label, path or None): path is the directory to put first on sys.path."""
    if rev == "worktree":
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "ndcg_duck", "sql"],
                               cwd=REPO, capture_output=True, text=True).stdout.strip()
        head = _git("rev-parse", "--short=12", "HEAD")
        return (f"work tree at {head}" + (" with uncommitted changes" if dirty else ""), None)
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    target = CODE / sha
    if not (target / "ndcg_duck" / "__init__.py").exists():
        data = subprocess.run(["git", "archive", "--format=tar", sha, "ndcg_duck", "sql"],
                              cwd=REPO, capture_output=True, check=True).stdout
        tmp = CODE / f".{sha}.tmp{os.getpid()}"
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(tmp)
        tmp.rename(target)
    subject = _git("log", "-1", "--format=%s", sha)[:70]
    return (f"commit {sha[:12]} ({subject})", target)


def activate(rev: str) -> str:
    """Make `import ndcg_duck` in this process (and subprocesses) load revision `rev`."""
    label, path = resolve(rev)
    if path is not None:
        sys.path.insert(0, str(path))
        os.environ["PYTHONPATH"] = str(path) + os.pathsep + os.environ.get("PYTHONPATH", "")
        for name in [m for m in sys.modules if m == "ndcg_duck" or m.startswith("ndcg_duck.")]:
            del sys.modules[name]
    return label


def _git(*args) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.strip()
