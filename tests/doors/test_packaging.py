"""The installed package finds the same macro files as the repository, wheel and editable."""

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

PROBE = ("import ndcg_duck, ndcg_duck.sqlfiles as s; print(s.sql_dir()); "
         "print(ndcg_duck.evaluate(r'{recs}', r'{rels}', k=5).summary['users'])")


def probe(env=None, cwd=None):
    code = PROBE.format(recs=ROOT / "examples" / "recs.parquet",
                        rels=ROOT / "examples" / "relevance.csv")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_editable_install_reads_the_repository_sql(tmp_path):
    import ndcg_duck

    if ROOT not in Path(ndcg_duck.__file__).resolve().parents:
        pytest.skip("ndcg_duck is not installed editable from this checkout")
    folder, users = probe(cwd=tmp_path)  # not the repository: the import goes through the install
    assert folder == str(ROOT / "sql")
    assert users == "5"


def test_wheel_ships_and_uses_the_same_sql(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(tmp_path / "dist"), str(ROOT)], check=True, timeout=300)
    wheel, = (tmp_path / "dist").glob("ndcg_duck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for path in (ROOT / "sql").glob("*.sql"):
        shipped = zipfile.ZipFile(wheel).read(f"ndcg_duck/sql/{path.name}").decode("utf-8")
        assert shipped == path.read_text(encoding="utf-8")
    assert "ndcg_duck/sql/ndcg.sql" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    folder, users = probe(env=env, cwd=tmp_path)
    assert folder == str(site / "ndcg_duck" / "sql")
    assert users == "5"
