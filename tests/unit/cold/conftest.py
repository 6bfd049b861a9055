"""Fixtures of the cold tier's unit tests: an in-process moto S3 server (one per session)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer


class MotoS3:
    def __init__(self) -> None:
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        host, port = self.server.get_host_and_port()
        self.endpoint_url = f"http://{host}:{port}"

    def store_options(self) -> dict[str, Any]:
        return {
            "endpoint_url": self.endpoint_url,
            "access_key": "testing",
            "secret_key": "testing",
            "region": "us-east-1",
            "path_style": True,
        }

    def new_bucket(self) -> str:
        bucket = f"t-{uuid.uuid4().hex[:16]}"
        client = boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        client.create_bucket(Bucket=bucket)
        client.close()
        return bucket


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[MotoS3]:
    server = MotoS3()
    yield server
    server.server.stop()
