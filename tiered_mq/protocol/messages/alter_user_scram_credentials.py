"""AlterUserScramCredentials (key 51), version 0 (flexible: compact encodings, tagged fields).

An upsertion carries what the client derived from the password: ``salt`` and
``salted_password`` = PBKDF2-HMAC(password, salt, ``iterations``) for the ``mechanism``
(1 SCRAM-SHA-256, 2 SCRAM-SHA-512); the password itself never travels. One result per user.
"""

from tiered_mq.protocol.schema import BYTES, INT8, INT16, INT32, STRING, Message, array, f

API_KEY = 51

REQUEST = Message(
    API_KEY,
    "AlterUserScramCredentialsRequest",
    "0",
    flexible="0+",
    fields=(
        f("deletions", array(f("name", STRING), f("mechanism", INT8))),
        f(
            "upsertions",
            array(
                f("name", STRING),
                f("mechanism", INT8),
                f("iterations", INT32),
                f("salt", BYTES),
                f("salted_password", BYTES),
            ),
        ),
    ),
)

RESPONSE = Message(
    API_KEY,
    "AlterUserScramCredentialsResponse",
    "0",
    flexible="0+",
    fields=(
        f("throttle_time_ms", INT32),
        f(
            "results",
            array(
                f("user", STRING),
                f("error_code", INT16),
                f("error_message", STRING, nullable="0+"),
            ),
        ),
    ),
)
