"""Kafka wire protocol, sans I/O: frames <-> plain dicts.

    api_versions.py   ApiKey, SUPPORTED (api_key -> (min, max)), advertised(handler_keys)
    header.py         RequestHeader, decode_request_header(frame) -> (header, body_offset)
    codec.py          decode_request, encode_response (chunks incl. size + header),
                      encode_request, decode_response, api_versions_fallback, classify
    messages/<api>.py the project's schema declarations (snake_case Kafka spec names)
    schema.py         the declaration language; decoder.py / encoder.py compile it once
    wire.py           primitive encodings and bounds-checked readers

Malformed input raises ``tiered_mq.errors.InvalidRequestError``; unknown api keys or versions
raise ``UnsupportedVersionError``.
"""
