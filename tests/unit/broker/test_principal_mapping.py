"""``ssl.principal.mapping.rules``: Kafka's rule syntax (KIP-371's examples), the first rule
that applies wins, Java's replacement references, and the errors a bad rule gets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.principal_mapping import PrincipalMapper
from tiered_mq.broker.tls import tls_principal

DUKE = "CN=Duke,OU=JavaSoft,O=Sun Microsystems,L=Santa Clara,ST=CA,C=US"


def test_kip_371_examples() -> None:
    mapper = PrincipalMapper.parse(
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, "
        "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
        "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, DEFAULT"
    )
    assert mapper.name("CN=kafka-broker1,OU=ServiceUsers,O=Org,C=US") == "kafka-broker1"
    assert mapper.name(DUKE) == "duke@javasoft"
    assert mapper.name("OU=JavaSoft,CN=duke,O=Sun") == "DUKE"
    assert mapper.name("OU=nothing") == "OU=nothing"  # DEFAULT: the DN itself


def test_no_rule_applies_and_the_default_rules(tmp_path: Path) -> None:
    mapper = PrincipalMapper.parse("RULE:^CN=([^,]+),OU=Services$/$1/")
    assert mapper.name("CN=a,OU=Services") == "a"
    assert mapper.name("CN=a,OU=Other") is None  # the pattern must match the whole DN
    cert = {"subject": ((("organizationalUnitName", "Other"),), (("commonName", "a"),))}
    with pytest.raises(ValueError, match=re.escape("no ssl.principal.mapping.rules rule applies")):
        tls_principal(cert, mapper)
    unset = PrincipalMapper.from_config(BrokerConfig(tmp_path))
    assert tls_principal(cert, unset) == "User:CN=a,OU=Other"


def test_replacement_references_as_in_java() -> None:
    mapper = PrincipalMapper.parse(r"RULE:^(CN)=(.*)$/$2.$12\$1$3/")
    # $12 with two groups is group 1 then "2"; \$ is "$"; $3 names no group: kept as text
    assert mapper.name("CN=a") == "a.CN2$1$3"


def test_patterns_may_hold_commas_and_escaped_slashes() -> None:
    mapper = PrincipalMapper.parse(r"RULE:^CN=([^,]*),O=a\/b$/$1/,DEFAULT")
    assert mapper.name("CN=x,O=a/b") == "x"
    assert mapper.name("CN=x,O=ab") == "CN=x,O=ab"


@pytest.mark.parametrize("rules", ["RULE:a/b", "FOO", "RULE:a/b/X", "RULE:(/b/", "DEFAULT,junk"])
def test_a_bad_rule_names_the_key(tmp_path: Path, rules: str) -> None:
    key = "listener.name.secure.ssl.principal.mapping.rules"
    config = BrokerConfig(tmp_path, overrides={key: rules})
    with pytest.raises(ValueError, match=re.escape(key)):
        PrincipalMapper.from_config(config, "SECURE")
