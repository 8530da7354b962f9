"""A response-set name longer than its column is refused on the upload form
(an error naming the field and its limit, nothing written), never cut."""
from __future__ import annotations

import pytest

from annotate.models import ResponseSet, UploadJob
from tests.annotate.catalog.admin.test_upload import counts, upload

pytestmark = pytest.mark.django_db


def test_a_name_longer_than_its_column_is_refused_with_its_limit(client, uploader, upload_root):
    response = upload(client, name="x" * 500)
    html = response.content.decode()
    assert response.status_code == 400  # the form again, refused, no preview
    assert "Ensure this value has at most 200 characters (it has 500)." in html
    assert counts() == dict.fromkeys(counts(), 0) and UploadJob.objects.count() == 0


def test_a_name_at_the_limit_is_stored_whole(client, uploader, upload_root):
    posted = upload(client, name="x" * 200)
    assert posted.status_code == 302
    token = posted["Location"].rstrip("/").rsplit("/", 1)[1]
    client.post(posted["Location"], {"token": token})  # the load runs inline (conftest)
    assert UploadJob.objects.get().state == "done"
    assert ResponseSet.objects.get().name == "x" * 200
