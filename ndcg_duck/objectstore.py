"""Inputs and outputs on S3 (and S3-compatible stores), without a DuckDB extension: pyarrow's S3
filesystem lists, reads and writes the objects.

A Parquet input is opened as a pyarrow dataset that DuckDB scans (evaluation/inputs.py registers
it): only the columns a query uses are fetched, and filters reach the scan. A CSV, JSON or TREC
input is copied whole to a temporary directory (under TMPDIR) and read by DuckDB's own readers,
so it is parsed as the same file on disk would be. An output (--per-user, --plot) is written to a
local temporary file, then put as one object once it is complete.

Credentials, region and endpoint come from the AWS SDK's usual places (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_PROFILE and ~/.aws, AWS_REGION or
AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL), and --s3-endpoint (s3_endpoint=)
names an S3-compatible store. `using`
holds the endpoint and the run's temporary copies for the length of a run; no message says a
credential.
"""

from __future__ import annotations

import contextvars
import functools
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from typing import Optional

from .errors import InputError

SCHEME = "s3://"
# the AWS errors that mean the store refused who we are, as pyarrow names them
REFUSED = {"ACCESS_DENIED", "SIGNATURE_DOES_NOT_MATCH", "INVALID_ACCESS_KEY_ID",
           "EXPIRED_TOKEN", "INVALID_CLIENT_TOKEN_ID", "UNRECOGNIZED_CLIENT",
           "MISSING_AUTHENTICATION_TOKEN", "INCOMPLETE_SIGNATURE"}
CREDENTIALS = ("check the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
               "AWS_PROFILE) and what they may access")
ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")  # the AWS SDK's, in its order
ENDPOINT = re.compile(r"^(?:(https?)://)?([A-Za-z0-9._-]+(?::\d+)?)/?$")


def is_url(path) -> bool:
    """Whether `path` names an S3 object, prefix or glob (s3://bucket/key)."""
    return isinstance(path, str) and path[:len(SCHEME)].lower() == SCHEME


def split(url: str) -> tuple[str, str]:
    """(bucket, key) of an s3:// URL; the key may be empty (the whole bucket)."""
    bucket, _, key = url[len(SCHEME):].partition("/")
    return bucket, key


def check_endpoint(value) -> Optional[str]:
    """--s3-endpoint (s3_endpoint=): host[:port], or http:// or https:// host[:port]."""
    if value is None:
        return None
    if not isinstance(value, str) or not ENDPOINT.match(value.strip()):
        raise InputError(f"--s3-endpoint {value!r} is not an address: give HOST[:PORT], or "
                         f"http://HOST[:PORT] for a store without TLS", usage=True)
    return value.strip()


class _Run:
    """What one run keeps: the endpoint, its filesystems (one per bucket region) and the
    directory of its temporary copies."""

    def __init__(self, endpoint: Optional[str]):
        self.endpoint = endpoint
        self.systems = {}
        self.folder = None

    def copies(self) -> str:
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="ndcg-duck-s3-")
        return self.folder

    def close(self):
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


_current: contextvars.ContextVar = contextvars.ContextVar("ndcg_duck_s3", default=None)
_fallback = None  # for reads outside `using` (a direct call of inputs.attach_source)


@contextmanager
def using(endpoint: Optional[str] = None):
    """The run's S3 settings: `endpoint` (None: the AWS SDK's own) and a directory for the copies
    of text inputs, removed at the end. Inside another `using` of the same endpoint, the outer
    one's (so copies last as long as the outermost run)."""
    endpoint = check_endpoint(endpoint)
    outer = _current.get()
    if outer is not None and outer.endpoint == endpoint:
        yield outer
        return
    run = _Run(endpoint)
    token = _current.set(run)
    try:
        yield run
    finally:
        _current.reset(token)
        run.close()


def within(fn):
    """`fn` run inside `using` its keyword s3_endpoint."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with using(kwargs.get("s3_endpoint")):
            return fn(*args, **kwargs)
    return wrapper


def _run() -> _Run:
    global _fallback
    run = _current.get()
    if run is None:
        if _fallback is None:
            import atexit

            _fallback = _Run(None)
            atexit.register(_fallback.close)
        run = _fallback
    return run


def filesystem(bucket: str = ""):
    """pyarrow's S3 filesystem for the run's endpoint (and, on AWS without a configured region,
    the bucket's region)."""
    from pyarrow import fs as pafs

    run = _run()
    options = {}
    endpoint = _endpoint()
    if endpoint:
        found = ENDPOINT.match(endpoint[0])
        options.update(endpoint_override=found.group(2), scheme=found.group(1) or "https")
    elif bucket and not (os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")):
        try:
            options["region"] = pafs.resolve_s3_region(bucket)
        except (OSError, ValueError):
            pass  # the SDK's default region; a wrong one is reported when the bucket is read
    key = tuple(sorted(options.items()))
    if key not in run.systems:
        run.systems[key] = pafs.S3FileSystem(**options)
    return run.systems[key]


def _endpoint() -> Optional[tuple]:
    """(the run's endpoint, how messages name where it was given): --s3-endpoint, or the AWS
    SDK's variables AWS_ENDPOINT_URL_S3 and AWS_ENDPOINT_URL; None for AWS S3."""
    run = _run()
    if run.endpoint:
        return run.endpoint, "--s3-endpoint"
    for variable in ENDPOINT_VARIABLES:
        value = os.environ.get(variable, "").strip()
        if value:
            if not ENDPOINT.match(value):
                raise InputError(f"{variable} {value!r} is not an address: give HOST[:PORT], or "
                                 f"http://HOST[:PORT] for a store without TLS", usage=True)
            return value, variable
    return None


def _endpoint_words() -> str:
    """"--s3-endpoint 'URL'" (or the variable that gave it), '' for AWS S3."""
    endpoint = _endpoint()
    return f"{endpoint[1]} {endpoint[0]!r}" if endpoint else ""


def problem(exc: Exception) -> str:
    """What went wrong, from pyarrow's S3 error: the AWS error without request ids, and what to
    check. Never a credential: pyarrow's messages name buckets, keys and operations only."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    found = re.search(r"AWS Error (\w+) during (\w+) operation:? ?(.*)", text)
    if not found:
        return re.sub(r" ?\(Request ID: [^)]*\)", "", text)
    code, said = found.group(1), re.sub(r" ?\(Request ID: [^)]*\)", "", found.group(3)).strip()
    if code in REFUSED:
        return f"access denied ({code}): {CREDENTIALS}"
    if code == "NETWORK_CONNECTION" or (code == "UNKNOWN" and "connect" in said.lower()):
        said = re.sub(r"^curlCode: \d+, ", "", said).rstrip(".")
        return f"cannot reach {_endpoint_words() or 'S3'} ({said}); check the endpoint"
    if code == "NO_SUCH_BUCKET":
        return "the bucket does not exist"
    said = "" if said in ("", "No response body.") else f": {said}"
    return f"{code}{said}"


def _info(path: str, what: str):
    """pyarrow's FileInfo of bucket/key `path`, or an InputError naming `what`."""
    try:
        return filesystem(path.partition("/")[0]).get_file_info(path)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {problem(exc)}") from None


def _bucket_missing(bucket: str, what: str) -> Optional[InputError]:
    """An InputError when `bucket` does not exist (an empty or missing key in a bucket that does
    is the caller's to say)."""
    from pyarrow import fs as pafs

    if _info(bucket, what).type == pafs.FileType.NotFound:
        where = f" at {_endpoint_words()}" if _endpoint() else ""
        return InputError(f"{what}: bucket {bucket!r} does not exist{where}; check the URL")
    return None


def _hidden(key: str, top: str) -> bool:
    """Spark's _SUCCESS and _committed objects, .crc checksums and other hidden names below the
    prefix `top` (as for local directories)."""
    return any(part.startswith((".", "_")) for part in key[len(top):].split("/") if part)


def glob_pattern(key: str) -> re.Pattern:
    """A key glob as DuckDB's glob reads it: * and ? within one level, ** across levels,
    [...] a class."""
    out, i = "", 0
    while i < len(key):
        if key.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif key.startswith("**", i):
            out, i = out + ".*", i + 2
        elif key[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif key[i] == "?":
            out, i = out + "[^/]", i + 1
        elif key[i] == "[" and "]" in key[i + 1:]:
            end = key.index("]", i + 1)
            body = key[i + 1:end]
            out, i = out + "[" + ("^" + body[1:] if body.startswith("!") else body) + "]", end + 1
        else:
            out, i = out + re.escape(key[i]), i + 1
    return re.compile(out + r"\Z")


def _listed(prefix: str, what: str) -> list:
    """Every object under bucket/prefix `prefix`, as bucket/key paths, in order."""
    from pyarrow import fs as pafs

    try:
        found = filesystem(prefix.partition("/")[0]).get_file_info(
            pafs.FileSelector(prefix, recursive=True, allow_not_found=True))
    except OSError as exc:
        raise InputError(f"cannot read {what}: {problem(exc)}") from None
    return sorted(info.path for info in found if info.type == pafs.FileType.File)


def listing(url: str, role: str) -> tuple[str, list[str]]:
    """What an s3:// input names, as loading reads it: ('directory', its data objects), ('glob',
    the objects it matches) or ('file', [url]), each as an s3:// URL. A bucket, key or match that
    does not exist is an InputError naming the URL."""
    from pyarrow import fs as pafs

    bucket, key = split(url)
    if not bucket:
        raise InputError(f"{role} {url}: no bucket in the URL; give s3://BUCKET/KEY", usage=True)
    if any(ch in key for ch in "*?["):
        what = f"{role} glob {url}"
        top = re.split(r"[*?\[]", key, 1)[0].rpartition("/")[0]
        pattern = glob_pattern(key)
        found = [path for path in _listed(f"{bucket}/{top}".rstrip("/"), what)
                 if pattern.match(path.partition("/")[2])]
        if not found:
            raise _bucket_missing(bucket, what) or InputError(f"{what} matches no file")
        return "glob", [SCHEME + path for path in found]
    path = f"{bucket}/{key}".rstrip("/")
    kind = pafs.FileType.Directory if not key or key.endswith("/") else \
        _info(path, f"{role} file {url}").type
    if kind == pafs.FileType.File:
        return "file", [url]
    if kind == pafs.FileType.Directory:
        what = f"{role} directory {url}"
        top = path + "/"
        files = [SCHEME + p for p in _listed(path, what) if not _hidden(p, top)]
        if not files:
            raise _bucket_missing(bucket, what) or InputError(
                f"{what} holds no data files: give a file, a glob or a directory of .parquet, "
                f".csv or .json files")
        return "directory", files
    what = f"{role} file {url}"
    raise _bucket_missing(bucket, what) or InputError(f"{what} does not exist")


def dataset(urls: list, what: str):
    """A pyarrow Parquet dataset over the objects `urls`, for DuckDB to scan."""
    import pyarrow.dataset as ds

    paths = [url[len(SCHEME):] for url in urls]
    try:
        return ds.dataset(paths, filesystem=filesystem(split(urls[0])[0]), format="parquet")
    except OSError as exc:
        raise InputError(f"cannot read {what}: {problem(exc)}") from None
    except Exception as exc:  # pyarrow.ArrowInvalid: not Parquet
        raise InputError(f"cannot read {what}: {str(exc).strip().splitlines()[0]}") from None


def copies_folder() -> str:
    """The run's directory of copies; a copy of s3://B/K is at FOLDER/B/K."""
    return _run().copies()


def local_copies(urls: list, what: str) -> list:
    """Copy the objects `urls` into the run's directory, for DuckDB's own readers: their paths."""
    from pyarrow import fs as pafs

    folder = copies_folder()
    local = []
    for url in urls:
        target = os.path.join(folder, url[len(SCHEME):])
        if not os.path.exists(target):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            try:
                pafs.copy_files(url[len(SCHEME):], target,
                                source_filesystem=filesystem(split(url)[0]),
                                destination_filesystem=pafs.LocalFileSystem())
            except OSError as exc:
                if os.path.exists(target):
                    os.unlink(target)
                raise InputError(f"cannot read {what}: {problem(exc)}") from None
        local.append(target)
    return local


def as_urls(text: str) -> str:
    """A message (a DuckDB error about a copy) with the copies' paths said as their URLs."""
    run = _current.get() or _fallback
    if run is None or run.folder is None:
        return text
    return text.replace(run.folder.rstrip("/") + "/", SCHEME)


def check_output(url: str, what: str) -> None:
    """Before any work: the output `url` names an object in a bucket that exists."""
    bucket, key = split(url)
    if not bucket or not key or key.endswith("/"):
        raise InputError(f"{what}: give an object's URL, s3://BUCKET/KEY", usage=True)
    missing = _bucket_missing(bucket, f"cannot write {what}")
    if missing is not None:
        raise InputError(str(missing) + " or create it first", usage=True)


def put(local: str, url: str, what: str) -> None:
    """Put the complete local file `local` as the object `url` (one object, seen only whole)."""
    from pyarrow import fs as pafs

    try:
        pafs.copy_files(local, url[len(SCHEME):], source_filesystem=pafs.LocalFileSystem(),
                        destination_filesystem=filesystem(split(url)[0]))
    except OSError as exc:
        raise InputError(f"cannot write {what}: {problem(exc)}") from None
