"""ApiVersions v3+ names the client's software (KIP-511): a name or version that is not letters
and digits with '-' and '.' inside is answered INVALID_REQUEST with no API keys, as Kafka's
``ApiVersionsRequest.isValid``; what real clients send is answered in full."""

from __future__ import annotations

from tests.unit.broker.conftest import Client
from tiered_mq.errors import InvalidRequestError
from tiered_mq.protocol.api_versions import ApiKey

VALID = [
    ("librdkafka", "2.0.2"),
    ("confluent-kafka-python", "2.16.1-rdkafka-2.16.1"),
    ("apache-kafka-java", "3.9.0"),
    ("kafka-python", "3.0.12"),
    ("a", "1"),
]
INVALID = [
    ("", "1.0"),
    ("kcat", ""),
    ("-lead", "1"),
    ("trail.", "1"),
    ("x", "1.0 beta"),
    ("é", "1"),
]


async def _answer(client: Client, version: int, name: str, software: str) -> tuple[int, int]:
    body = {"client_software_name": name, "client_software_version": software}
    r = await client.call(ApiKey.API_VERSIONS, version, body)
    return r["error_code"], len(r["api_keys"])


async def test_software_names_are_checked_from_v3(client: Client) -> None:
    for name, software in VALID:
        code, keys = await _answer(client, 3, name, software)
        assert code == 0 and keys > 20, (name, software)
    for name, software in INVALID:
        assert await _answer(client, 3, name, software) == (InvalidRequestError.errno, 0), (
            name,
            software,
        )
        code, keys = await _answer(client, 2, name, software)  # not on the wire before v3
        assert code == 0 and keys > 20
