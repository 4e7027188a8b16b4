"""The domain registry: bundled domains, drop-in folders, caching and the summary."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from sage_pddl import domains
from sage_pddl.domains import ENV_VAR, domain_info, list_domains, load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import SageError, parse_problem

LAMP_DOMAIN = """\
; A drop-in domain no code knows about.
(define (domain lamps)
  (:requirements :strips :typing :negative-preconditions)
  (:types lamp)
  (:predicates (near ?l - lamp) (lit ?l - lamp))
  ; @sage alias Approach GoNear
  (:action Approach
    :parameters (?l - lamp)
    :precondition (and)
    :effect (near ?l))
  ; @sage alias Light SwitchOn
  (:action Light
    :parameters (?l - lamp)
    :precondition (and (near ?l) (not (lit ?l)))
    :effect (lit ?l)))
"""

LAMP_PROBLEM = """\
(define (problem two-lamps) (:domain lamps)
  (:objects desk floor - lamp)
  (:init)
  (:goal (and (lit desk))))
"""


@pytest.fixture(autouse=True)
def _isolated(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    domains.clear_cache()
    yield
    domains.clear_cache()


@pytest.fixture
def drop_in(tmp_path: Path) -> Path:
    folder = tmp_path / "my-domains"
    folder.mkdir()
    (folder / "lamps.pddl").write_text(LAMP_DOMAIN)
    # A problem file beside it is not a domain and must not be listed.
    (folder / "two-lamps.pddl").write_text(LAMP_PROBLEM)
    return folder


def _gate_lamps(domain):
    gate = compile_gate(domain, parse_problem(LAMP_PROBLEM))
    good = gate.check([{"action": "GoNear", "object": "desk", "target": ""},
                       {"action": "SwitchOn", "object": "desk", "target": ""}])
    bad = gate.check([{"action": "Light", "object": "floor", "target": ""}])
    return good, bad


def test_bundled_domains_are_listed():
    found = list_domains()
    assert {"alfworld", "virtualhome"} <= set(found)
    assert all(path.suffix == ".pddl" and path.is_file() for path in found.values())


def test_drop_in_through_environment_variable_is_listed_and_used(drop_in, monkeypatch):
    monkeypatch.setenv(ENV_VAR, os.pathsep.join([str(drop_in.parent / "missing"), str(drop_in)]))
    found = list_domains()
    assert found["lamps"] == drop_in / "lamps.pddl"
    assert "two-lamps" not in found
    domain = load_domain("lamps")
    assert domain.name == "lamps"
    good, bad = _gate_lamps(domain)
    assert good.valid and good.goal_reached
    assert not bad.valid
    assert bad.violations[0].code == "light/requires/near"


def test_drop_in_through_explicit_folder(drop_in):
    assert "lamps" not in list_domains()
    assert "lamps" in list_domains(domains_dirs=[drop_in])
    good, _ = _gate_lamps(load_domain("LAMPS", domains_dirs=drop_in))
    assert good.valid


def test_explicit_folder_shadows_environment_which_shadows_bundled(tmp_path, monkeypatch):
    env_dir, cli_dir = tmp_path / "env", tmp_path / "cli"
    env_dir.mkdir()
    cli_dir.mkdir()
    (env_dir / "alfworld.pddl").write_text(LAMP_DOMAIN.replace("(domain lamps)", "(domain from-env)"))
    (cli_dir / "alfworld.pddl").write_text(LAMP_DOMAIN.replace("(domain lamps)", "(domain from-cli)"))
    assert load_domain("alfworld").name == "alfworld"
    monkeypatch.setenv(ENV_VAR, str(env_dir))
    assert load_domain("alfworld").name == "from-env"
    assert load_domain("alfworld", domains_dirs=[cli_dir]).name == "from-cli"


def test_unknown_name_lists_available_domains():
    with pytest.raises(SageError) as raised:
        load_domain("no-such-domain")
    message = str(raised.value)
    assert "no-such-domain" in message and "alfworld" in message and "virtualhome" in message


def test_missing_explicit_folder_is_an_error(tmp_path):
    with pytest.raises(SageError, match="--domains-dir"):
        list_domains(domains_dirs=[tmp_path / "nope"])


def test_paths_and_file_names(drop_in):
    assert load_domain(drop_in / "lamps.pddl").name == "lamps"
    assert load_domain(str(drop_in / "lamps.pddl")).name == "lamps"
    assert load_domain("alfworld.pddl").name == "alfworld"
    with pytest.raises(SageError, match="no such file"):
        load_domain(str(drop_in / "absent.pddl"))


def test_cache_reuses_until_the_file_changes(drop_in):
    first = load_domain("lamps", domains_dirs=[drop_in])
    assert load_domain("lamps", domains_dirs=[drop_in]) is first
    path = drop_in / "lamps.pddl"
    path.write_text(LAMP_DOMAIN.replace("(domain lamps)", "(domain lamps-v2)"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert load_domain("lamps", domains_dirs=[drop_in]).name == "lamps-v2"


def test_domain_info_lists_actions_parameters_and_aliases():
    info = domain_info(load_domain("alfworld"))
    actions = {a.name: a for a in info.actions}
    assert actions["Take"].parameters == (("o", "item"), ("r", "receptacle"))
    assert "PickupObject" in actions["Take"].aliases
    assert "Use" in actions["Toggle"].aliases
    assert actions["Take"].signature() == "(Take ?o - item ?r - receptacle)"
    as_dict = info.to_dict()
    assert as_dict["name"] == "alfworld"
    assert {"name": "GoTo", "parameters": [{"name": "r", "type": "receptacle"}],
            "aliases": ["GotoLocation", "MoveTo", "Navigate", "Walk"]} in as_dict["actions"]
