"""raise_open_files_limit: the soft limit goes to the hard one (Linux's fs.nr_open for an
unlimited hard limit); a refusal leaves it as it was."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from tiered_mq.broker import open_files

INF = resource.RLIM_INFINITY


class Limits:
    def __init__(self, soft: int, hard: int, refuse: bool = False) -> None:
        self.soft, self.hard, self.refuse = soft, hard, refuse

    def get(self, _which: int) -> tuple[int, int]:
        return self.soft, self.hard

    def set(self, _which: int, limits: tuple[int, int]) -> None:
        if self.refuse:
            raise ValueError("not allowed to raise maximum limit")
        self.soft, self.hard = limits


@pytest.fixture
def nr_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "nr_open"
    path.write_text("1048576\n")
    monkeypatch.setattr(open_files, "NR_OPEN", path)
    return path


@pytest.mark.parametrize(
    ("soft", "hard", "raised"),
    [(1024, 524288, 524288), (1024, INF, 1048576), (65536, 65536, 65536), (INF, INF, INF)],
)
def test_the_soft_limit_goes_to_the_hard_one(
    soft: int, hard: int, raised: int, nr_open: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = Limits(soft, hard)
    monkeypatch.setattr(resource, "getrlimit", limits.get)
    monkeypatch.setattr(resource, "setrlimit", limits.set)
    assert open_files.raise_open_files_limit() == raised
    assert (limits.soft, limits.hard) == (raised, hard)


def test_a_refusal_leaves_the_limit(nr_open: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    limits = Limits(1024, 4096, refuse=True)
    monkeypatch.setattr(resource, "getrlimit", limits.get)
    monkeypatch.setattr(resource, "setrlimit", limits.set)
    assert open_files.raise_open_files_limit() == 1024
    assert (limits.soft, limits.hard) == (1024, 4096)
