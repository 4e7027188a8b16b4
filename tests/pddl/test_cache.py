"""The private cache directory (`sage_pddl/pddl/cache.py`) and what the parser keeps in it.

What is kept is loaded with pickle, so every check that keeps another user's bytes out is
tested: the directory's owner, mode and kind, a file's owner and kind; and what a process
gains: a domain file parsed by one process is loaded, not parsed, by the next.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sage_pddl.pddl import cache, load_domain, parse_domain
from sage_pddl.pddl import parser as pddl_parser

from .conftest import same_model

REPO = Path(__file__).resolve().parents[2]
DOMAIN = REPO / "domains" / "ithor.pddl"


@pytest.fixture
def directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("SAGE_PDDL_CACHE", str(where))
    return where


def test_the_directory_is_made_private_and_files_are_written_whole(directory: Path):
    cache.write("a", b"first")
    cache.write("a", b"second")
    assert cache.read("a") == b"second"
    assert os.stat(directory).st_mode & 0o777 == 0o700
    assert os.stat(directory / "a").st_mode & 0o777 == 0o600
    assert sorted(p.name for p in directory.iterdir()) == ["a"]  # no temporary file left
    assert cache.read("missing") is None


@pytest.mark.parametrize("setting", ["off", "OFF", "0", ""])
def test_the_cache_can_be_turned_off(setting: str, monkeypatch: pytest.MonkeyPatch,
                                     tmp_path: Path):
    monkeypatch.setenv("SAGE_PDDL_CACHE", setting)
    monkeypatch.chdir(tmp_path)
    cache.write("a", b"x")
    assert cache.read("a") is None
    assert not list(tmp_path.iterdir())


def test_a_directory_others_may_enter_or_write_is_not_used(directory: Path):
    cache.write("a", b"x")
    for mode in (0o750, 0o705, 0o770, 0o777):
        directory.chmod(mode)
        assert cache.read("a") is None, oct(mode)
        cache.write("b", b"y")
        assert not (directory / "b").exists(), oct(mode)
    directory.chmod(0o700)
    assert cache.read("a") == b"x"


def test_a_directory_or_file_of_another_owner_is_not_used(directory: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    cache.write("a", b"x")
    monkeypatch.setattr(os, "getuid", lambda: os.stat(directory).st_uid + 1)
    assert cache.read("a") is None


def test_a_file_of_another_owner_is_not_read(directory: Path, monkeypatch: pytest.MonkeyPatch):
    cache.write("a", b"x")
    fstat, stat_of = os.fstat, os.stat

    def planted(result: os.stat_result) -> os.stat_result:
        if not stat.S_ISREG(result.st_mode):
            return result  # the directory stays this user's
        fields = list(result)
        fields[4] = result.st_uid + 1  # st_uid
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", lambda fd: planted(fstat(fd)))
    monkeypatch.setattr(os, "stat", lambda *args, **kwargs: planted(stat_of(*args, **kwargs)))
    assert cache.read("a") is None


def test_links_are_not_followed(directory: Path, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch):
    cache.write("a", b"x")
    elsewhere = tmp_path / "planted"
    elsewhere.write_bytes(b"not ours to load")
    (directory / "link").symlink_to(elsewhere)
    assert cache.read("link") is None
    linked = tmp_path / "linked-directory"
    linked.symlink_to(directory, target_is_directory=True)
    monkeypatch.setenv("SAGE_PDDL_CACHE", str(linked))
    assert cache.read("a") is None


def test_the_oldest_files_go_past_the_limit(directory: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(cache, "MAX_FILES", 3)
    for number in range(5):
        cache.write(f"f{number}", b"x")
        os.utime(directory / f"f{number}", ns=(number * 10**9, number * 10**9))
    cache.write("f5", b"x")
    assert sorted(p.name for p in directory.iterdir()) == ["f3", "f4", "f5"]


def test_a_domain_file_parsed_once_is_loaded_by_later_processes(directory: Path):
    first = load_domain(DOMAIN)
    kept = [p for p in directory.iterdir() if p.name.startswith("domain-")]
    assert len(kept) == 1
    pddl_parser.forget_parsed()
    driver = pddl_parser._driver()
    calls = []
    original = driver.parse
    driver.parse = lambda *args: calls.append(args) or original(*args)  # type: ignore[method-assign]
    try:
        again = load_domain(DOMAIN)
    finally:
        del driver.parse
    assert calls == [] and again is not first and same_model(again, first)
    assert again.annotations == first.annotations and again.source == first.source
    # a text read without `keep` (parse_domain) is parsed and not kept
    pddl_parser.forget_parsed()
    parse_domain(DOMAIN.read_text() + "\n", str(DOMAIN))
    assert len([p for p in directory.iterdir() if p.name.startswith("domain-")]) == 1


def test_a_kept_domain_is_found_by_its_text_and_file_name(directory: Path, tmp_path: Path):
    copy = tmp_path / "copy.pddl"
    copy.write_text(DOMAIN.read_text())
    load_domain(DOMAIN)
    pddl_parser.forget_parsed()
    other = load_domain(copy)  # the same text under another name: its own locations
    assert other.loc is not None and other.loc.file == str(copy)
    assert len([p for p in directory.iterdir() if p.name.startswith("domain-")]) == 2


def test_a_broken_or_foreign_kept_file_is_parsed_again(directory: Path):
    load_domain(DOMAIN)
    (kept,) = [p for p in directory.iterdir() if p.name.startswith("domain-")]
    expected = load_domain(DOMAIN)
    for content in (b"not a pickle", b"", pddl_parser.pickle.dumps("a string, not a domain")):
        kept.write_bytes(content)
        pddl_parser.forget_parsed()
        assert same_model(load_domain(DOMAIN), expected)
    other = parse_domain("(define (domain other) (:action a :parameters () :effect (and)))")
    kept.write_bytes(pddl_parser.pickle.dumps(other))  # a domain, but of another text
    pddl_parser.forget_parsed()
    assert same_model(load_domain(DOMAIN), expected)


def test_lark_keeps_its_tables_in_the_private_directory(directory: Path):
    """Lark's tables go to the private directory as bytes this module reads through the
    directory's descriptor: Lark is never given a path (which it would open by name, and a
    swapped directory could answer with another user's pickle), nor its own `cache=True` (a
    predictable name in the shared temporary directory)."""
    script = ("from sage_pddl.pddl import parser as p\n"
              "parser = p._parser()\n"
              "print(parser.options.cache, p.parse_domain(open('domains/ithor.pddl').read()).name)\n")
    for _ in range(2):  # built and kept, then loaded
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env={**os.environ, "SAGE_PDDL_CACHE": str(directory)}, check=True,
                              cwd=REPO)
        assert done.stdout.split() == ["False", "ithor"]
        (tables,) = [p for p in directory.iterdir() if p.name.startswith("lark-")]
    again = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env={**os.environ, "SAGE_PDDL_CACHE": "off"}, check=True, cwd=REPO)
    assert again.stdout.split() == ["False", "ithor"]


def test_kept_tables_are_read_through_the_cache_and_broken_ones_rebuilt(
        directory: Path, monkeypatch: pytest.MonkeyPatch):
    read = []
    original = cache.read
    monkeypatch.setattr(cache, "read", lambda name: read.append(name) or original(name))
    pddl_parser._parser.cache_clear()
    try:
        built = pddl_parser._parser()
        assert [name for name in read if name.startswith("lark-")]
        (tables,) = [p for p in directory.iterdir() if p.name.startswith("lark-")]
        pddl_parser._parser.cache_clear()
        loaded = pddl_parser._parser()
        assert loaded is not built and len(loaded.rules) == len(built.rules)
        tables.write_bytes(b"not a pickle")
        pddl_parser._parser.cache_clear()
        assert len(pddl_parser._parser().rules) == len(built.rules)
    finally:
        pddl_parser._parser.cache_clear()


def test_a_fifo_in_the_directory_does_not_hang_a_read(directory: Path):
    cache.write("a", b"x")
    os.mkfifo(directory / "fifo", 0o600)
    result: list[bytes | None] = []
    reader = threading.Thread(target=lambda: result.append(cache.read("fifo")), daemon=True)
    reader.start()
    reader.join(30)  # (a read that waited for a writer would never end)
    waiting = reader.is_alive()
    if waiting:  # unblock the reader so the test run can end
        os.close(os.open(directory / "fifo", os.O_WRONLY | os.O_NONBLOCK))
    assert not waiting and result == [None]


def test_an_entry_replaced_by_a_directory_is_a_miss(directory: Path):
    """A directory where a kept file was made every command that loads the domain exit 2
    (`Is a directory: 4`): it is a cache miss, and the domain is parsed again."""
    pddl_parser.forget_parsed()
    expected = load_domain(DOMAIN)
    (kept,) = [p for p in directory.iterdir() if p.name.startswith("domain-")]
    kept.unlink()
    kept.mkdir(mode=0o700)
    assert cache.read(kept.name) is None
    pddl_parser.forget_parsed()
    assert same_model(load_domain(DOMAIN), expected)
