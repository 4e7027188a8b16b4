"""ALFRED's object catalogue: which receptacle holds what, and what can be heated, cooled,
cleaned, toggled, sliced, opened and picked up, by ALFRED object type (`Apple`, `CounterTop`).

Data from ALFRED (askforalfred/alfred, `gen/constants.py`, MIT, (c) 2019 ALFRED):
`VAL_RECEPTACLE_OBJECTS` (`RECEPTACLE_OBJECTS`: receptacle type -> the item types it accepts),
`VAL_ACTION_OBJECTS` (`HEATABLE`, `COOLABLE`, `CLEANABLE`, `TOGGLEABLE`, `SLICEABLE`),
`MOVABLE_RECEPTACLES`, `OPENABLE_CLASS_LIST` (`OPENABLE`); and the distances and defaults the
ALFRED translator (`alfred.py`) uses where a trajectory does not say where an item lies.
"""
from __future__ import annotations

_TABLE_TOP = (
    "AlarmClock Apple AppleSliced BaseballBat BasketBall Book Bowl Box Bread BreadSliced "
    "ButterKnife Candle CD CellPhone Cloth CreditCard Cup DishSponge Glassbottle Egg Fork Kettle "
    "KeyChain Knife Ladle Laptop Lettuce LettuceSliced Mug Newspaper Pan PaperTowel Pen Pencil "
    "PepperShaker Plate Pot Potato PotatoSliced RemoteControl SaltShaker SoapBar SoapBottle "
    "Spatula Spoon SprayBottle Statue TennisRacket TissueBox ToiletPaper ToiletPaperRoll Tomato "
    "TomatoSliced Vase Watch WateringCan WineBottle HandTowel")
_COOKWARE = ("Apple AppleSliced ButterKnife DishSponge Egg Fork Knife Ladle Lettuce LettuceSliced "
             "Potato PotatoSliced Spatula Spoon Tomato TomatoSliced")
_SEAT = "BasketBall Book Box CellPhone Cloth CreditCard KeyChain Laptop Newspaper Pillow RemoteControl"
_DESK = ("AlarmClock BasketBall Book Bowl Box Candle CD CellPhone Cloth CreditCard Cup Glassbottle "
         "KeyChain Laptop Mug Newspaper Pen Pencil Plate RemoteControl SprayBottle Statue "
         "TennisRacket TissueBox ToiletPaper ToiletPaperRoll Vase Watch WateringCan WineBottle")

RECEPTACLE_OBJECTS: dict[str, frozenset[str]] = {name: frozenset(objs.split()) for name, objs in {
    "Pot": _COOKWARE,
    "Pan": _COOKWARE,
    "Bowl": _COOKWARE + " Candle CD CellPhone Cloth CreditCard KeyChain Mug PaperTowel Pen Pencil "
                        "RemoteControl Watch",
    "CoffeeMachine": "Mug",
    "Microwave": "Apple AppleSliced Bowl Bread BreadSliced Cup Egg Glassbottle Mug Plate Potato "
                 "PotatoSliced Tomato TomatoSliced",
    "StoveBurner": "Kettle Pan Pot",
    "Fridge": "Apple AppleSliced Bowl Bread BreadSliced Cup Egg Glassbottle Lettuce LettuceSliced "
              "Mug Pan Plate Pot Potato PotatoSliced Tomato TomatoSliced WineBottle",
    "Mug": "ButterKnife Fork Knife Pen Pencil Spoon KeyChain Watch",
    "Plate": _COOKWARE + " Mug AlarmClock Book Candle CD CellPhone Cloth CreditCard Glassbottle "
                         "KeyChain PaperTowel Pen Pencil TissueBox Watch",
    "Cup": "ButterKnife Fork Spoon",
    "Sofa": _SEAT,
    "ArmChair": _SEAT,
    "Ottoman": _SEAT,
    "Box": "AlarmClock Book Candle CD CellPhone Cloth CreditCard DishSponge Glassbottle KeyChain Mug "
           "PaperTowel Pen Pencil RemoteControl Statue TissueBox Vase Watch",
    "Dresser": _DESK,
    "Desk": _DESK + " SoapBottle",
    "LaundryHamper": "Cloth",
    "Bed": "BaseballBat BasketBall Book CellPhone Laptop Newspaper Pillow TennisRacket",
    "Toilet": "Candle Cloth DishSponge Newspaper PaperTowel SoapBar SoapBottle SprayBottle "
              "TissueBox ToiletPaper ToiletPaperRoll HandTowel",
    "ToiletPaperHanger": "ToiletPaper ToiletPaperRoll",
    "TowelHolder": "Towel",
    "HandTowelHolder": "HandTowel",
    "Cart": "Candle Cloth DishSponge Mug PaperTowel Plunger SoapBar SoapBottle SprayBottle Statue "
            "TissueBox ToiletPaper ToiletPaperRoll Vase HandTowel",
    "BathtubBasin": "Cloth DishSponge SoapBar HandTowel",
    "SinkBasin": "Apple AppleSliced Bowl ButterKnife Cloth Cup DishSponge Egg Glassbottle Fork "
                 "Kettle Knife Ladle Lettuce LettuceSliced Mug Pan Plate Pot Potato PotatoSliced "
                 "SoapBar Spatula Spoon Tomato TomatoSliced HandTowel",
    "Cabinet": "Book Bowl Box Candle CD Cloth Cup DishSponge Glassbottle Kettle Ladle Mug Newspaper "
               "Pan PepperShaker Plate Plunger Pot SaltShaker SoapBar SoapBottle SprayBottle "
               "TissueBox ToiletPaper ToiletPaperRoll Vase WateringCan WineBottle HandTowel",
    "CounterTop": _TABLE_TOP,
    "DiningTable": _TABLE_TOP,
    "CoffeeTable": _TABLE_TOP,
    "SideTable": _TABLE_TOP,
    "Shelf": "AlarmClock Book Bowl Box Candle CD CellPhone Cloth CreditCard Cup DishSponge "
             "Glassbottle Kettle KeyChain Mug Newspaper PaperTowel Pen Pencil PepperShaker Plate "
             "Pot RemoteControl SaltShaker SoapBar SoapBottle SprayBottle Statue TissueBox "
             "ToiletPaper ToiletPaperRoll Vase Watch WateringCan WineBottle HandTowel",
    "Drawer": "Book ButterKnife Candle CD CellPhone Cloth CreditCard DishSponge Fork KeyChain Knife "
              "Ladle Newspaper Pen Pencil PepperShaker RemoteControl SaltShaker SoapBar SoapBottle "
              "Spatula Spoon SprayBottle TissueBox ToiletPaper ToiletPaperRoll Watch WateringCan "
              "HandTowel",
    "GarbageCan": "Apple AppleSliced Bread BreadSliced CD Cloth DishSponge Egg Lettuce LettuceSliced "
                  "Newspaper PaperTowel Pen Pencil Potato PotatoSliced SoapBar SoapBottle "
                  "SprayBottle TissueBox ToiletPaper ToiletPaperRoll Tomato TomatoSliced WineBottle "
                  "HandTowel",
    "Safe": "CD CellPhone CreditCard KeyChain Statue Vase Watch",
    "TVStand": "TissueBox",
    "Toaster": "BreadSliced",
}.items()}

HEATABLE = frozenset("Apple AppleSliced Bread BreadSliced Cup Egg Mug Plate Potato PotatoSliced "
                     "Tomato TomatoSliced".split())
COOLABLE = frozenset("Apple AppleSliced Bowl Bread BreadSliced Cup Egg Lettuce LettuceSliced Mug Pan "
                     "Plate Pot Potato PotatoSliced Tomato TomatoSliced WineBottle".split())
CLEANABLE = frozenset("Apple AppleSliced Bowl ButterKnife Cloth Cup DishSponge Egg Fork Kettle Knife "
                      "Ladle Lettuce LettuceSliced Mug Pan Plate Pot Potato PotatoSliced SoapBar "
                      "Spatula Spoon Tomato TomatoSliced".split())
TOGGLEABLE = frozenset("DeskLamp FloorLamp".split())
SLICEABLE = frozenset("Apple Bread Egg Lettuce Potato Tomato".split())
MOVABLE_RECEPTACLES = frozenset("Bowl Box Cup Mug Plate Pan Pot".split())
OPENABLE = frozenset("Fridge Cabinet Microwave Drawer Safe Box".split())
PICKUPABLE = frozenset().union(*RECEPTACLE_OBJECTS.values()) | MOVABLE_RECEPTACLES
"""ALFRED's pick-up candidates: everything some receptacle accepts."""
FIXED_RECEPTACLES = frozenset(RECEPTACLE_OBJECTS) - MOVABLE_RECEPTACLES

USUAL_PLACE = {"DeskLamp": "SideTable", "FloorLamp": "Floor"}
"""Where an item stands when the trajectory never says (non-pickupable items have no entry in
RECEPTACLE_OBJECTS); anything else defaults to CounterTop."""

VISIBILITY_DISTANCE = 1.5  # metres; ALFRED's constants.VISIBILITY_DISTANCE
SAME_RECEPTACLE_DISTANCE = 0.3  # metres; objectId and coordinate centres of one receptacle differ

# Type constants the ALFWorld domain declares (its actions mention them); problems must not
# redeclare them as objects.
DOMAIN_TYPE_CONSTANTS = frozenset({"microwavetype", "fridgetype", "sinkbasintype", "knifetype",
                                   "butterknifetype"})
