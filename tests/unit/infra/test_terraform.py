"""Static checks of infra/terraform (no terraform binary here): every file parses as HCL2,
the cold-tier bucket is private and encrypted, and the broker's IAM policy is scoped to
the cluster's prefix of that bucket."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import hcl2
import pytest

TF_DIR = Path(__file__).resolve().parents[3] / "infra" / "terraform"
BUCKET_REF = "${aws_s3_bucket.cold.arn}"


def _clean(node: Any) -> Any:
    """python-hcl2 keeps string quotes and adds markers; drop both."""
    if isinstance(node, dict):
        return {
            _clean(k): _clean(v)
            for k, v in node.items()
            if k not in ("__is_block__", "__comments__")
        }
    if isinstance(node, list):
        return [_clean(v) for v in node]
    if isinstance(node, str) and len(node) >= 2 and node[0] == node[-1] == '"':
        return node[1:-1]
    return node


@pytest.fixture(scope="module")
def tf() -> dict[str, dict[str, dict[str, Any]]]:
    """{"resource"|"data": {type: {name: body}}, "variable"|"output": {name: body}, ...}."""
    merged: dict[str, dict[str, Any]] = {}
    files = sorted(TF_DIR.glob("*.tf"))
    assert len(files) >= 6
    for path in files:
        with path.open() as fh:
            doc = _clean(hcl2.load(fh))
        for kind, blocks in doc.items():
            for block in blocks:
                for key, body in block.items():
                    if kind in ("resource", "data"):
                        for name, inner in body.items():
                            merged.setdefault(kind, {}).setdefault(key, {})[name] = inner
                    else:
                        merged.setdefault(kind, {})[key] = body
    return merged


def _one(tf: dict[str, Any], rtype: str) -> dict[str, Any]:
    found = tf["resource"].get(rtype, {})
    assert len(found) == 1, f"expected one {rtype}, found {list(found)}"
    body = next(iter(found.values()))
    assert body["bucket"] == "${aws_s3_bucket.cold.id}"
    return dict(body)


def test_bucket_blocks_public_access(tf: dict[str, Any]) -> None:
    pab = _one(tf, "aws_s3_bucket_public_access_block")
    for flag in (
        "block_public_acls",
        "block_public_policy",
        "ignore_public_acls",
        "restrict_public_buckets",
    ):
        assert pab[flag] is True, flag
    assert "aws_s3_bucket_acl" not in tf["resource"]  # ACLs stay disabled (BucketOwnerEnforced)
    ownership = _one(tf, "aws_s3_bucket_ownership_controls")
    assert ownership["rule"][0]["object_ownership"] == "BucketOwnerEnforced"


def test_bucket_encrypted_versioning_off_multipart_lifecycle(tf: dict[str, Any]) -> None:
    sse = _one(tf, "aws_s3_bucket_server_side_encryption_configuration")
    algo = sse["rule"][0]["apply_server_side_encryption_by_default"][0]["sse_algorithm"]
    assert algo in ("AES256", "aws:kms")
    versioning = _one(tf, "aws_s3_bucket_versioning")
    assert versioning["versioning_configuration"][0]["status"] in ("Disabled", "Suspended")
    lifecycle = _one(tf, "aws_s3_bucket_lifecycle_configuration")
    rules = lifecycle["rule"]
    assert any(
        r["status"] == "Enabled"
        and r["abort_incomplete_multipart_upload"][0]["days_after_initiation"] >= 1
        for r in rules
    )


def test_bucket_policy_denies_plain_http(tf: dict[str, Any]) -> None:
    doc = tf["data"]["aws_iam_policy_document"]["cold_bucket"]
    deny = [s for s in doc["statement"] if s.get("effect") == "Deny"]
    assert any(
        c["variable"] == "aws:SecureTransport" and c["values"] == ["false"]
        for s in deny
        for c in s["condition"]
    )


def test_broker_policy_is_scoped_to_the_bucket_prefix(tf: dict[str, Any]) -> None:
    doc = tf["data"]["aws_iam_policy_document"]["broker_s3"]
    statements = doc["statement"]
    assert statements
    for st in statements:
        assert st.get("effect", "Allow") == "Allow"
        for action in st["actions"]:
            assert action.startswith("s3:") and "*" not in action, action
        for resource in st["resources"]:
            assert resource.startswith(BUCKET_REF), resource
            assert resource != "*"
        if "s3:ListBucket" in st["actions"]:
            # listing is allowed only under the cluster's prefix
            assert st["resources"] == [BUCKET_REF]
            cond = st["condition"][0]
            assert cond["variable"] == "s3:prefix"
            assert all(v.startswith("${local.cold_prefix}") for v in cond["values"])
        else:
            assert st["resources"] == [f"{BUCKET_REF}/${{local.cold_prefix}}/*"]
    # the role carries only this policy
    policies = tf["resource"]["aws_iam_role_policy"]
    assert [p["policy"] for p in policies.values()] == [
        "${data.aws_iam_policy_document.broker_s3.json}"
    ]
    assert "aws_iam_role_policy_attachment" not in tf["resource"]


def test_instances_and_network(tf: dict[str, Any]) -> None:
    zk = tf["resource"]["aws_instance"]["zookeeper"]
    assert zk["count"] == 3
    assert zk["metadata_options"][0]["http_tokens"] == "required"
    assert zk["root_block_device"][0]["encrypted"] is True
    lt = tf["resource"]["aws_launch_template"]["broker"]
    assert lt["metadata_options"][0]["http_tokens"] == "required"
    assert all(m["ebs"][0]["encrypted"] is True for m in lt["block_device_mappings"])
    assert "aws_iam_instance_profile.broker" in lt["iam_instance_profile"][0]["arn"]
    asg = tf["resource"]["aws_autoscaling_group"]["broker"]
    assert asg["desired_capacity"] == "${var.broker_count}"
    # ZooKeeper is reachable only from brokers (client port) and itself (quorum)
    rules = tf["resource"]["aws_vpc_security_group_ingress_rule"]
    for rule in rules.values():
        if rule["security_group_id"] == "${aws_security_group.zookeeper.id}":
            assert "cidr_ipv4" not in rule
            assert rule["referenced_security_group_id"] in (
                "${aws_security_group.broker.id}",
                "${aws_security_group.zookeeper.id}",
            )
    assert not any(r.get("cidr_ipv4") == "0.0.0.0/0" for r in rules.values())


def test_templates_get_the_variables_they_use(tf: dict[str, Any]) -> None:
    for rtype, name, template in (
        ("aws_launch_template", "broker", "broker_user_data.sh.tftpl"),
        ("aws_instance", "zookeeper", "zookeeper_user_data.sh.tftpl"),
    ):
        text = (TF_DIR / "templates" / template).read_text()
        loops = re.findall(r"%\{ for (\w+), (\w+) in (\w+)", text)
        loop_vars = {v for loop in loops for v in loop[:2]}
        used = set(re.findall(r"(?<!\$)\$\{([a-z_]+)", text)) - loop_vars
        used |= {loop[2] for loop in loops}
        user_data = tf["resource"][rtype][name]["user_data"]
        passed = set(re.findall(r"([a-z_]+)\s*=", user_data.split(template, 1)[1]))
        assert used, template
        assert used <= passed, f"{template} uses {used - passed} not passed"


def test_variables_described_and_outputs_present(tf: dict[str, Any]) -> None:
    for name, var in tf["variable"].items():
        assert var.get("description"), name
    for out in ("bucket", "cold_tier_url", "zookeeper_connect", "broker_asg_name"):
        assert out in tf["output"]
    assert (TF_DIR / "README.md").exists()
