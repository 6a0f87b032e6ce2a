"""What reading s3:// costs (issue 35): `ndcg-duck eval` of the generated files read locally,
against the same files on a local S3 server (moto's server mode on loopback, as the tests use),
each run a fresh subprocess, timed from start to exit.

    python benchmarks/s3_read.py --users 100000 --runs 3

Parquet recommendations are scanned through a pyarrow dataset (only the columns and row ranges
asked for are fetched); the CSV judgments are copied whole to a temporary file and read by
DuckDB's CSV reader. moto is a Python server holding the objects in memory: it is slower than
S3 or MinIO, so the cost measured here is an upper bound of the client's share on loopback, not
a network's. The files are made once by benchmarks/generate.py under --data-dir.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def start_server() -> tuple:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(400):
        try:
            urllib.request.urlopen(endpoint + "/moto-api/", timeout=1)
            return server, endpoint
        except OSError:
            time.sleep(0.05)
    server.terminate()
    raise SystemExit("moto's S3 server did not start")


COPY_THEN_EVAL = """
import subprocess, sys, tempfile
from pyarrow import fs
s3 = fs.S3FileSystem(endpoint_override=sys.argv[1].split("//")[1], scheme="http")
with tempfile.TemporaryDirectory() as folder:
    for name in ("recs.parquet", "rels.parquet"):
        fs.copy_files("bench/" + name, folder + "/" + name, source_filesystem=s3)
    sys.stdout.write(subprocess.run([sys.argv[2], "eval", folder + "/recs.parquet",
                                     folder + "/rels.parquet", "-k", "10", "--format", "json"],
                                    capture_output=True, text=True, check=True).stdout)
"""


def timed(args: list, env: dict) -> tuple:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr}")
    return time.perf_counter() - start, done.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=str(HERE / "data"))
    ap.add_argument("--users", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from generate import generate

    data = Path(args.data_dir) / f"u{args.users}_s{args.seed}"
    if not (data / "recs.parquet").exists():
        generate(args.users, args.seed, data)
    rels_csv = data / "rels.csv"
    if not rels_csv.exists():
        import duckdb

        duckdb.connect().execute(f"COPY (FROM '{data / 'rels.parquet'}') TO '{rels_csv}'")
    env = dict(os.environ, AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
               AWS_DEFAULT_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true")
    server, endpoint = start_server()
    try:
        import boto3

        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="bench", aws_secret_access_key="bench")
        client.create_bucket(Bucket="bench")
        for name in ("recs.parquet", "rels.parquet", "rels.csv"):
            client.upload_file(str(data / name), "bench", name)
        eval_ = [str(Path(sys.executable).parent / "ndcg-duck"), "eval"]
        cases = {
            "Parquet + Parquet, local": [str(data / "recs.parquet"), str(data / "rels.parquet")],
            "Parquet + Parquet, s3://": ["s3://bench/recs.parquet", "s3://bench/rels.parquet",
                                         "--s3-endpoint", endpoint],
            "Parquet + Parquet, s3:// copied whole first (pyarrow), then read locally": None,
            "Parquet + CSV, local": [str(data / "recs.parquet"), str(rels_csv)],
            "Parquet + CSV, s3://": ["s3://bench/recs.parquet", "s3://bench/rels.csv",
                                     "--s3-endpoint", endpoint],
        }
        sizes = {name: (data / name).stat().st_size for name in ("recs.parquet", "rels.parquet",
                                                                   "rels.csv")}
        print(f"{args.users:,} users; recs.parquet {sizes['recs.parquet'] / 1e6:.1f} MB, "
              f"rels.parquet {sizes['rels.parquet'] / 1e6:.1f} MB, "
              f"rels.csv {sizes['rels.csv'] / 1e6:.1f} MB; {args.runs} runs each\n")
        print("| input | median s | min-max s | output |")
        print("|---|---:|---:|---|")
        shown = {}
        for name, given in cases.items():
            times, out = [], None
            for _ in range(args.runs):
                if given is None:  # the alternative to a dataset scan: one GET per file
                    seconds, out = timed([sys.executable, "-c", COPY_THEN_EVAL, endpoint,
                                          eval_[0]], env)
                else:
                    seconds, out = timed(eval_ + given + ["-k", "10", "--format", "json"], env)
                times.append(seconds)
            shown[name] = out
            print(f"| {name} | {statistics.median(times):.2f} | {min(times):.2f}-"
                  f"{max(times):.2f} | {'same' if out == shown[next(iter(shown))] else 'DIFFERS'} |")
        if len(set(shown.values())) != 1:
            raise SystemExit("the outputs differ")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
