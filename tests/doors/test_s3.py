"""s3:// inputs and outputs (ndcg_duck/objectstore.py), against moto's S3 server on loopback: the
same numbers as the same files read locally, outputs put whole, one-line errors naming the URL,
and no secret in anything the run prints or writes."""

import gzip
import io
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from conftest import ROOT
from ndcg_duck.cli import cli
from ndcg_duck.cli import common as cli_module
from ndcg_duck.evaluation import progress as progress_module

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto.server")

EXAMPLES = ROOT / "examples"
TREC = ROOT / "tests" / "data" / "trec_eval"
BUCKET = "recs"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """moto's S3 server on a free loopback port, with the example files uploaded (as files, and a
    directory of Parquet part files with Spark's _SUCCESS), a user whose key may do anything, and
    authentication on: {'endpoint', 'key', 'secret', 'client'}."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("moto") / "server.log"
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                                   "-p", str(port)], stdout=out, stderr=subprocess.STDOUT)
    try:
        for _ in range(400):
            try:
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=1)
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("moto's S3 server did not start: " + log.read_text()[-2000:])
        anyone = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup",
                      aws_secret_access_key="setup")
        iam = boto3.client("iam", **anyone)
        iam.create_user(UserName="tester")
        iam.put_user_policy(UserName="tester", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17",
             "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName="tester")["AccessKey"]
        client = boto3.client("s3", **anyone)
        client.create_bucket(Bucket=BUCKET)
        for name in ("recs.parquet", "recs_new.parquet", "recs.json", "relevance.csv",
                     "listeners.csv"):
            client.upload_file(str(EXAMPLES / name), BUCKET, f"ex/{name}")
        for name in ("train.csv", "items.json"):
            client.upload_file(str(EXAMPLES / "beyond" / name), BUCKET, f"beyond/{name}")
        # trec_eval's test run and qrels, as named there (no extension) and as run.trec, qrels.gz
        for name, stored in (("results.test", "results.test"), ("qrels.test", "qrels.test"),
                             ("results.test", "run.trec"), ("qrels.test", "qrels.gz")):
            data = (TREC / name).read_bytes()
            client.put_object(Bucket=BUCKET, Key=f"trec/{stored}", Body=gzip.compress(
                data, mtime=0) if stored.endswith(".gz") else data)
        # the recommendations split by user into two part files, as Spark writes a directory
        table = pq.read_table(EXAMPLES / "recs.parquet")
        half = table.num_rows // 2
        for number, part in enumerate((table.slice(0, half), table.slice(half))):
            sink = io.BytesIO()
            pq.write_table(part, sink)
            client.put_object(Bucket=BUCKET, Key=f"parts/part-{number}.parquet",
                              Body=sink.getvalue())
        client.put_object(Bucket=BUCKET, Key="parts/_SUCCESS", Body=b"")
        # two runs' files that share the user u1, as CSV and as Parquet
        for name, rows in (("a", [("u1", "i1"), ("u2", "i2")]),
                           ("b", [("u1", "i3"), ("u3", "i1")])):
            client.put_object(Bucket=BUCKET, Key=f"two/{name}.csv", Body="user_id,item_id,rank\n"
                              + "".join(f"{user},{item},1\n" for user, item in rows))
            sink = io.BytesIO()
            pq.write_table(pa.table({"user_id": [u for u, _ in rows],
                                     "item_id": [i for _, i in rows], "rank": [1, 1]}), sink)
            client.put_object(Bucket=BUCKET, Key=f"two/{name}.parquet", Body=sink.getvalue())
        urllib.request.urlopen(urllib.request.Request(  # from now on every request is signed
            endpoint + "/moto-api/reset-auth", data=b"0", method="POST",
            headers={"Content-Type": "text/plain"}), timeout=5)
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id=key["AccessKeyId"],
                              aws_secret_access_key=key["SecretAccessKey"])
        yield {"endpoint": endpoint, "key": key["AccessKeyId"],
               "secret": key["SecretAccessKey"], "client": client}
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def aws(store, monkeypatch, tmp_path):
    """The store's credentials in the AWS environment variables, and no profile or instance
    metadata to fall back on."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", store["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", store["secret"])
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    return store


def ndcg(args, store=None):
    extra = ["--s3-endpoint", store["endpoint"]] if store else []
    return CliRunner().invoke(cli, [*args, *extra])


def url(key):
    return f"s3://{BUCKET}/{key}"


def local(name):
    return str(EXAMPLES / name)


def body(store, key) -> bytes:
    return store["client"].get_object(Bucket=BUCKET, Key=key)["Body"].read()


# --- the same numbers as the same files on disk --------------------------------------------------

@pytest.mark.parametrize("recs, rels, args", [
    ("ex/recs.parquet", "ex/relevance.csv", ["-k", "3,all"]),  # Parquet: a dataset DuckDB scans
    ("ex/recs.json", "ex/relevance.csv", []),  # JSON: a copy read by DuckDB's reader
    ("parts/", "ex/relevance.csv", []),  # a directory of part files, _SUCCESS left out
    ("parts/*.parquet", "ex/relevance.csv", ["--format", "json"]),  # a glob
])
def test_eval_reads_s3_as_the_same_files_on_disk(aws, recs, rels, args):
    names = {"parts/": "recs.parquet", "parts/*.parquet": "recs.parquet"}
    expected = ndcg(["eval", local(names.get(recs, recs.split("/")[-1])),
                     local(rels.split("/")[-1]), *args])
    result = ndcg(["eval", url(recs), url(rels), *args], aws)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected.stdout


@pytest.mark.parametrize("run, qrels, args", [
    # told by their first lines (no known extension), trec_eval's lines per query (-q) and all
    ("trec/results.test", "trec/qrels.test", ["-k", "trec,all", "--missing", "skip",
                                              "--format", "trec", "--per-user", "-"]),
    # the run named by --recs-format; the qrels gzip-compressed, told by its first lines
    ("trec/run.trec", "trec/qrels.gz", ["--recs-format", "trec", "-m",
                                        "P@10,map,recip_rank,Rprec", "--format", "json"]),
])
def test_eval_reads_trec_runs_and_qrels_on_s3(aws, run, qrels, args):
    """A TREC run and qrels on S3 give what the same files on disk give: trec_eval's measures, its
    runid (the run's tag) and per-query lines; a compressed qrels is told and read as on disk."""
    expected = ndcg(["eval", str(TREC / "results.test"), str(TREC / "qrels.test"), *args])
    assert expected.exit_code == 0, expected.output
    result = ndcg(["eval", url(run), url(qrels), *args], aws)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected.stdout


def test_eval_with_segments_train_and_items_on_s3_writes_per_user_and_plot(aws, tmp_path):
    pytest.importorskip("matplotlib")
    beyond = ["-m", "ndcg,novelty,coverage", "-k", "5", "--by", "activity"]
    expected = ndcg(["eval", local("recs.parquet"), local("relevance.csv"), *beyond,
                     "--segments", local("listeners.csv"),
                     "--train", str(EXAMPLES / "beyond" / "train.csv"),
                     "--items", str(EXAMPLES / "beyond" / "items.json"),
                     "--per-user", str(tmp_path / "users.csv")])
    assert expected.exit_code == 0, expected.output
    result = ndcg(["eval", url("ex/recs.parquet"), url("ex/relevance.csv"), *beyond,
                   "--segments", url("ex/listeners.csv"), "--train", url("beyond/train.csv"),
                   "--items", url("beyond/items.json"), "--per-user", url("out/users.csv"),
                   "--plot", url("out/users.png")], aws)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected.stdout
    assert body(aws, "out/users.csv") == (tmp_path / "users.csv").read_bytes()
    assert body(aws, "out/users.png").startswith(b"\x89PNG\r\n")


def test_compare_reads_and_writes_s3(aws, tmp_path):
    pytest.importorskip("scipy")
    pytest.importorskip("matplotlib")
    args = ["-k", "5", "--test", "none"]
    expected = ndcg(["compare", local("relevance.csv"), "--run", f"old={local('recs.parquet')}",
                     "--run", f"new={local('recs_new.parquet')}", *args,
                     "--per-user", str(tmp_path / "pairs.parquet")])
    assert expected.exit_code == 0, expected.output
    result = ndcg(["compare", url("ex/relevance.csv"), "--run", f"old={url('ex/recs.parquet')}",
                   "--run", f"new={url('ex/recs_new.parquet')}", *args,
                   "--per-user", url("out/pairs.parquet"), "--plot", url("out/pairs.png")], aws)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected.stdout
    written = pq.read_table(io.BytesIO(body(aws, "out/pairs.parquet")))
    assert written.equals(pq.read_table(tmp_path / "pairs.parquet"))
    assert body(aws, "out/pairs.png").startswith(b"\x89PNG\r\n")


def test_python_api_takes_s3_endpoint(aws):
    import ndcg_duck

    on_s3 = ndcg_duck.evaluate(url("ex/recs.parquet"), url("ex/relevance.csv"), k=5,
                               s3_endpoint=aws["endpoint"])
    on_disk = ndcg_duck.evaluate(local("recs.parquet"), local("relevance.csv"), k=5)
    assert on_s3.summary == on_disk.summary
    assert on_s3.per_user.equals(on_disk.per_user)


TWO_RUNS = ("if they are two runs, evaluate each on its own; if they are parts of one run, give "
            "each user's rows in one file")


def test_python_says_s3_errors_in_its_words(aws):
    import ndcg_duck

    with pytest.raises(ndcg_duck.InputError) as raised:
        ndcg_duck.evaluate("s3://nowhere/recs.parquet", local("relevance.csv"),
                           s3_endpoint=aws["endpoint"])
    assert str(raised.value) == (f"recommendations file s3://nowhere/recs.parquet: bucket "
                                 f"'nowhere' does not exist at s3_endpoint='{aws['endpoint']}'; "
                                 f"check the URL")


# --- errors --------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, code, message", [
    (["eval", "s3://nowhere/recs.parquet", url("ex/relevance.csv")], 1,
     "recommendations file s3://nowhere/recs.parquet: bucket 'nowhere' does not exist at "
     "--s3-endpoint '{endpoint}'; check the URL"),
    (["eval", url("ex/recs.parquet"), url("ex/missing.csv")], 1,
     "relevance file s3://recs/ex/missing.csv does not exist"),
    (["eval", url("ex/recs*.csv"), url("ex/relevance.csv")], 1,
     "recommendations glob s3://recs/ex/recs*.csv matches no file"),
    (["eval", url("two/*.csv"), url("ex/relevance.csv")], 1,  # copies, named by their URLs
     "recommendations glob s3://recs/two/*.csv: user u1 appears in more than one of its 2 files "
     "(s3://recs/two/a.csv and s3://recs/two/b.csv): " + TWO_RUNS),
    (["eval", url("two/"), url("ex/relevance.csv"), "--recs-format", "parquet"], 1,
     "recommendations directory s3://recs/two/: user u1 appears in more than one of its 2 files "
     "(s3://recs/two/a.parquet and s3://recs/two/b.parquet): " + TWO_RUNS),
    (["eval", url("ex/recs.parquet"), url("ex/relevance.csv"), "--per-user",
      "s3://nowhere/users.csv"], 2,
     "cannot write output file s3://nowhere/users.csv: bucket 'nowhere' does not exist at "
     "--s3-endpoint '{endpoint}'; check the URL or create it first"),
    (["eval", url("ex/recs.parquet"), url("ex/relevance.csv"), "--per-user",
      url("ex/relevance.csv")], 2,
     "--per-user s3://recs/ex/relevance.csv is the relevance file RELEVANCE "
     "(s3://recs/ex/relevance.csv): write the per-user table elsewhere"),
    (["eval", url("parts/"), url("ex/relevance.csv"), "--per-user", url("parts/users.parquet")],
     2, "--per-user s3://recs/parts/users.parquet is inside the recommendations directory RECS "
        "(s3://recs/parts/): write the per-user table elsewhere"),
])
def test_s3_errors_are_one_line_naming_the_url(aws, args, code, message):
    result = ndcg(args, aws)
    assert result.exit_code == code, result.output
    assert result.stderr.strip().splitlines()[-1] == \
        "Error: " + message.format(endpoint=aws["endpoint"])
    assert "Traceback" not in result.output


@pytest.mark.parametrize("key, secret", [("AKIAWRONGWRONGWRONG1", "wrong"), (None, "wrong")])
def test_bad_credentials_are_one_line_naming_the_url(aws, monkeypatch, key, secret):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", key or aws["key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    result = ndcg(["eval", url("ex/recs.parquet"), url("ex/relevance.csv")], aws)
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == (
        "Error: cannot read recommendations file s3://recs/ex/recs.parquet: access denied "
        "(ACCESS_DENIED): check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
        "or AWS_PROFILE) and what they may access")


def test_the_endpoint_may_come_from_aws_endpoint_url(aws, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws["endpoint"])
    result = ndcg(["eval", url("ex/recs.parquet"), local("relevance.csv"), "-k", "5"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ndcg(["eval", local("recs.parquet"), local("relevance.csv"),
                                  "-k", "5"]).stdout


def test_an_unreachable_endpoint_is_one_line_naming_the_url(aws):
    closed = f"http://127.0.0.1:{_free_port()}"
    result = CliRunner().invoke(cli, ["eval", url("ex/recs.parquet"), local("relevance.csv"),
                                      "--s3-endpoint", closed])
    assert result.exit_code == 1
    line, = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: cannot read recommendations file s3://recs/ex/recs.parquet: "
                           f"cannot reach --s3-endpoint '{closed}' (")
    assert line.endswith("); check the endpoint")


def test_bad_s3_endpoint_is_a_usage_error(aws):
    result = CliRunner().invoke(cli, ["eval", url("ex/recs.parquet"), url("ex/relevance.csv"),
                                      "--s3-endpoint", "http://a b"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for '--s3-endpoint': 'http://a b' is not an address: give "
        "HOST[:PORT], or http://HOST[:PORT] for a store without TLS")


SPARK_S3 = ("--engine spark reads and writes object stores through Hadoop's s3a connector, not "
            "s3://: give s3a://recs/{key} and add the hadoop-aws jars of your Spark's Hadoop "
            "version (--spark-conf spark.jars.packages=org.apache.hadoop:hadoop-aws:VERSION; "
            "spark.hadoop.fs.s3a.endpoint=URL for another store), or leave out --engine spark: "
            "the default engine reads s3:// itself")


@pytest.mark.parametrize("args, message", [
    (["eval", url("ex/recs.parquet"), local("relevance.csv")],
     "RECS s3://recs/ex/recs.parquet: " + SPARK_S3.format(key="ex/recs.parquet")),
    (["eval", local("recs.parquet"), local("relevance.csv"), "--per-user", url("u/")],
     "--per-user s3://recs/u/: " + SPARK_S3.format(key="u/")),
    (["compare", local("relevance.csv"), "--run", f"a={local('recs.parquet')}", "--run",
      f"b={url('ex/recs_new.parquet')}"],
     "--run b s3://recs/ex/recs_new.parquet: " + SPARK_S3.format(key="ex/recs_new.parquet")),
    (["eval", local("recs.parquet"), local("relevance.csv"), "--s3-endpoint", "localhost:9000"],
     "--s3-endpoint is the default engine's: with --engine spark, name the store with "
     "--spark-conf spark.hadoop.fs.s3a.endpoint=localhost:9000"),
])
def test_spark_engine_refuses_s3_with_what_to_configure(args, message):
    """This machine reaches no Maven repository, so Spark's s3a jars cannot be fetched: s3:// on
    Spark is an error that says what to configure, before Spark starts."""
    result = CliRunner().invoke(cli, [*args, "--engine", "spark"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1] == "Error: " + message


# --- no secret anywhere ---------------------------------------------------------------------------

def test_no_output_carries_the_secret_key(aws, monkeypatch):
    """Every stream and file of a good run (progress on), a failing one and one with bad
    credentials: the secret key is in none of them."""
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    monkeypatch.setattr(cli_module, "stderr_is_terminal", lambda: True)
    said = []
    for args in (["eval", url("ex/recs.parquet"), url("ex/relevance.csv"), "--per-user", "-",
                  "--batch-users", "2"],
                 ["eval", url("ex/recs.json"), url("ex/relevance.csv"), "--per-user",
                  url("out/secret-check.json")],
                 ["eval", url("ex/recs.parquet"), url("ex/nothing.csv")]):
        result = ndcg(args, aws)
        said += [result.stdout, result.stderr]
    said.append(body(aws, "out/secret-check.json").decode())
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws["secret"][::-1])  # a wrong one
    result = ndcg(["eval", url("ex/recs.parquet"), url("ex/relevance.csv")], aws)
    assert result.exit_code == 1
    said += [result.stdout, result.stderr]
    assert all(said[:2]) and "ndcg-duck: reading the inputs" in said[1]  # progress was shown
    for text in said:
        assert aws["secret"] not in text and aws["secret"][::-1] not in text


# --- the examples of docs/object-stores.md -----------------------------------------------

def test_the_readme_object_store_examples_run_as_on_disk(aws, tmp_path, monkeypatch):
    """The commands of docs/object-stores.md's blocks, against the local server (the
    endpoint they name, or AWS_ENDPOINT_URL), print what the same commands print on the local
    files, and write the same per-user file."""
    pytest.importorskip("scipy")
    import shlex

    from test_docs_examples import blocks

    commands = [shlex.split(line)[1:] for block in blocks("sh", "docs/object-stores.md")
                for line in block.splitlines() if line.startswith("ndcg-duck ")]
    assert len(commands) == 3, commands
    client = aws["client"]
    client.create_bucket(Bucket="my-bucket")
    for name in ("recs.parquet", "recs_new.parquet", "relevance.csv"):
        client.upload_file(str(EXAMPLES / name), "my-bucket", f"examples/{name}")
    for name in ("results.test", "qrels.test"):  # tests/data/trec_eval's, as the TREC example's
        client.upload_file(str(TREC / name), "my-bucket", f"trec/{name}")
    monkeypatch.setenv("AWS_ENDPOINT_URL", aws["endpoint"])
    for args in commands:
        on_s3 = [aws["endpoint"] if a == "http://localhost:9000" else a for a in args]
        on_disk = [a.replace("s3://my-bucket/examples/", f"{EXAMPLES}/")
                   .replace("s3://my-bucket/trec/", f"{TREC}/")
                   .replace("s3://my-bucket/scores/", f"{tmp_path}/") for a in args]
        if "--s3-endpoint" in on_disk:
            at = on_disk.index("--s3-endpoint")
            del on_disk[at:at + 2]
        got, want = ndcg(on_s3), ndcg(on_disk)
        assert got.exit_code == 0 and want.exit_code == 0, (got.output, want.output)
        assert got.stdout == want.stdout
    written = client.get_object(Bucket="my-bucket", Key="scores/users.parquet")["Body"].read()
    assert written == (tmp_path / "users.parquet").read_bytes()
