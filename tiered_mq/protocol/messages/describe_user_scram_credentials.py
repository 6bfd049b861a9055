"""DescribeUserScramCredentials (key 50), version 0 (flexible: compact encodings, tagged fields).

``users`` null or empty asks for every user that has SCRAM credentials. Each result lists the
user's ``credential_infos``: ``mechanism`` (1 SCRAM-SHA-256, 2 SCRAM-SHA-512) and
``iterations``; never a salt or key.
"""

from tiered_mq.protocol.schema import INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 50

REQUEST = Message(
    API_KEY,
    "DescribeUserScramCredentialsRequest",
    "0",
    flexible="0+",
    fields=(f("users", array(f("name", STRING)), nullable="0+"),),
)

RESPONSE = Message(
    API_KEY,
    "DescribeUserScramCredentialsResponse",
    "0",
    flexible="0+",
    fields=(
        f("throttle_time_ms", INT32),
        f("error_code", INT16),
        f("error_message", STRING, nullable="0+"),
        f(
            "results",
            array(
                f("user", STRING),
                f("error_code", INT16),
                f("error_message", STRING, nullable="0+"),
                f("credential_infos", array(f("mechanism", INT8), f("iterations", INT32))),
            ),
        ),
    ),
)
