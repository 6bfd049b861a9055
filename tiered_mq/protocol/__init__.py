"""Kafka wire protocol, sans I/O: frames <-> plain dicts.

    api_versions.py   ApiKey, SUPPORTED (api_key -> (min, max)), advertised(handler_keys)
    header.py         RequestHeader, decode_request_header(frame) -> (header, body_offset)
    codec.py          decode_request, encode_response (chunks incl. size + header),
                      encode_request, decode_response, api_versions_fallback, classify
    produce_codec.py  Produce v3-8 request reader and response writer, written out by hand
    fetch_codec.py    Fetch v4-11 response writer, written out by hand (both give exactly what
                      the schema-driven codec gives, which takes anything outside their case)
    messages/<api>.py the project's schema declarations (snake_case Kafka spec names)
    schema.py         the declaration language; decoder.py / encoder.py compile it once
    wire.py           primitive encodings and bounds-checked readers

Malformed input raises ``tiered_mq.errors.InvalidRequestError``; unknown api keys or versions
raise ``UnsupportedVersionError``.
"""
