"""AI2-THOR object types and their affordances: the static facts of household problems.

Source: AI2-THOR's public documentation of object types and their actionable properties
(https://ai2thor.allenai.org/ithor/documentation/objects/object-types, AI2-THOR 5.x; the older
2.x table at allenai.github.io/ai2thor-v2.1.0-documentation/object-types for the columns
Open/Close, Pickupable, On/Off, Receptacle). The table below is written from that documentation,
one row per type, with a few additions that the documentation states elsewhere or that the
paper's simulator-verified task sets confirm:

* ProcTHOR types that iTHOR lacks (ClothesDryer, WashingMachine, Bench, ...);
* LaundryHamper is openable in AI2-THOR 5 (the ProcTHOR task "Open the laundry hamper" was
  verified on ai2thor 5.0.0);
* a ProcTHOR door is a `Doorway` object that opens (`CanOpen` in ProcTHOR's asset database,
  procthor/databases/asset-database.json; its house generator, procthor/generation/doors.py,
  writes each interior door `openable` with an `openness` of 1 or 0), so `Open Doorway` is
  an OpenObject like any other; it stays a structural part hidden from `visible_objects`;
* the *kinds* the domain needs beyond AI2-THOR's flags: `container` (a receptacle that holds
  things inside: every openable receptacle plus sinks, tubs, bins, hampers, bowls, cups, mugs,
  pots, pans), `sittable`/`lieable` furniture, `washable` (pickupable and not spoilt by
  water: electronics, paper, candles), `water_source` (sinks, basins, faucets, shower
  heads), `heater` (Microwave, StoveBurner, Toaster), `cooler` (Fridge);
* `starts_on`: what an unobserved toggleable object's state is at the start. AI2-THOR's
  documentation gives no default per type, so this follows the simulator's own reports in
  the task sets (AI2-THOR 5): iTHOR scenes start with their lights on (every observation that
  lists a LightSwitch reports it "on") and their lamps on (FloorPlan302's DeskLamp is
  observed "on" in B06 and B08; L08's TurnOff DeskLamp succeeded in FloorPlan201, and
  L06's TurnOn FloorLamp (FloorPlan202) and X02's TurnOn DeskLamp (FloorPlan201) failed:
  already on). Every other toggleable type starts off (Faucet, Toaster and Microwave are
  observed "off"). An observed state always wins;
* the object-state properties of the same page, each behind one domain predicate: Sliceable
  (`sliceable`; SliceObject needs a knife in the hand: `slicer`, Knife and ButterKnife, as in
  ALFRED's environment), Cookable (`cookable`: Potato; Bread and Egg cook once sliced or
  cracked: `cookable_sliced`), CanFillWithLiquid (`fillable`), Dirtyable (`dirtyable`);
  `food` is the sliceable and cookable types (AI2-THOR has no food flag);
* contextual interactions (the page's last column and AI2-THOR's CanToggleOnOff, HeatZone,
  Fill and Dirty scripts): a StoveKnob controls a StoveBurner, which cannot be toggled by
  itself (`CONTROLS`; which burner each knob controls is scene data, `scene_controls`); the
  CoffeeMachine fills a Mug with coffee (`coffee_maker`); the Microwave turns on only when
  closed (`toggles_closed`).

`FIXTURE_GROUPS` lists fixtures that stand together (a Faucet at its Sink): reaching one
reaches the others (the domain's `near` relation). `ROOM_FIXTURES` lists the fixed parts that
every iTHOR room of a type has (with its source below). Which object types each iTHOR floor
plan has, and how many instances the task sets' scenes have of a type, are data:
`data/ai2thor/scenes.toml` (ALFRED's scene layouts and AI2-THOR 5 object dumps, with their
provenance), read by `scene_types` and `scene_instances`; so is which burner each knob of a
floor plan controls, where a source says it (`scene_controls`: no bundled floor plan has one).
Which object types each receptacle type takes is data too: `data/ai2thor/receptacles.toml`
(ALFRED's and AI2-THOR's compatible receptacles, widened where a simulator-verified reference
placed an object), read by `selective` and `fits`; what AI2-THOR still refuses when it places
with forceAction=True (the `forced` placement setting: object-specific receptacles, and
objects too large for a receptacle's opening) is `data/ai2thor/placement.toml`. After
SliceObject an object has its sliced type (`SLICED_TYPES`: AppleSliced, EggCracked, ...).

Unknown types get no affordance at all (`ObjectType.known` is False): a plan step that needs an
affordance of an object the catalogue does not know is refused, the safe side for a gate. The
problem builder reports them (`TaskScene.unknown_types`).
"""
from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from ..pddl.vocabulary import name_key

_P, _O, _T, _R = "pickupable", "openable", "toggleable", "receptacle"


@dataclass(frozen=True)
class ObjectType:
    """One AI2-THOR object type with its affordances."""

    name: str
    pickupable: bool = False
    openable: bool = False
    toggleable: bool = False
    receptacle: bool = False
    container: bool = False
    sittable: bool = False
    lieable: bool = False
    water_source: bool = False
    heater: bool = False
    cooler: bool = False
    water_sensitive: bool = False
    starts_on: bool = False
    sliceable: bool = False
    cookable: bool = False
    cookable_sliced: bool = False
    fillable: bool = False
    dirtyable: bool = False
    slicer: bool = False
    coffee_maker: bool = False
    toggles_closed: bool = False
    known: bool = True

    @property
    def food(self) -> bool:
        return self.sliceable or self.cookable

    @property
    def washable(self) -> bool:
        return self.pickupable and not self.water_sensitive

    def predicates(self) -> tuple[str, ...]:
        """The domain's static predicates that hold of this type, in a fixed order."""
        flags = (
            ("pickupable", self.pickupable), ("openable", self.openable),
            ("toggleable", self.toggleable), ("receptacle", self.receptacle),
            ("container", self.container), ("sittable", self.sittable),
            ("lieable", self.lieable), ("washable", self.washable),
            ("water-source", self.water_source), ("heater", self.heater),
            ("cooler", self.cooler), ("sliceable", self.sliceable),
            ("cookable", self.cookable), ("cookable-sliced", self.cookable_sliced),
            ("fillable", self.fillable), ("dirtyable", self.dirtyable),
            ("slicer", self.slicer), ("food", self.food), ("coffee-maker", self.coffee_maker),
            ("toggles-closed", self.toggles_closed),
        )
        return tuple(name for name, holds in flags if holds)


# name: AI2-THOR actionable properties (P pickupable, O openable, T toggleable, R receptacle)
_ACTIONABLE: dict[str, str] = {
    "AlarmClock": "P", "AluminumFoil": "P", "Apple": "P", "AppleSliced": "P",
    "ArmChair": "R", "BaseballBat": "P", "BasketBall": "P", "Bathtub": "R", "BathtubBasin": "R",
    "Bed": "R", "Bench": "R", "Blinds": "O", "Book": "PO", "Boots": "P", "Bottle": "P",
    "Bowl": "PR", "Box": "POR", "Bread": "P", "BreadSliced": "P", "ButterKnife": "P",
    "Cabinet": "OR", "Candle": "PT", "Cart": "R", "CD": "P", "CellPhone": "PT", "Chair": "R",
    "Cloth": "P", "ClothesDryer": "OTR", "CoffeeMachine": "TR", "CoffeeTable": "R",
    "CounterTop": "R", "CreditCard": "P", "Cup": "PR", "Curtains": "", "Desk": "R",
    "DeskLamp": "T", "Desktop": "T", "DiningTable": "R", "DishSponge": "P", "DogBed": "R",
    "Doorway": "O", "Drawer": "OR", "Dresser": "R", "Dumbbell": "P", "Egg": "P", "EggCracked": "P",
    "Faucet": "T", "Floor": "R", "FloorLamp": "T", "Footstool": "R", "Fork": "P",
    "Fridge": "OR", "GarbageBag": "", "GarbageCan": "R", "HandTowel": "P",
    "HandTowelHolder": "R", "HousePlant": "", "Kettle": "PO", "KeyChain": "P", "Knife": "P",
    "Ladle": "P", "Laptop": "POT", "LaundryHamper": "OR", "Lettuce": "P", "LettuceSliced": "P",
    "LightSwitch": "T", "Microwave": "OTR", "Mirror": "", "Mug": "PR", "Newspaper": "P",
    "Ottoman": "R", "Painting": "", "Pan": "PR", "PaperTowelRoll": "P", "Pen": "P",
    "Pencil": "P", "PepperShaker": "P", "Pillow": "P", "Plate": "PR", "Plunger": "P",
    "Poster": "", "Pot": "PR", "Potato": "P", "PotatoSliced": "P", "RemoteControl": "P",
    "RoomDecor": "", "Safe": "OR", "SaltShaker": "P", "ScrubBrush": "P", "Shelf": "R",
    "ShelvingUnit": "R", "ShowerCurtain": "O", "ShowerDoor": "O", "ShowerGlass": "",
    "ShowerHead": "T", "SideTable": "R", "Sink": "R", "SinkBasin": "R", "SoapBar": "P",
    "SoapBottle": "P", "Sofa": "R", "Spatula": "P", "Spoon": "P", "SprayBottle": "P",
    "Statue": "P", "Stool": "R", "StoveBurner": "TR", "StoveKnob": "T", "TableTopDecor": "P",
    "TeddyBear": "P", "Television": "T", "TennisRacket": "P", "TissueBox": "P",
    "Toaster": "TR", "Toilet": "OR", "ToiletPaper": "P", "ToiletPaperHanger": "R",
    "Tomato": "P", "TomatoSliced": "P", "Towel": "P", "TowelHolder": "R", "TVStand": "R",
    "VacuumCleaner": "", "Vase": "P", "WashingMachine": "OTR", "Watch": "P",
    "WateringCan": "P", "Window": "", "WineBottle": "P",
}

# Receptacles that hold things inside rather than on top (besides every openable receptacle).
_OPEN_CONTAINERS = frozenset({
    "Bathtub", "BathtubBasin", "Bowl", "Cup", "GarbageCan", "LaundryHamper", "Mug", "Pan",
    "Pot", "Sink", "SinkBasin", "Toaster",
})
_SITTABLE = frozenset({"ArmChair", "Bed", "Bench", "Chair", "Footstool", "Ottoman", "Sofa",
                       "Stool", "Toilet", "DogBed"})
_LIEABLE = frozenset({"Bed", "Sofa", "DogBed"})
_WATER = frozenset({"Sink", "SinkBasin", "Bathtub", "BathtubBasin", "Faucet", "ShowerHead"})
_HEATERS = frozenset({"Microwave", "StoveBurner", "Toaster"})
_COOLERS = frozenset({"Fridge"})
_WATER_SENSITIVE = frozenset({"CellPhone", "Laptop", "RemoteControl", "AlarmClock", "Watch",
                         "CD", "Candle", "Book", "Newspaper", "TissueBox", "ToiletPaper",
                         "PaperTowelRoll"})
_STARTS_ON = frozenset({"LightSwitch", "DeskLamp", "FloorLamp"})
_SLICEABLE = frozenset({"Apple", "Bread", "Egg", "Lettuce", "Potato", "Tomato"})
_COOKABLE = frozenset({"Potato", "PotatoSliced", "BreadSliced", "EggCracked"})
_COOKABLE_SLICED = frozenset({"Bread", "Egg", "Potato"})
_FILLABLE = frozenset({"Bottle", "Bowl", "Cup", "HousePlant", "Kettle", "Mug", "Pot",
                       "WateringCan", "WineBottle"})
_DIRTYABLE = frozenset({"Bed", "Bowl", "Cloth", "Cup", "Mirror", "Mug", "Pan", "Plate", "Pot"})
_SLICERS = frozenset({"Knife", "ButterKnife"})

FIXTURE_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"Sink", "SinkBasin", "Faucet"}),
    frozenset({"Bathtub", "BathtubBasin", "Faucet", "ShowerHead"}),
    frozenset({"StoveBurner", "StoveKnob"}),
    frozenset({"Toilet", "ToiletPaperHanger"}),
    frozenset({"ShowerDoor", "ShowerHead", "ShowerCurtain", "ShowerGlass"}),
)
"""Fixtures that stand together: reaching one reaches the others."""

ONE_UNIT = frozenset({"StoveBurner", "StoveKnob"})
"""Fixture types whose instances are parts of one unit, the stove (every iTHOR kitchen has one:
AI2-THOR's object-type documentation, "Kitchens (All)"): each knob stands by each burner. They
are never paired by index, which no scene says (which knob switches which burner is the
knob's controlledObjects, `scene_controls`)."""

CONTROLS: tuple[tuple[str, str], ...] = (("StoveKnob", "StoveBurner"),)
"""(controller, controlled): an instance of the first switches an instance of the second, which
AI2-THOR toggles only through it (CanToggleOnOff: a burner is not self-controlled). Which one
is the scene's fact (a StoveKnob's `controlledObjects`): `scene_controls`, never an index rule."""

ROOM_FIXTURES: dict[str, tuple[str, ...]] = {
    "kitchen": ("Cabinet", "CoffeeMachine", "CounterTop", "Faucet", "Fridge", "GarbageCan",
                "LightSwitch", "Microwave", "Sink", "SinkBasin", "StoveBurner", "StoveKnob",
                "Toaster"),
    "living_room": ("FloorLamp", "GarbageCan", "HousePlant", "LightSwitch", "Painting", "Sofa",
                    "Television"),
    "bedroom": ("Bed", "GarbageCan", "LightSwitch", "Mirror", "Window"),
    "bathroom": ("GarbageCan", "HandTowelHolder", "LightSwitch", "Mirror", "Sink", "SinkBasin",
                 "Toilet", "ToiletPaperHanger", "TowelHolder"),
}
"""The fixed parts (not pickupable) that ALL 30 iTHOR scenes of a room type have: the "Scenes"
column of AI2-THOR's object-type documentation ("Kitchens (All)"), counted over the 120
floor plans in ALFRED's scene layouts (askforalfred/alfred gen/layouts/FloorPlanN-objects.json,
MIT licence, AI2-THOR 2.1.0), which agree with the documentation's rows where both are read."""

def _build() -> dict[str, ObjectType]:
    table = {}
    for name, flags in _ACTIONABLE.items():
        openable, receptacle = "O" in flags, "R" in flags
        table[name.lower()] = ObjectType(
            name=name, pickupable="P" in flags, openable=openable, toggleable="T" in flags,
            receptacle=receptacle,
            container=receptacle and (openable or name in _OPEN_CONTAINERS),
            sittable=name in _SITTABLE, lieable=name in _LIEABLE, water_source=name in _WATER,
            heater=name in _HEATERS, cooler=name in _COOLERS,
            water_sensitive=name in _WATER_SENSITIVE,
            starts_on=name in _STARTS_ON, sliceable=name in _SLICEABLE,
            cookable=name in _COOKABLE, cookable_sliced=name in _COOKABLE_SLICED,
            fillable=name in _FILLABLE, dirtyable=name in _DIRTYABLE, slicer=name in _SLICERS,
            coffee_maker=name == "CoffeeMachine", toggles_closed=name == "Microwave",
        )
    return table


CATALOGUE: dict[str, ObjectType] = _build()
"""Lower-cased type name -> ObjectType."""

STRUCTURAL = frozenset({"Wall", "Floor", "Ceiling", "Room", "Doorway", "Window", "WallDecal"})
"""Types the server hides from visible_objects (REFERENCE §8.4); Floor stays a receptacle."""

EVERYDAY_WORDS: dict[str, tuple[str, ...]] = {
    "table": ("DiningTable", "CoffeeTable", "SideTable", "Desk"),
    "lamp": ("DeskLamp", "FloorLamp"), "soap": ("SoapBar", "SoapBottle"),
    "shower": ("ShowerHead", "Faucet"), "rack": ("TowelHolder", "HandTowelHolder"),
    "curtain": ("Curtains", "ShowerCurtain"), "oven": ("StoveBurner", "Microwave"),
    "garbage": ("GarbageCan",), "nightstand": ("Dresser",),
}
"""Plain-English words of instructions and datasets that stand for one of several AI2-THOR types,
best candidate first; the task's other objects choose among them (`canonical_type`). They are
not names of objects: a plan step saying "lamp" or "table" stays unknown to the gate. Other
names of an object (TV, Stove, Nightstand for a SideTable) are the domain's `; @sage synonym`
annotations, the one table the gate, the executor and the readers share; a word listed here
and there offers the domain's names first (a nightstand is a SideTable, else a Dresser)."""


_WORD_BREAK = re.compile(r"[\s_\-]+")


@lru_cache(maxsize=4096)  # a scene asks for the same few dozen names thousands of times
def camel_case(name: str) -> str:
    """`dining_table` / `dining table` / `diningTable` -> `DiningTable`; CamelCase is kept."""
    words = [w for w in _WORD_BREAK.split(name.strip()) if w]
    return "".join(w[:1].upper() + w[1:] for w in words)


def lookup(name: str) -> ObjectType | None:
    """The catalogue entry of a type name (any case or spelling), or None."""
    return CATALOGUE.get(camel_case(name).lower())


def canonical_type(name: str, prefer: tuple[str, ...] = (),
                   synonyms: Mapping[str, Sequence[str]] | None = None) -> str:
    """The AI2-THOR type a dataset or instruction word names, as CamelCase.

    Known types keep their catalogue spelling; otherwise the names the word stands for are
    its domain synonyms (`synonyms`: a `Vocabulary.synonyms`, keyed by `name_key`) then its
    `EVERYDAY_WORDS` (a plural also as its singular), and the one present in `prefer` (the
    task's other objects) is chosen when there is one, else the first; otherwise the word
    itself in CamelCase (an unknown type).
    """
    camel = camel_case(name)
    known = CATALOGUE.get(camel.lower())
    if known:
        return known.name
    candidates: list[str] = []
    for word in (camel.lower(), camel.lower().rstrip("s")):
        for meant in (*(synonyms or {}).get(name_key(word), ()), *EVERYDAY_WORDS.get(word, ())):
            if meant not in candidates:
                candidates.append(meant)
        if candidates:
            break
    if not candidates and camel.lower().endswith("s"):
        singular = CATALOGUE.get(camel.lower()[:-1])
        if singular:
            return singular.name
    if candidates:
        preferred = {p.lower() for p in prefer}
        return next((c for c in candidates if c.lower() in preferred), candidates[0])
    return camel


def affordances(name: str) -> ObjectType:
    """The catalogue entry, or a conservative unknown entry with no affordance."""
    return lookup(name) or ObjectType(name=camel_case(name), known=False)


def room_fixtures(room: str) -> tuple[str, ...]:
    """The fixed parts every iTHOR room of this type has (`kitchen`, `living_room`, ...)."""
    return ROOM_FIXTURES.get(re.sub(r"[\s\-]+", "_", room.strip().lower()), ())


@dataclass(frozen=True)
class SceneInventory:
    """What `data/ai2thor/scenes.toml` says of one floor plan: its object types (AI2-THOR 5
    names, structural parts such as Window included) and its types with several instances."""

    scene: str
    types: tuple[str, ...]
    instances: dict[str, int]
    controls: tuple[tuple[str, str], ...] = ()
    """(controller instance, controlled instance) where the data names the pairing."""


def _ai2thor_data(file_name: str) -> dict:
    """One of the bundled AI2-THOR data files (`data/ai2thor/`), parsed."""
    path = resources.files("sage_pddl") / "data" / "ai2thor" / file_name
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _scene_key(scene: str) -> str:
    return re.sub(r"_physics$", "", (scene or "").strip(), flags=re.IGNORECASE).lower()


@cache
def _scenes() -> dict[str, SceneInventory]:
    data = _ai2thor_data("scenes.toml")
    renamed: dict[str, str] = data.pop("alfred_names")
    scenes = {}
    for scene, entry in data.items():
        removed = set(entry.get("ai2thor5_removed", "").split())
        named = [renamed.get(t, t) for t in entry["types"].split()]
        named += entry.get("ai2thor5_added", "").split()
        types = tuple(sorted({t for t in named if t and t not in removed}, key=str.lower))
        controls = tuple((str(k), str(b)) for k, b in entry.get("controls", {}).items())
        scenes[scene.lower()] = SceneInventory(scene, types, dict(entry.get("instances", {})),
                                               controls)
    return scenes


def scene_inventory(scene: str) -> SceneInventory | None:
    """The object types of a known iTHOR floor plan (`FloorPlan1`, `FloorPlan1_physics`), or
    None for a scene the data does not list (ProcTHOR houses, other simulators)."""
    return _scenes().get(_scene_key(scene))


def scene_types(scene: str) -> tuple[str, ...]:
    """The object types a known floor plan has (structural parts included), else ()."""
    found = scene_inventory(scene)
    return found.types if found else ()


def scene_instances(scene: str) -> dict[str, int]:
    """How many instances of each multi-instance type a known floor plan has."""
    found = scene_inventory(scene)
    return dict(found.instances) if found else {}


def scene_controls(scene: str) -> tuple[tuple[str, str], ...]:
    """(controller, controlled) instance pairs a known floor plan's data names, else ()."""
    found = scene_inventory(scene)
    return found.controls if found else ()


def _paired(first: list[str], second: list[str]) -> list[tuple[str, str]]:
    """Instances of two fixture types that stand together: the i-th with the i-th, and a lone
    instance with every instance of the other type."""
    if len(first) == 1 or len(second) == 1:
        return [(a, b) for a in first for b in second]
    return list(zip(first, second))


def instance_relations(instances: dict[str, list[str]]) -> list[tuple[str, str, str]]:
    """(`near`, a, b) for fixtures that stand together (both directions; the parts of a stove
    all with all, `ONE_UNIT`); `instances` maps a lower-case type to its object names. Which
    knob controls which burner is not derived here: it is scene data (`scene_controls`)."""
    out: list[tuple[str, str, str]] = []
    for group in FIXTURE_GROUPS:
        present = sorted(t.lower() for t in group if instances.get(t.lower()))
        for a in present:
            for b in present:
                if a != b:
                    pairs = ([(x, y) for x in instances[a] for y in instances[b]]
                             if {a, b} <= {t.lower() for t in ONE_UNIT}
                             else _paired(instances[a], instances[b]))
                    out += [("near", x, y) for x, y in pairs]
    return sorted(set(out))


@cache
def _accepts() -> dict[str, frozenset[str]]:
    data = _ai2thor_data("receptacles.toml")
    widened: dict[str, str] = data.get("widened", {})
    return {receptacle.lower(): frozenset(f"{types} {widened.get(receptacle, '')}".lower().split())
            for receptacle, types in data["accepts"].items()}


@cache
def _placed_somewhere() -> frozenset[str]:
    return frozenset().union(*_accepts().values())


@dataclass(frozen=True)
class _Forced:
    """data/ai2thor/placement.toml: what AI2-THOR refuses under forceAction=True."""

    object_specific: frozenset[str]
    opening: dict[str, tuple[float, float]]
    cross_section: dict[str, tuple[float, float]]


@cache
def _forced() -> _Forced:
    data = _ai2thor_data("placement.toml")
    return _Forced(frozenset(data["object_specific"].lower().split()),
                   {t.lower(): (float(a), float(b)) for t, (a, b) in data["opening"].items()},
                   {t.lower(): (float(a), float(b))
                    for t, (a, b) in data["cross_section"].items()})


def _typed_fits(kind: str, receptacle: str) -> bool:
    accepted = _accepts().get(receptacle)
    return accepted is None or kind in accepted or kind not in _placed_somewhere()


def _enters(kind: str, receptacle: str) -> bool:
    """Whether an object of type `kind` physically enters a `receptacle` (placement.toml: its
    smallest cross-section fits the receptacle's largest opening; no data: it does)."""
    opening = _forced().opening.get(receptacle)
    section = _forced().cross_section.get(kind)
    if opening is None or section is None:
        return True
    return section[0] <= opening[0] and section[1] <= opening[1]


def selective(receptacle_type: str, placement: str = "typed") -> bool:
    """Whether the data restricts what this receptacle type takes under `placement`
    (`typed`: AI2-THOR's default compatible receptacles; `forced`: forceAction=True, which
    keeps the object-specific receptacles and the openings objects must enter). A type it does
    not restrict takes every pickupable object: the gate is never stricter than the sources."""
    kind = camel_case(receptacle_type).lower()
    if placement == "typed":
        return kind in _accepts()
    return kind in _forced().object_specific or kind in _forced().opening


def fits(object_type: str, receptacle_type: str, placement: str = "typed") -> bool:
    """Whether an object of `object_type` may be put on or in a `receptacle_type` under
    `placement`: `typed`, listed for it, or the receptacle is not selective, or no receptacle
    row names the object's type; `forced`, also every object that physically enters a
    receptacle that is not object-specific (data/ai2thor/placement.toml)."""
    kind, receptacle = camel_case(object_type).lower(), camel_case(receptacle_type).lower()
    if _typed_fits(kind, receptacle) or placement == "typed":
        return _typed_fits(kind, receptacle)
    return receptacle not in _forced().object_specific and _enters(kind, receptacle)


SLICED_TYPES: dict[str, str] = {
    "Apple": "AppleSliced", "Bread": "BreadSliced", "Lettuce": "LettuceSliced",
    "Potato": "PotatoSliced", "Tomato": "TomatoSliced", "Egg": "EggCracked",
}
"""The type AI2-THOR gives an object once SliceObject has acted on it: the pieces of a sliced
X are XSliced objects, and a sliced (cracked) Egg is an EggCracked (AI2-THOR's object-type
documentation lists these types; SliceObject replaces the object with them). No other
AI2-THOR state change makes an object of another type: Break, Cook, Dirty and Fill set states
of the same object."""


def sliced_type(object_type: str) -> str | None:
    """The type an object of `object_type` has once sliced (`SLICED_TYPES`), or None."""
    entry = lookup(object_type)
    return SLICED_TYPES.get(entry.name) if entry else None
