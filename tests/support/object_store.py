"""An S3-compatible server for the tests: moto's, on 127.0.0.1, with one bucket; the standard
AWS variables point s3fs and boto3 at it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

BUCKET = "morpheus-reports"


@dataclass
class ObjectStore:
    endpoint: str
    bucket: str = BUCKET

    def client(self) -> Any:
        return boto3.client("s3", endpoint_url=self.endpoint, region_name="us-east-1")

    def read(self, key: str) -> bytes:
        return self.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()

    def keys(self, prefix: str = "") -> list[str]:
        answer = self.client().list_objects_v2(Bucket=self.bucket, Prefix=prefix)
        return sorted(item["Key"] for item in answer.get("Contents", []))


@contextmanager
def s3_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ObjectStore]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ENDPOINT_URL_S3": endpoint,
        }.items():
            monkeypatch.setenv(name, value)
        store = ObjectStore(endpoint)
        store.client().create_bucket(Bucket=store.bucket)
        yield store
    finally:
        server.stop()
