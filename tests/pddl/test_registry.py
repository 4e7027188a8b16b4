"""The one registry idiom of planners, LLM backends and environments (`pddl/registry.py`)."""
from __future__ import annotations

import pytest

from sage_pddl.env import ENVIRONMENTS
from sage_pddl.llm import BACKENDS
from sage_pddl.pddl.registry import Registry
from sage_pddl.planners import PLANNERS


class Refused(Exception):
    pass


def make(size: int, *, colour: str = "red") -> tuple[int, str]:
    return size, colour


def test_names_match_ignoring_case_spaces_and_punctuation():
    registry: Registry[tuple[int, str]] = Registry("widget", Refused, {"Few-Shot Box+": make})
    for spelling in ("few-shot box+", "FEWSHOTBOX", " few_shot_box "):
        assert registry.canonical(spelling) == "Few-Shot Box+"
        assert spelling in registry
    assert registry.build("fewshotbox", 2, colour="blue") == (2, "blue")


def test_names_are_listed_in_registration_order():
    registry: Registry[object] = Registry("widget", Refused, {"b": make, "a": make})
    registry.register("c", make)
    assert registry.names() == ["b", "a", "c"]


def test_an_unknown_name_is_the_areas_error_listing_the_names():
    registry: Registry[object] = Registry("widget", Refused, {"one": make, "two": make})
    with pytest.raises(Refused, match=r"unknown widget 'three'; available: one, two"):
        registry.build("three")


def test_a_taken_name_is_refused_unless_replaced():
    registry: Registry[object] = Registry("widget", Refused, {"One": make})
    with pytest.raises(Refused, match=r"a widget named 'One' is already registered"):
        registry.register("one", dict)
    registry.register("ONE", dict, replace=True)
    assert registry.names() == ["ONE"] and registry.factory("one") is dict


def test_empty_names_and_non_factories_are_refused():
    registry: Registry[object] = Registry("widget", Refused)
    with pytest.raises(Refused, match="non-empty name"):
        registry.register(" - ", make)
    with pytest.raises(Refused, match="'module:attribute'"):
        registry.register("x", "not a factory")


def test_a_module_attribute_string_is_imported_on_first_use():
    registry: Registry[object] = Registry("widget", Refused, {"od": "collections:OrderedDict"})
    from collections import OrderedDict

    assert registry.factory("od") is OrderedDict
    assert registry.build("od", a=1) == OrderedDict(a=1)


def test_an_option_the_factory_does_not_take_is_named_with_those_it_takes():
    registry: Registry[object] = Registry("widget", Refused, {"w": make})
    with pytest.raises(Refused, match=r"widget 'w': no option 'size2' \(options: size, colour\)"):
        registry.build("w", size2=1)
    with pytest.raises(Refused, match=r"widget 'w': missing a required option"):
        registry.build("w")
    with pytest.raises(Refused, match=r"\(options: colour\)"):
        registry.build("w", 1, shade="x")  # the positional argument is not an option


def test_the_three_registries_are_this_one():
    """Planners, LLM backends and environments are `Registry` values, and their public
    listings are the registries' names."""
    from sage_pddl.env import list_envs
    from sage_pddl.llm import available_backends
    from sage_pddl.planners import available_planners

    for registry, kind, listed in ((PLANNERS, "planner", available_planners()),
                                   (BACKENDS, "LLM backend", available_backends()),
                                   (ENVIRONMENTS, "environment", list_envs())):
        assert isinstance(registry, Registry) and registry.kind == kind
        assert registry.names() == listed


def test_traits_are_asked_of_an_entry_and_listed_in_registration_order():
    registry: Registry[object] = Registry("widget", Refused, {"a": make, "b": make, "c": make},
                                          traits={"a": {"round"}, "c": ("round", "red")})
    registry.register("d", make, traits=["red"])
    assert registry.has("A", "round") and not registry.has("b", "round")
    assert registry.with_trait("round") == ["a", "c"] and registry.with_trait("red") == ["c", "d"]
    registry.register("c", make, replace=True)  # a replaced entry has the traits given anew
    assert registry.with_trait("round") == ["a"]
    with pytest.raises(Refused, match=r"unknown widget 'e'"):
        registry.has("e", "round")
    with pytest.raises(Refused, match=r"traits given for no widget of the entries: b"):
        Registry("widget", Refused, {"a": make}, traits={"b": {"round"}})


def test_the_bundled_entries_traits():
    from sage_pddl.llm import POOLS_HOSTS, TAKES_HOST
    from sage_pddl.planners import uses_memory

    assert [p for p in PLANNERS.names() if uses_memory(p)] == [
        "SAGE", "SAGE-NoVerifier", "SAGE-NoRepair", "Few-Shot CoT", "Hierarchical Few-Shot"]
    assert BACKENDS.with_trait(TAKES_HOST) == ["ollama", "openai", "replay"]
    assert BACKENDS.with_trait(POOLS_HOSTS) == ["ollama", "openai"]
