"""The cold URL check on a real S3 server (SeaweedFS): another prefix of the same bucket, or
another bucket, is another cold tier and refused while the data dir holds tiered data; the
same bucket and prefix reached through another endpoint spelling, with other credentials and
written ``s3a://``, is the same cold tier and starts, serving every record from offset 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.broker_process import BrokerProcess
from tests.integration.s3_server import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs  # noqa: F401
from tests.integration.test_cold_url_change import (
    COUNT,
    FAST,
    TIERED,
    configs,
    create,
    earliest_local,
    produce,
    read_all,
    refused_start,
    snapshot,
    wait_for,
)

pytestmark = pytest.mark.integration


def test_another_prefix_is_refused_another_endpoint_is_not(
    tmp_path: Path,
    seaweedfs: SeaweedFS,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bucket = seaweedfs.new_bucket()
    data = tmp_path / "data"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)  # the refused starts' too
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    s3 = ["--s3-endpoint", seaweedfs.endpoint_url, "--s3-region", "us-east-1"]
    first = ["--cold-url", f"s3://{bucket}/tmq", *s3, *configs(*FAST)]
    with BrokerProcess(data, extra_args=first) as broker:
        create(broker.bootstrap, TIERED, tiered=True)
        produce(broker.bootstrap, TIERED, COUNT)
        wait_for(lambda: earliest_local(broker.port, TIERED) >= 30, "uploaded segments to go")
    before = snapshot(data)

    for moved in (f"s3://{bucket}/other", f"s3://{seaweedfs.new_bucket()}/tmq"):
        status, out = refused_start(data, "--cold-url", moved, *s3, *configs(*FAST))
        assert status == 1, out
        assert f"Configured cold tier {moved} doesn't match the cold tier s3://{bucket}/tmq" in (
            out
        )
    assert snapshot(data) == before

    port = seaweedfs.endpoint_url.rsplit(":", 1)[1]
    same = [
        *("--cold-url", f"s3a://{bucket}/tmq/"),
        *("--s3-endpoint", f"http://localhost:{port}/", "--s3-region", "us-east-1"),
        *configs(*FAST),
    ]
    other_keys = {"AWS_ACCESS_KEY_ID": "another-key", "AWS_SECRET_ACCESS_KEY": "another-secret"}
    with BrokerProcess(data, extra_args=same, env=other_keys) as broker:
        assert read_all(broker.bootstrap, TIERED, COUNT) == list(range(COUNT))
