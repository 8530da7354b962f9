"""Upload limits: checked while the bytes stream in or decompress, never after.

Bombs are built here: 1 GiB of zeros, deflated (a ``.zip`` of logs, and a
deflated ``.eval`` member) or Zstandard-compressed (an Inspect ``.eval``
member, zip method 93), each about 1 MB or less on disk. Each is refused
with a message naming the file or member and the limit, and the test
process's peak memory (``tracemalloc``; and the growth of its maximum
resident size) stays under 200 MB.
"""
from __future__ import annotations

import io
import resource
import struct
import tracemalloc
import zlib

import pytest
import zstandard
from django.test import Client
from django.urls import reverse

from annotate.api.services import api_token_create
from annotate.catalog.loaders.harness.inspect_ai import MEMBER_TOO_LARGE
from annotate.catalog.services import upload_store as ustore, uploads as upload_service
from annotate.models import Dataset, LanguageModel, Question, ResponseSet, UploadJob
from tests.annotate.factories import make_user, n_stored_responses

pytestmark = pytest.mark.django_db

IMMEDIATE = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
GIB = 1024**3
CHUNK = 1 << 20
MEMORY_CAP = 200 * 1024**2


@pytest.fixture(autouse=True)
def _loads_run_inline(settings, tmp_path):
    settings.TASKS = IMMEDIATE
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "django-tmp")
    (tmp_path / "django-tmp").mkdir()


@pytest.fixture
def upload_root(tmp_path, monkeypatch):
    root = tmp_path / "uploads"
    monkeypatch.setattr(ustore, "UPLOAD_ROOT", root)
    return root


@pytest.fixture
def staff() -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {api_token_create(user=make_user('owner', staff=True))[1]}")


def zero_crc(size: int) -> int:
    crc, block = 0, bytes(CHUNK)
    for _ in range(size // CHUNK):
        crc = zlib.crc32(block, crc)
    return crc


def deflated_zeros(size: int) -> bytes:
    """Raw deflate of ``size`` zeros: after a full flush every 1 MiB block compresses
    to the same bytes, so one block is compressed and repeated."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = co.compress(bytes(CHUNK)) + co.flush(zlib.Z_FULL_FLUSH)
    again = co.compress(bytes(CHUNK)) + co.flush(zlib.Z_FULL_FLUSH)
    assert again == block
    return block * (size // CHUNK) + co.flush()


def zstd_zeros(size: int) -> bytes:
    co = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    block = bytes(CHUNK)
    return b"".join(co.compress(block) for _ in range(size // CHUNK)) + co.flush()


def zip_bytes(members: list[tuple[str, bytes, int, int, int]]) -> bytes:
    """A zip of (name, payload, method, uncompressed size, crc) members, payloads already compressed."""
    out, central = bytearray(), bytearray()
    for name, payload, method, size, crc in members:
        raw, offset, version = name.encode(), len(out), 63 if method == 93 else 20
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", version, 0x800, method, 0, 0x21, crc, len(payload),
                           size, len(raw), 0) + raw + payload
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", version, version, 0x800, method, 0, 0x21, crc,
                               len(payload), size, len(raw), 0, 0, 0, 0, 0, offset) + raw
    start = len(out)
    return bytes(out + central + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members),
                                               len(central), start, 0))


def stored(data: bytes) -> tuple[bytes, int, int, int]:
    return data, 0, len(data), zlib.crc32(data)


def eval_bomb(method: int) -> bytes:
    payload = deflated_zeros(GIB) if method == 8 else zstd_zeros(GIB)
    return zip_bytes([("header.json", *stored(b'{"eval": {"model": "m", "task": "t"}, "status": "success"}')),
                      ("samples/1_epoch_1.json", payload, method, GIB, zero_crc(GIB))])


def measured(call):
    """(result, tracemalloc peak in bytes, growth of the maximum resident size in bytes)."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    tracemalloc.start()
    try:
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before
    return result, peak, grown


def post_logs(client: Client, name: str, content: bytes):
    file = io.BytesIO(content)
    file.name = name
    return client.post(reverse("annotate:api_response_sets"), {"logs": file})


def nothing_left(upload_root, tmp_path) -> None:
    assert (ResponseSet.objects.count(), n_stored_responses(), Question.objects.count(),
            LanguageModel.objects.count(), Dataset.objects.count()) == (0, 0, 0, 0, 0)
    assert not upload_root.exists() or list(upload_root.iterdir()) == []
    assert list((tmp_path / "django-tmp").iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize(("method", "kind"), [(93, "zstd"), (8, "deflate")])
def test_an_eval_bomb_is_refused_at_the_member_limit_in_bounded_memory(staff, upload_root, tmp_path, method, kind,
                                                                        capsys):
    bomb = eval_bomb(method)
    assert len(bomb) < 2 * CHUNK  # 1 GiB of zeros in at most ~1 MB
    answer, peak, grown = measured(lambda: post_logs(staff, "bomb.eval", bomb))
    with capsys.disabled():
        print(f"\n{kind} .eval bomb: tracemalloc peak {peak / 2**20:.1f} MiB, max RSS grew {grown / 2**20:.1f} MiB")
    assert answer.status_code == 202
    body = answer.json()
    assert (body["state"], body["error"]) == ("failed", "nothing was loaded")
    assert body["problems"] == [{"file": "bomb.eval::samples/1_epoch_1.json", "row": None, "column": None,
                                 "message": MEMBER_TOO_LARGE.format(member="samples/1_epoch_1.json",
                                                                    limit=64 * 2**20)}]
    assert peak < MEMORY_CAP and grown < MEMORY_CAP
    nothing_left(upload_root, tmp_path)


@pytest.mark.slow
def test_a_zip_bomb_of_logs_is_refused_while_unpacking_in_bounded_memory(staff, upload_root, tmp_path, settings,
                                                                         capsys):
    settings.EIP_UPLOAD_MAX_UNPACKED_BYTES = 256 * 2**20  # (default 1 GiB) a quarter of the bomb, to spare the disk
    bomb = zip_bytes([("run/results.json", deflated_zeros(GIB), 8, GIB, zero_crc(GIB))])
    answer, peak, grown = measured(lambda: post_logs(staff, "bomb.zip", bomb))
    with capsys.disabled():
        print(f"\n.zip bomb: tracemalloc peak {peak / 2**20:.1f} MiB, max RSS grew {grown / 2**20:.1f} MiB")
    assert answer.status_code == 400
    assert answer.json()["problems"] == [{"file": "bomb.zip", "row": None, "column": None,
                                          "message": ustore.ZIP_TOO_LARGE.format(limit=256 * 2**20)}]
    assert peak < MEMORY_CAP and grown < MEMORY_CAP
    assert UploadJob.objects.count() == 0
    nothing_left(upload_root, tmp_path)


def test_the_archives_of_one_upload_share_the_total_limit(staff, upload_root, tmp_path, settings):
    settings.EIP_UPLOAD_MAX_UNPACKED_BYTES = 1000
    settings.EIP_UPLOAD_MAX_UNPACKED_TOTAL_BYTES = 1500
    one = zip_bytes([("a/results.json", *stored(b" " * 800))])  # each archive fits its own limit
    files = []
    for name in ("one.zip", "two.zip"):
        file = io.BytesIO(one)
        file.name = name
        files.append(file)
    answer = staff.post(reverse("annotate:api_response_sets"), {"logs": files})
    assert answer.status_code == 400
    assert answer.json()["problems"] == [{"file": "two.zip", "row": None, "column": None,
                                          "message": ustore.UNPACKED_TOTAL_TOO_LARGE.format(limit=1500)}]
    nothing_left(upload_root, tmp_path)


def wide_csv(n_questions: int, n_models: int) -> bytes:
    header = "question_id," + ",".join(f"m{j}" for j in range(n_models)) + "\n"
    row = ",".join("1" for _ in range(n_models))
    return (header + "".join(f"q{i},{row}\n" for i in range(n_questions))).encode()


def post_csv(client: Client, name: str, content: bytes, **fields):
    file = io.BytesIO(content)
    file.name = name
    return client.post(reverse("annotate:api_response_sets"), {"responses": file, "dataset": "wide", **fields})


def test_a_wide_csv_over_the_default_cell_limit_is_refused_before_parsing(staff, upload_root, tmp_path):
    # 2,001 questions x 2,500 models = 5,002,500 cells > 5,000,000 (the default), ~10 MB
    answer = post_csv(staff, "wide.csv", wide_csv(2001, 2500))
    assert answer.status_code == 400
    assert answer.json()["problems"] == [{"file": "wide.csv", "row": 1, "column": None,
                                          "message": upload_service.TOO_MANY_CELLS.format(
                                              cells=5_002_500, questions=2001, models=2500, limit=5_000_000)}]
    assert UploadJob.objects.count() == 0
    nothing_left(upload_root, tmp_path)


def test_the_command_refuses_the_same_cells_with_the_same_message(tmp_path, settings):
    from django.core.management import CommandError, call_command

    settings.EIP_UPLOAD_MAX_CELLS = 20
    path = tmp_path / "wide.csv"
    path.write_bytes(wide_csv(7, 3))  # 21 cells
    with pytest.raises(CommandError) as error:
        call_command("load_responses", responses=path, dataset="wide", verbosity=0)
    assert upload_service.TOO_MANY_CELLS.format(cells=21, questions=7, models=3, limit=20) in str(error.value)
    assert ResponseSet.objects.count() == 0


def test_a_long_file_over_the_cell_limit_is_refused_by_its_rows(staff, upload_root, tmp_path, settings):
    settings.EIP_UPLOAD_MAX_CELLS = 3
    content = b"model,question_id,credit\nm1,q1,1\nm1,q2,0\nm2,q1,1\nm2,q2,1\n"  # 4 rows
    answer = post_csv(staff, "long.csv", content)
    assert answer.status_code == 400
    assert answer.json()["problems"][0]["message"] == upload_service.TOO_MANY_ROWS.format(rows=4, limit=3)
    nothing_left(upload_root, tmp_path)


def test_an_upload_over_the_size_limit_is_refused_while_it_is_stored(staff, upload_root, tmp_path, settings):
    settings.EIP_UPLOAD_MAX_BYTES = 1000
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every part goes through FILE_UPLOAD_TEMP_DIR
    answer = post_csv(staff, "big.csv", wide_csv(100, 3))  # 100 rows of "qN,1,1,1" > 1000 bytes
    assert answer.status_code == 400
    assert answer.json()["problems"] == [{"file": "big.csv", "row": None, "column": None,
                                          "message": upload_service.UPLOAD_TOO_LARGE.format(limit=1000)}]
    nothing_left(upload_root, tmp_path)


def test_a_refused_load_leaves_no_rows_and_no_files(staff, upload_root, tmp_path, settings):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0
    answer = post_csv(staff, "bad.csv", b"model,question_id,credit\nm1,q1,1\nm1,q2,7\n")
    assert answer.status_code == 202 and answer.json()["state"] == "failed"
    nothing_left(upload_root, tmp_path)
