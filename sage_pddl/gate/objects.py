"""A problem's objects as the gate reads them: `ProblemObjects`.

The objects of a task are the domain constants followed by the problem objects (a name declared
in both is one object whose types are merged; constants that the domain's actions use without
declaring them, as ALFWorld does, are simply problem objects). An object belongs to its declared
types, their ancestors (a type with several parents, an `either` parent, belongs to all of them)
and `object`. An `(either a b)` parameter or quantified variable accepts an object of any of the
listed types; an untyped one accepts any. Objects are named by key (`model.key`) and written
back in their declared spelling (`format_atom`).

What is made when first read (the types of every object, the objects of each type list) is the
same value whichever thread makes it: threads share one `ProblemObjects` without a lock.
"""
from __future__ import annotations

import itertools
from functools import cached_property

from ..pddl.model import Domain, ObjectKeys, Problem, key, object_keys
from .ground import GroundAtom, GroundLiteral, spelled
from .schema import DomainSchema


class ProblemObjects:
    """The objects of a domain and problem: their keys, declared types and spellings, the
    types each belongs to, and atoms written in the source's spelling (module docstring)."""

    def __init__(self, schema: DomainSchema, domain: Domain, problem: Problem):
        self.schema = schema
        self.domain = domain
        self.problem = problem
        self.declared, self.object_names = self._object_keys()
        """`declared`: object key -> its declared type key, or keys (`model.object_keys`): the
        domain constants and the problem objects (`object_types` has their ancestors).
        `object_names`: object key -> original spelling, in declaration order (a name
        declared twice: its first spelling)."""

    def ancestors(self, type_name: str) -> frozenset[str]:
        """The type, its ancestors and `object`."""
        return self.schema.ancestors(type_name)

    def _object_keys(self) -> ObjectKeys:
        """`model.object_keys` of the domain's constants and then the problem's objects: the
        tables each holds put together (a name declared in both: made again of all)."""
        schema, problem = self.schema, self.problem
        if not schema.declared:
            return problem.declared, problem.spelling
        declared = {**schema.declared, **problem.declared}
        if len(declared) < len(schema.declared) + len(problem.declared):
            return object_keys([*self.domain.constants, *problem.objects])
        return declared, {**schema.spelling, **problem.spelling}

    @cached_property
    def object_types(self) -> dict[str, frozenset[str]]:
        """Object key -> the type keys it belongs to (declared types, their ancestors and
        `object`; a name declared twice, as a constant and an object, belongs to both)."""
        type_set = self.schema.type_set
        return {name: type_set(types) for name, types in self.declared.items()}

    def types_of(self, obj: str) -> frozenset[str] | None:
        """The type keys object `obj` belongs to (as `object_types`, without making the
        table of every object), or None when it is no object."""
        declared = self.declared.get(obj)
        return None if declared is None else self.schema.type_set(declared)

    @cached_property
    def declared_types(self) -> dict[str, tuple[str, ...]]:
        """Object key -> its declared type names (`object` when untyped), for messages."""
        declared: dict[str, list[str]] = {}
        for typed in itertools.chain(self.domain.constants, self.problem.objects):
            names = declared.setdefault(typed.name.lower(), [])
            for type_name in typed.types or ("object",):
                if type_name not in names:
                    names.append(type_name)
        return {n: tuple(t) for n, t in declared.items()}

    @cached_property
    def _objects_of(self) -> dict[tuple[str, ...], tuple[str, ...]]:
        """Type names as written -> `objects_of` them: one entry per type list the domain
        writes."""
        return {}

    def objects_of(self, types: tuple[str, ...]) -> tuple[str, ...]:
        """Object keys that fit a parameter typed `types` (() = any), in declaration order."""
        found = self._objects_of.get(types)
        if found is None:
            wanted = {key(t) for t in types}
            if not wanted or "object" in wanted:
                found = tuple(self.object_names)
            else:
                object_types = self.object_types
                found = tuple(o for o in self.object_names if object_types[o] & wanted)
            self._objects_of[types] = found  # (the same value whichever thread writes it)
        return found

    def fits(self, obj: str, types: tuple[str, ...]) -> bool:
        if not types:
            return True
        have = self.object_types.get(obj, frozenset({"object"}))
        return any(key(t) in have for t in types)

    @property
    def predicate_names(self) -> dict[str, str]:
        """Predicate key -> its spelling in the domain."""
        return self.schema.predicate_names

    def format_atom(self, atom: GroundAtom) -> str:
        """`("found", "apple")` -> `(found Apple)` in the domain's and problem's spelling."""
        return spelled(self.schema.predicate_names.get(atom[0], atom[0]), atom[1:],
                       self.object_names)

    def format_literal(self, literal: GroundLiteral) -> str:
        text = self.format_atom(literal.atom)
        return text if literal.positive else f"(not {text})"
