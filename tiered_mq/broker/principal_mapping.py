"""``ssl.principal.mapping.rules``: the name a TLS client certificate's subject DN maps to, as
Kafka's SslPrincipalMapper gives it (KIP-371).

Format: a comma-separated list of rules, tried in order, the first that applies giving the name
(``User:<name>`` is the principal)::

    RULE:<pattern>/<replacement>/[L|U]   applies when the Java-style regular expression
                                         <pattern> matches the whole DN; the name is the DN
                                         with each match replaced by <replacement> ($1, $2 ...
                                         its groups; \\ escapes), then lower- (L) or upper-
                                         cased (U)
    DEFAULT                              the DN itself (RFC 2253, tls.tls_principal)

e.g. ``RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT``. A pattern or replacement may hold
commas and, escaped (``\\/``), slashes. Unset, the rules are ``DEFAULT``. A rule that does not
parse, or a pattern that does not compile, raises ValueError naming the key (the broker does not
start); a DN that no rule applies to has no name (None): as in Kafka, that client's connection
is closed (server.py). A reference to a group the pattern does not have is kept as text, as
Kafka does (``$3`` with two groups: ``$3``; ``$12`` with two groups: group 1, then ``2``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from tiered_mq.broker.config import BrokerConfig
from tiered_mq.broker.listener import setting

KEY: Final = "ssl.principal.mapping.rules"
_RULE: Final = r"(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLIT: Final = re.compile(r"\s*(" + _RULE + r")\s*(?:,\s*|$)")
_PARSE: Final = re.compile(_RULE)


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""  # "L", "U" or ""

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if self.pattern.fullmatch(dn) is None:
            return None
        name = self.pattern.sub(lambda m: _expand(self.replacement, m), dn)
        if self.case == "L":
            return name.lower()
        return name.upper() if self.case == "U" else name


@dataclass(frozen=True)
class PrincipalMapper:
    rules: tuple[_Rule, ...]

    @classmethod
    def parse(cls, rules: str, key: str = KEY) -> PrincipalMapper:
        """The mapper of a rules text (ValueError naming ``key`` if one does not parse)."""
        parsed = []
        for match in _SPLIT.finditer(rules.strip()):
            text = match.group(1)
            rule = _PARSE.match(text)
            if rule is None or rule.end() != len(text):
                raise ValueError(f"{key}: invalid rule {text!r}")
            if rule.group(1):
                parsed.append(_Rule(None))
            elif rule.group(2) is not None:
                try:
                    pattern = re.compile(rule.group(2))
                except re.error as e:
                    raise ValueError(f"{key}: invalid pattern in {text!r}: {e}") from None
                parsed.append(_Rule(pattern, rule.group(3), rule.group(4)))
            # an empty rule is ignored, as in Kafka
        return cls(tuple(parsed))

    @classmethod
    def from_config(cls, config: BrokerConfig, listener: str = "") -> PrincipalMapper:
        """The rules of ``listener`` (or ``listener.name.<name>.ssl.principal.mapping.rules``)."""
        key, rules = setting(config, listener, KEY)
        return cls.parse(rules or "DEFAULT", key)

    def name(self, dn: str) -> str | None:
        """The name the first applying rule gives ``dn``; None when no rule applies."""
        for rule in self.rules:
            name = rule.apply(dn)
            if name is not None:
                return name
        return None


def _expand(replacement: str, m: re.Match[str]) -> str:
    """``replacement`` for match ``m`` with Java's rules: ``\\x`` is x, ``$n`` is group n
    (as many digits as still name a group; an unmatched group adds nothing); a ``$`` naming no
    group stays text (Kafka escapes those before Java sees them)."""
    groups = m.re.groups
    out: list[str] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1])
            i += 2
            continue
        if c == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            ref, j = int(replacement[i + 1]), i + 2
            if ref <= groups:
                while j < len(replacement) and replacement[j].isdigit():
                    longer = ref * 10 + int(replacement[j])
                    if longer > groups:
                        break
                    ref, j = longer, j + 1
                out.append(m.group(ref) or "")
                i = j
                continue
        out.append(c)
        i += 1
    return "".join(out)
