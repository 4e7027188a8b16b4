"""Registry of domains: the bundled ones and drop-in `.pddl` files.

A domain is one PDDL file. `load_domain(name_or_path)` accepts a path to a file, or a name that
resolves to `<name>.pddl` in the first folder that has it, searched in this order:

1. the explicit folders passed as `domains_dirs` (the CLI's `--domains-dir`);
2. the folders listed in the environment variable `SAGE_PDDL_DOMAINS` (separated by
   `os.pathsep`), read at every call so a test or a shell can change it;
3. the bundled `domains/` folder shipped inside the package (`ithor`, `procthor`, `alfworld`,
   `virtualhome`, ...);
4. domains read from an installed package, not copied here (`INSTALLED`): `behavior`, the
   Embodied Agent Interface's `behavior.pddl` (iGibson's BEHAVIOR actions, domain `igibson`),
   found in the installed eai-eval (extra `virtualhome`) without importing it.

Names compare case-insensitively and an earlier folder shadows a later one, so a drop-in file
can replace a bundled domain without any code change. Only files that define a domain
(`(define (domain ...`) count; problem files lying in the same folder are ignored.

Parsed domains are cached by resolved path, modification time and size: loading the same file
twice returns the same `Domain` object until the file changes.

`domain_info(domain)` summarises a domain (actions with their parameters and `@sage alias`
names) for `sage-pddl domains`.
"""
from __future__ import annotations

import importlib.resources
import importlib.util
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from .pddl.errors import SageError
from .pddl.limits import not_a_file, read_text
from .pddl.model import Domain, key
from .pddl.vocabulary import vocabulary

ENV_VAR = "SAGE_PDDL_DOMAINS"
DOMAIN_SUFFIX = ".pddl"

# A domain file starts (after comments) with `(define (domain NAME)`; problem files say
# `(define (problem ...` and are skipped when listing.
_DEFINES_DOMAIN = re.compile(r"\(\s*define\s*\(\s*domain\b", re.IGNORECASE)
_COMMENT = re.compile(r";[^\n]*")
_HEAD_CHARS = 64_000

INSTALLED: dict[str, tuple[str, str]] = {
    "behavior": ("virtualhome_eval", "resources/behavior/behavior.pddl"),
}
"""Domains read from an installed package: name -> (top-level module, file inside it)."""

_cache: dict[Path, tuple[int, int, Domain]] = {}
"""Resolved domain file -> (mtime in ns, size, its parsed domain), `load_domain`'s, under
`_cache_lock`: one entry per domain file the process read (a changed file replaces its own)."""
_cache_lock = threading.Lock()


def bundled_domains_dir() -> Path:
    """The `domains/` folder shipped with the package."""
    bundled = importlib.resources.files("sage_pddl") / "domains"
    path = Path(str(bundled))
    if path.is_dir():
        return path
    # Running from a source checkout without the package-data symlink.
    return Path(__file__).resolve().parent.parent / "domains"


def search_dirs(domains_dirs: list[str | Path] | tuple[str | Path, ...] | str | Path | None = None
                ) -> list[Path]:
    """The folders searched for domain names, in priority order.

    Explicit folders must exist (a typo in `--domains-dir` is an error); folders from
    `SAGE_PDDL_DOMAINS` that do not exist are skipped, like entries of `PATH`.
    """
    explicit: list[Path] = []
    if domains_dirs is not None:
        if isinstance(domains_dirs, (str, Path)):
            domains_dirs = [domains_dirs]
        for entry in domains_dirs:
            folder = Path(entry).expanduser()
            if not folder.is_dir():
                raise SageError(f"--domains-dir {entry}: not a folder")
            explicit.append(folder)
    from_env = [Path(part).expanduser() for part in os.environ.get(ENV_VAR, "").split(os.pathsep)
                if part.strip()]
    folders = explicit + [f for f in from_env if f.is_dir()] + [bundled_domains_dir()]
    unique: list[Path] = []
    seen: set[Path] = set()
    for folder in folders:
        resolved = folder.resolve()
        if resolved not in seen:
            seen.add(resolved)
            unique.append(folder)
    return unique


def installed_domain(name: str) -> Path | None:
    """The file of an `INSTALLED` domain, or None when its package is not installed."""
    module, file = INSTALLED[name]
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / file
    return path if path.is_file() else None


def _defines_domain(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(_HEAD_CHARS)
    except OSError:
        return False
    return bool(_DEFINES_DOMAIN.search(_COMMENT.sub("", head)))


def list_domains(domains_dirs=None) -> dict[str, Path]:
    """Every domain name reachable by `load_domain`, mapped to the file it resolves to.

    Names are file stems as spelled on disk; when two folders hold the same name
    (case-insensitively), the earlier folder in the search order wins.
    """
    found: dict[str, Path] = {}
    taken: set[str] = set()
    for folder in search_dirs(domains_dirs):
        for path in sorted(folder.glob(f"*{DOMAIN_SUFFIX}")):
            name = path.stem
            if key(name) in taken or not path.is_file() or not _defines_domain(path):
                continue
            taken.add(key(name))
            found[name] = path
    for name in INSTALLED:
        installed = installed_domain(name) if key(name) not in taken else None
        if installed is not None:
            taken.add(key(name))
            found[name] = installed
    return found


def _looks_like_path(text: str) -> bool:
    return (text.lower().endswith(DOMAIN_SUFFIX) or "/" in text or os.sep in text
            or (os.altsep is not None and os.altsep in text))


def resolve_domain(name_or_path: str | Path, domains_dirs=None) -> Path:
    """The file a domain name or path refers to; `SageError` naming the choices otherwise."""
    text = str(name_or_path).strip()
    as_file = None
    if isinstance(name_or_path, Path) or _looks_like_path(text):
        path = Path(text).expanduser()
        if path.is_file():
            return path
        if path.is_dir():
            raise SageError(_folder_message(text))
        kind = not_a_file(path)
        if kind is not None:
            raise SageError(f"domain file {name_or_path}: is {kind}, not a file")
        bare = Path(text).name
        if bare != text or not bare.lower().endswith(DOMAIN_SUFFIX):
            raise SageError(f"domain file {name_or_path}: no such file")
        as_file = text
        text = bare[: -len(DOMAIN_SUFFIX)]  # "alfworld.pddl" also names the bundled domain
    # A bare name of an existing file in the working directory also works.
    wanted = key(text)
    domains = list_domains(domains_dirs)
    for name, path in domains.items():
        if key(name) == wanted:
            return path
    if Path(text).is_file():
        return Path(text)
    if Path(text).is_dir():
        raise SageError(_folder_message(text))
    available = ", ".join(sorted(domains, key=key)) or "none"
    folders = ", ".join(str(f) for f in search_dirs(domains_dirs))
    if as_file is not None:
        raise SageError(f"domain file {as_file}: no such file (nor is {text!r} the name of a "
                        f"known domain: {available})")
    raise SageError(f"unknown domain {text!r}: available domains are {available} "
                    f"(searched {folders}; add folders with --domains-dir or {ENV_VAR})")


def _folder_message(text: str) -> str:
    return (f"domain file {text}: is a folder, not a file (give a .pddl file in it, or the "
            f"folder as --domains-dir {text} and a domain by its name)")


def load_domain(name_or_path: str | Path, domains_dirs=None) -> Domain:
    """Parse a domain by name or path, reusing the parsed model while the file is unchanged."""
    from .pddl import parse_domain  # the parser imports this package's model, not the reverse

    path = resolve_domain(name_or_path, domains_dirs).resolve()
    try:
        stat = path.stat()
        signature = (stat.st_mtime_ns, stat.st_size)
        with _cache_lock:
            cached = _cache.get(path)
        if cached is not None and cached[:2] == signature:
            return cached[2]
        text = read_text(path, "the domain file")
    except OSError as error:
        raise SageError(f"domain file {path}: {error.strerror or error}") from error
    domain = parse_domain(text, file=str(path), keep=True)
    with _cache_lock:
        _cache[path] = (*signature, domain)
    return domain


def clear_cache() -> None:
    """Forget every parsed domain (tests that rewrite a file within one mtime tick use it)."""
    with _cache_lock:
        _cache.clear()


# --- summary ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class ActionInfo:
    name: str
    parameters: tuple[tuple[str, str], ...]
    """(variable without `?`, type) pairs; an untyped parameter has type `object`."""
    aliases: tuple[str, ...]

    def signature(self) -> str:
        params = " ".join(f"?{var} - {typ}" for var, typ in self.parameters)
        return f"({self.name}{' ' + params if params else ''})"

    def to_dict(self) -> dict:
        return {"name": self.name,
                "parameters": [{"name": var, "type": typ} for var, typ in self.parameters],
                "aliases": list(self.aliases)}


@dataclass(frozen=True)
class DomainInfo:
    name: str
    requirements: tuple[str, ...]
    types: tuple[str, ...]
    predicates: tuple[str, ...]
    actions: tuple[ActionInfo, ...]

    def to_dict(self) -> dict:
        return {"name": self.name, "requirements": list(self.requirements),
                "types": list(self.types), "predicates": list(self.predicates),
                "actions": [a.to_dict() for a in self.actions]}


def domain_info(domain: Domain) -> DomainInfo:
    """A summary of a domain for listings: its actions, their parameters and aliases."""
    aliases = vocabulary(domain).aliases
    actions = tuple(
        ActionInfo(
            name=action.name,
            parameters=tuple((p.name, "|".join(p.types) if p.types else "object")
                             for p in action.parameters),
            aliases=aliases.get(action.name, ()),
        )
        for action in domain.actions)
    return DomainInfo(
        name=domain.name,
        requirements=tuple(domain.requirements),
        types=tuple(t.name for t in domain.types),
        predicates=tuple(p.name for p in domain.predicates),
        actions=actions,
    )
