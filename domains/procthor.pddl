;; AI2-THOR ProcTHOR household domain for sage-pddl: the iTHOR domain (ithor.pddl, whose
;; comments document every action) plus the rooms of a ProcTHOR house, as the paper's server
;; handles them (../REFERENCE.md §8.3):
;;   * `MoveTo <room>` (Kitchen, LivingRoom, Bedroom, Bathroom, ...) moves the robot into that
;;     room; rooms are objects of type `room`.
;;   * `MoveTo <object>` and `Find <object>` need the object in the current room (`here`); the
;;     server refuses them otherwise ("MoveTo <room> first").
;;   * Entering another room forgets what was located in the previous one (reachable objects and
;;     the located sink/heater/fridge): the plan must locate them again. The server would walk
;;     back to an object it found earlier; asking the plan to re-locate it is stricter but keeps
;;     "reachable" meaning "in this room, located".
;;   * Place/PutIn/Serve/Sit/LieOn need their target in the current room: the server walks to
;;     the nearest instance of the type itself, which in a house may be in another room.
;;   * The held object travels with the robot: its room follows the robot's.
;; Objects are instances of AI2-THOR types, as in iTHOR; a type listed in several rooms (a
;; Television in the Kitchen and the LivingRoom) has one instance per room (Television_1,
;; Television_2), and a step naming the type acts on the first instance it applies to: the one
;; in the current room. Locating an instance locates the other instances of its type in the
;; same room (`same-kind`, as in iTHOR).
;;   (is-room ?x) static: ?x is a room     (robot-in ?r) the robot's room
;;   (in-room ?o ?r)  ?o is in room ?r                   (here ?x) ?x is in the current room
;;                    (rooms are always `here`, so MoveTo <room> needs nothing)

(define (domain procthor)
  ; @sage describe A household robot in a multi-room ProcTHOR house: it moves between rooms and to objects, picks them up and puts them down, opens and closes containers and doors, switches appliances on and off, and washes, fills, slices, heats and cools objects.
  ; @sage fields object target
  ;; Other names for AI2-THOR object types, as people and models write them and the action
  ;; server resolves them (a plan word that names no object is read as the type it stands for;
  ;; an unknown word stays unknown). Sources: AI2-THOR's object-type documentation (the type
  ;; names and what each type is: a SideTable is a nightstand or end table, a Shelf a
  ;; bookshelf's shelf), the words of the SAGE task sets' instructions and expected objects
  ;; (nightstand, clothes, towel rack, stove, coffee machine, trash) and the names reviewers
  ;; met in model plans (issue 24: Stove, TV, Bookshelf, BedsideTable, towel rack).
  ; @sage synonym Television TV TelevisionSet
  ; @sage synonym StoveBurner Stove Burner Cooktop Hob
  ; @sage synonym Shelf Bookshelf Bookcase
  ; @sage synonym ShelvingUnit Bookshelf Bookcase
  ; @sage synonym SideTable BedsideTable Nightstand NightTable EndTable
  ; @sage synonym TowelHolder TowelRack TowelBar
  ; @sage synonym HandTowelHolder HandTowelRack
  ; @sage synonym Fridge Refrigerator
  ; @sage synonym Sofa Couch
  ; @sage synonym GarbageCan TrashCan Trash Bin WasteBasket Wastebin DustBin
  ; @sage synonym CellPhone Phone MobilePhone Smartphone
  ; @sage synonym RemoteControl Remote TVRemote
  ; @sage synonym CoffeeMachine CoffeeMaker
  ; @sage synonym Faucet Tap
  ; @sage synonym Cloth Clothes Rag
  ; @sage synonym KeyChain Keys
  ; @sage synonym LaundryHamper Hamper
  ; @sage synonym DishSponge Sponge
  ; @sage synonym CounterTop Counter Countertops
  ; @sage synonym LightSwitch Light Lights
  (:requirements :strips :typing :negative-preconditions :conditional-effects
                 :universal-preconditions :existential-preconditions
                 :disjunctive-preconditions :equality)
  (:types
    location liquid - object
    room thing - location)
  (:constants water coffee wine - liquid)

  (:predicates
    ;; static affordances (AI2-THOR actionable properties and kinds)
    (pickupable ?x - location)
    (openable ?x - location)
    (toggleable ?x - location)
    (receptacle ?x - location)
    (container ?x - location)
    (sittable ?x - location)
    (lieable ?x - location)
    (washable ?x - location)
    (water-source ?x - location)
    (heater ?x - location)
    (cooler ?x - location)
    (near ?o - thing ?x - location)
    (beside ?o - thing ?x - location)
    (sliceable ?x - thing)
    (cookable ?x - thing)
    (cookable-sliced ?x - thing)
    (fillable ?x - thing)
    (dirtyable ?x - thing)
    (slicer ?x - thing)
    (food ?x - thing)
    (coffee-maker ?x - thing)
    (toggles-closed ?x - thing)
    (controls ?k - thing ?b - thing)
    (selective ?r - thing)         ; ?r takes only some objects (under the placement setting)
    (fits ?o - thing ?r - thing)   ; ?r, selective, takes ?o
    (fits-sliced ?o - thing ?r - thing)  ; ?r takes ?o once sliced (its XSliced type)
    (forced-placement)             ; AI2-THOR places with forceAction on (tasks/placement.py)
    (same-kind ?a - thing ?b - location)
    ;; fluents
    (reachable ?x - location)
    (holding ?o - thing)
    (hand-empty)
    (inside ?o - thing ?c - location)
    (on ?o - thing ?r - location)
    (shut-in ?o - thing ?c - thing)
    (opened ?x - location)
    (closed ?x - location)
    (turned-on ?x - location)
    (sat-on ?x - location)
    (lying-on ?x - location)
    (heated ?o - thing)
    (cooled ?o - thing)
    (cleaned ?o - thing)
    (sliced ?o - thing)
    (cooked ?o - thing)
    (dirty ?o - thing)
    (filled ?o - thing ?l - liquid)
    (water-reachable)
    (heater-reachable)
    (cooler-reachable)
    (waited)
    ;; rooms
    (is-room ?x - location)
    (robot-in ?r - location)
    (in-room ?o - thing ?r - location)
    (here ?x - location))

  ;; MoveTo X: X is a room or an object. A room (its roomType, e.g. Kitchen) always succeeds:
  ;; the robot enters it; the objects of that room become "here", what was located elsewhere
  ;; must be located again, and the held object comes along. An object must be in the current
  ;; room (the server answers "MoveTo <room> first"); it, what is in/on it and the fixtures near
  ;; it become reachable.
  ; @sage alias MoveTo Navigate GoTo GoToLocation Walk WalkTo
  ; @sage reason MoveTo (here ?x) not-in-current-room "?x is not in the current room: MoveTo its room first"
  (:action MoveTo
    :parameters (?x - location)
    :precondition (and (here ?x))
    :effect (and
      (reachable ?x)
      (forall (?o - thing) (when (same-kind ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (near ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (beside ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (inside ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (on ?o ?x) (reachable ?o)))
      (when (water-source ?x) (water-reachable))
      (when (heater ?x) (heater-reachable))
      (when (cooler ?x) (cooler-reachable))
      (forall (?o - thing) (when (and (near ?o ?x) (water-source ?o)) (water-reachable)))
      (forall (?o - thing) (when (and (near ?o ?x) (heater ?o)) (heater-reachable)))
      ;; entering a room
      (when (is-room ?x) (robot-in ?x))
      (forall (?q - room) (when (and (is-room ?x) (robot-in ?q) (not (= ?q ?x))) (not (robot-in ?q))))
      (forall (?o - thing) (when (and (is-room ?x) (in-room ?o ?x)) (here ?o)))
      (forall (?o - thing)
        (when (and (is-room ?x) (not (in-room ?o ?x)) (not (holding ?o)))
              (and (not (here ?o)) (not (reachable ?o)))))
      (forall (?o - thing) (when (and (is-room ?x) (holding ?o)) (in-room ?o ?x)))
      (forall (?o - thing ?q - room)
        (when (and (is-room ?x) (holding ?o) (in-room ?o ?q) (not (= ?q ?x)))
              (not (in-room ?o ?q))))
      (when (is-room ?x) (not (water-reachable)))
      (when (is-room ?x) (not (heater-reachable)))
      (when (is-room ?x) (not (cooler-reachable)))))

  ;; Find X: turn towards the nearest X and designate it (the server's `found`). An object
  ;; inside a closed container is not visible, so it cannot be found; in ProcTHOR only the
  ;; current room is searched. Effect as MoveTo of an object.
  ; @sage alias Find Search Locate LookFor
  ; @sage reason Find (here ?x) not-in-current-room "?x is not in the current room: MoveTo its room first"
  ; @sage reason Find (forall (?c - thing) (not (shut-in ?x ?c))) shut-in "?x is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  (:action Find
    :parameters (?x - thing)
    :precondition (and (here ?x) (forall (?c - thing) (not (shut-in ?x ?c))))
    :effect (and
      (reachable ?x)
      (forall (?o - thing) (when (same-kind ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (near ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (beside ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (inside ?o ?x) (reachable ?o)))
      (forall (?o - thing) (when (on ?o ?x) (reachable ?o)))
      (when (water-source ?x) (water-reachable))
      (when (heater ?x) (heater-reachable))
      (when (cooler ?x) (cooler-reachable))
      (forall (?o - thing) (when (and (near ?o ?x) (water-source ?o)) (water-reachable)))
      (forall (?o - thing) (when (and (near ?o ?x) (heater ?o)) (heater-reachable)))))

  ;; Pick O: PickupObject. AI2-THOR needs a pickupable object and a free hand; the server needs
  ;; the object located first; an object in a closed container is not interactable. The object
  ;; leaves its receptacle.
  ; @sage alias Pick Grab PickUp PickupObject Take Get
  ; @sage reason Pick (pickupable ?o) not-pickupable "?o cannot be picked up (AI2-THOR: not pickupable)"
  ; @sage reason Pick (hand-empty) hand-full "the hand already holds an object: place it first"
  ; @sage reason Pick (reachable ?o) not-reachable "?o has not been located: MoveTo or Find ?o first"
  ; @sage reason Pick (forall (?c - thing) (not (shut-in ?o ?c))) shut-in "?o is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  (:action Pick
    :parameters (?o - thing)
    :precondition (and (pickupable ?o) (hand-empty) (reachable ?o) (forall (?c - thing) (not (shut-in ?o ?c))))
    :effect (and
      (holding ?o)
      (not (hand-empty))
      (forall (?r - thing) (not (inside ?o ?r)))
      (forall (?r - thing) (not (on ?o ?r)))
      (forall (?y - thing) (not (beside ?y ?o)))
      (forall (?y - location) (not (beside ?o ?y)))))

  ;; Place R: PutObject of the held object onto/into receptacle R. The server walks to R itself
  ;; (no MoveTo needed: it navigates before PutObject) and refuses a non-receptacle, an empty
  ;; hand and a closed container. Legacy JSON steps may name the item in `object` and the
  ;; receptacle in `target`: the receptacle is taken from `target` when it is given.
  ;; A selective receptacle takes only some objects, under the problem's placement setting
  ;; (tasks/placement.py, docs/goals.md "Placement"): with forceAction on (`forced-placement`),
  ;; what physically enters it, an object-specific one (Toaster, CoffeeMachine) its own types;
  ;; with it off, the types AI2-THOR lists as compatible (no Apple on the CoffeeMachine, no Pot
  ;; in a Mug under either). A sliced object counts as the type AI2-THOR gives it then
  ;; (`fits-sliced`: a sliced Bread is BreadSliced, which the Toaster takes). PutIn and Serve
  ;; check the same.
  ; @sage alias Place Put PutOn PutObject PlaceOn
  ; @sage step Place target|object
  ; @sage reason Place (receptacle ?r) not-receptacle "?r is not a receptacle: nothing can be placed on it"
  ; @sage reason Place (not (hand-empty)) hand-empty "the hand is empty: Pick an object first"
  ; @sage reason Place (not (closed ?r)) container-closed "?r is closed: Open it first"
  ; @sage reason Place (forall (?c - thing) (not (shut-in ?r ?c))) shut-in "?r is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason Place (not (holding ?r)) target-held "?r is the object being held"
  ; @sage reason Place (forall (?o - thing) (imply (and (holding ?o) (selective ?r)) (or (fits ?o ?r) (and (sliced ?o) (fits-sliced ?o ?r))))) does-not-fit "the held object cannot be put on or in ?r: AI2-THOR refuses it under the problem's placement setting (forced: too large for ?r, or ?r takes only its own types; typed: not a compatible receptacle for its type)"
  ; @sage reason Place (here ?r) not-in-current-room "?r is not in the current room: MoveTo its room first"
  (:action Place
    :parameters (?r - thing)
    :precondition (and (receptacle ?r) (not (hand-empty)) (here ?r) (not (closed ?r)) (forall (?c - thing) (not (shut-in ?r ?c)))
                       (not (holding ?r))
                       (forall (?o - thing) (imply (and (holding ?o) (selective ?r))
                                         (or (fits ?o ?r) (and (sliced ?o) (fits-sliced ?o ?r))))))
    :effect (and
      (reachable ?r)
      (hand-empty)
      (forall (?o - thing) (when (and (holding ?o) (container ?r)) (inside ?o ?r)))
      (forall (?o - thing) (when (and (holding ?o) (not (container ?r))) (on ?o ?r)))
      (forall (?o - thing) (when (holding ?o) (not (holding ?o))))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r))
                                 (and (heated ?o) (not (cooled ?o)))))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r) (cookable ?o))
                                 (cooked ?o)))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r)
                                      (cookable-sliced ?o) (sliced ?o))
                                 (cooked ?o)))
      (forall (?o - thing) (when (and (holding ?o) (cooler ?r)) (and (cooled ?o) (not (heated ?o)))))
      (forall (?o - thing) (when (and (holding ?o) (coffee-maker ?r) (turned-on ?r) (fillable ?o))
                                 (and (filled ?o coffee) (heated ?o) (not (cooled ?o)))))
      (forall (?o ?f - thing)
        (when (and (holding ?o) (near ?f ?r) (water-source ?f) (turned-on ?f) (fillable ?o))
              (filled ?o water)))
      (forall (?o ?f - thing)
        (when (and (holding ?o) (near ?f ?r) (water-source ?f) (turned-on ?f) (washable ?o))
              (and (cleaned ?o) (not (dirty ?o)))))))

  ;; PutIn C: the server runs the same skill as Place (PutObject); kept as its own action so the
  ;; plan reads as written and PutIn-specific feedback is possible.
  ; @sage alias PutIn PutInto PutInside Insert
  ; @sage step PutIn target|object
  ; @sage reason PutIn (receptacle ?r) not-receptacle "?r is not a receptacle: nothing can be put in it"
  ; @sage reason PutIn (not (hand-empty)) hand-empty "the hand is empty: Pick an object first"
  ; @sage reason PutIn (not (closed ?r)) container-closed "?r is closed: Open it first"
  ; @sage reason PutIn (forall (?c - thing) (not (shut-in ?r ?c))) shut-in "?r is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason PutIn (not (holding ?r)) target-held "?r is the object being held"
  ; @sage reason PutIn (forall (?o - thing) (imply (and (holding ?o) (selective ?r)) (or (fits ?o ?r) (and (sliced ?o) (fits-sliced ?o ?r))))) does-not-fit "the held object cannot be put on or in ?r: AI2-THOR refuses it under the problem's placement setting (forced: too large for ?r, or ?r takes only its own types; typed: not a compatible receptacle for its type)"
  ; @sage reason PutIn (here ?r) not-in-current-room "?r is not in the current room: MoveTo its room first"
  (:action PutIn
    :parameters (?r - thing)
    :precondition (and (receptacle ?r) (not (hand-empty)) (here ?r) (not (closed ?r)) (forall (?c - thing) (not (shut-in ?r ?c)))
                       (not (holding ?r))
                       (forall (?o - thing) (imply (and (holding ?o) (selective ?r))
                                         (or (fits ?o ?r) (and (sliced ?o) (fits-sliced ?o ?r))))))
    :effect (and
      (reachable ?r)
      (hand-empty)
      (forall (?o - thing) (when (and (holding ?o) (container ?r)) (inside ?o ?r)))
      (forall (?o - thing) (when (and (holding ?o) (not (container ?r))) (on ?o ?r)))
      (forall (?o - thing) (when (holding ?o) (not (holding ?o))))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r))
                                 (and (heated ?o) (not (cooled ?o)))))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r) (cookable ?o))
                                 (cooked ?o)))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r)
                                      (cookable-sliced ?o) (sliced ?o))
                                 (cooked ?o)))
      (forall (?o - thing) (when (and (holding ?o) (cooler ?r)) (and (cooled ?o) (not (heated ?o)))))
      (forall (?o - thing) (when (and (holding ?o) (coffee-maker ?r) (turned-on ?r) (fillable ?o))
                                 (and (filled ?o coffee) (heated ?o) (not (cooled ?o)))))
      (forall (?o ?f - thing)
        (when (and (holding ?o) (near ?f ?r) (water-source ?f) (turned-on ?f) (fillable ?o))
              (filled ?o water)))
      (forall (?o ?f - thing)
        (when (and (holding ?o) (near ?f ?r) (water-source ?f) (turned-on ?f) (washable ?o))
              (and (cleaned ?o) (not (dirty ?o)))))))

  ;; Open X: OpenObject on a located, openable, closed object. What is inside becomes
  ;; accessible, but for what an inner closed container still shuts in.
  ; @sage alias Open OpenObject
  ; @sage reason Open (openable ?x) not-openable "?x cannot be opened (AI2-THOR: not openable)"
  ; @sage reason Open (forall (?c - thing) (not (shut-in ?x ?c))) shut-in "?x is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason Open (reachable ?x) not-reachable "?x has not been located: MoveTo or Find ?x first"
  ; @sage reason Open (imply (openable ?x) (closed ?x)) already-open "?x is already open"
  ; @sage reason Open (imply (toggles-closed ?x) (not (turned-on ?x))) turned-on "?x is on: turn it off before opening it (AI2-THOR)"
  (:action Open
    :parameters (?x - thing)
    :precondition (and (openable ?x) (reachable ?x) (imply (openable ?x) (closed ?x))
                       (forall (?c - thing) (not (shut-in ?x ?c)))
                       (imply (toggles-closed ?x) (not (turned-on ?x))))
    :effect (and
      (opened ?x)
      (not (closed ?x))
      (forall (?o - thing) (not (shut-in ?o ?x)))))

  ;; Close X: CloseObject on a located, openable, open object. What is inside is shut in.
  ; @sage alias Close CloseObject Shut
  ; @sage reason Close (openable ?x) not-openable "?x cannot be closed (AI2-THOR: not openable)"
  ; @sage reason Close (forall (?c - thing) (not (shut-in ?x ?c))) shut-in "?x is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason Close (reachable ?x) not-reachable "?x has not been located: MoveTo or Find ?x first"
  ; @sage reason Close (imply (openable ?x) (opened ?x)) already-closed "?x is already closed"
  (:action Close
    :parameters (?x - thing)
    :precondition (and (openable ?x) (reachable ?x) (imply (openable ?x) (opened ?x))
                       (forall (?c - thing) (not (shut-in ?x ?c))))
    :effect (and
      (closed ?x)
      (not (opened ?x))
      (forall (?o - thing) (when (inside ?o ?x) (shut-in ?o ?x)))
      (forall (?o ?c - thing) (when (and (container ?c) (inside ?o ?c) (inside ?c ?x))
                                    (shut-in ?o ?x)))))

  ;; TurnOn X: ToggleObjectOn, refused by AI2-THOR when X is already on, and for a Microwave
  ;; that is open (CanToggleOnOff.MustBeClosedToTurnOn). A StoveKnob and the StoveBurner it
  ;; controls switch together, where the scene says which burner that is (`controls`). What is
  ;; in or on a heat source that comes on turns Hot and cooks if cookable (HeatZone); a
  ;; CoffeeMachine fills the Mug on it with coffee; a Faucet or ShowerHead fills and washes what
  ;; stands in a basin under it (Fill.cs, Dirty.cs).
  ; @sage alias TurnOn ToggleOn ToggleObjectOn SwitchOn Activate
  ; @sage reason TurnOn (toggleable ?x) not-toggleable "?x cannot be turned on or off (AI2-THOR: not toggleable)"
  ; @sage reason TurnOn (forall (?c - thing) (not (shut-in ?x ?c))) shut-in "?x is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason TurnOn (reachable ?x) not-reachable "?x has not been located: MoveTo or Find ?x first"
  ; @sage reason TurnOn (not (turned-on ?x)) already-on "?x is already on"
  ; @sage reason TurnOn (imply (toggles-closed ?x) (closed ?x)) must-be-closed "?x is open: close it before turning it on (AI2-THOR)"
  (:action TurnOn
    :parameters (?x - thing)
    :precondition (and (toggleable ?x) (reachable ?x) (not (turned-on ?x))
                       (forall (?c - thing) (not (shut-in ?x ?c)))
                       (imply (toggles-closed ?x) (closed ?x)))
    :effect (and
      (turned-on ?x)
      (forall (?b - thing) (when (controls ?x ?b) (turned-on ?b)))
      (forall (?k - thing) (when (controls ?k ?x) (turned-on ?k)))
      (forall (?o - thing) (when (and (heater ?x) (inside ?o ?x)) (and (heated ?o) (not (cooled ?o)))))
      (forall (?o - thing) (when (and (heater ?x) (on ?o ?x)) (and (heated ?o) (not (cooled ?o)))))
      (forall (?o - thing) (when (and (heater ?x) (inside ?o ?x) (cookable ?o)) (cooked ?o)))
      (forall (?o - thing) (when (and (heater ?x) (on ?o ?x) (cookable ?o)) (cooked ?o)))
      (forall (?o - thing) (when (and (heater ?x) (inside ?o ?x) (cookable-sliced ?o) (sliced ?o))
                                 (cooked ?o)))
      (forall (?o - thing) (when (and (heater ?x) (on ?o ?x) (cookable-sliced ?o) (sliced ?o))
                                 (cooked ?o)))
      (forall (?b ?o - thing) (when (and (controls ?x ?b) (heater ?b) (on ?o ?b))
                                    (and (heated ?o) (not (cooled ?o)))))
      (forall (?b ?o - thing) (when (and (controls ?x ?b) (heater ?b) (on ?o ?b) (cookable ?o))
                                    (cooked ?o)))
      (forall (?o - thing) (when (and (coffee-maker ?x) (on ?o ?x) (fillable ?o))
                                 (and (filled ?o coffee) (heated ?o) (not (cooled ?o)))))
      (forall (?o - thing) (when (and (coffee-maker ?x) (inside ?o ?x) (fillable ?o))
                                 (and (filled ?o coffee) (heated ?o) (not (cooled ?o)))))
      (forall (?b ?o - thing) (when (and (water-source ?x) (near ?b ?x) (inside ?o ?b) (fillable ?o))
                                    (filled ?o water)))
      (forall (?b ?o - thing) (when (and (water-source ?x) (near ?b ?x) (inside ?o ?b) (washable ?o))
                                    (and (cleaned ?o) (not (dirty ?o)))))))

  ;; TurnOff X: ToggleObjectOff, refused by AI2-THOR when X is already off. A knob and its
  ;; burner switch off together.
  ; @sage alias TurnOff ToggleOff ToggleObjectOff SwitchOff Deactivate
  ; @sage reason TurnOff (toggleable ?x) not-toggleable "?x cannot be turned on or off (AI2-THOR: not toggleable)"
  ; @sage reason TurnOff (forall (?c - thing) (not (shut-in ?x ?c))) shut-in "?x is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason TurnOff (reachable ?x) not-reachable "?x has not been located: MoveTo or Find ?x first"
  ; @sage reason TurnOff (imply (toggleable ?x) (turned-on ?x)) already-off "?x is already off"
  (:action TurnOff
    :parameters (?x - thing)
    :precondition (and (toggleable ?x) (reachable ?x) (imply (toggleable ?x) (turned-on ?x))
                       (forall (?c - thing) (not (shut-in ?x ?c))))
    :effect (and
      (not (turned-on ?x))
      (forall (?b - thing) (when (controls ?x ?b) (not (turned-on ?b))))
      (forall (?k - thing) (when (controls ?k ?x) (not (turned-on ?k))))))

  ;; Wash O: rinse the held object under a located sink/faucet. (The paper's server routes Wash
  ;; to Pick and always fails, REFERENCE §8.3: a server bug, not a semantics to copy.)
  ; @sage alias Wash Rinse
  ; @sage reason Wash (washable ?o) not-washable "?o cannot be washed"
  ; @sage reason Wash (holding ?o) not-holding "?o is not in the hand: Pick it first"
  ; @sage reason Wash (water-reachable) no-water "no sink or faucet has been located: MoveTo the Sink first"
  (:action Wash
    :parameters (?o - thing)
    :precondition (and (washable ?o) (holding ?o) (water-reachable))
    :effect (and (cleaned ?o) (not (dirty ?o))))

  ;; Sit X: the server walks to X and reports success. Only furniture one can sit on is
  ;; accepted.
  ; @sage alias Sit SitOn SitDown
  ; @sage reason Sit (sittable ?x) not-sittable "?x is not something to sit on"
  ; @sage reason Sit (here ?x) not-in-current-room "?x is not in the current room: MoveTo its room first"
  (:action Sit
    :parameters (?x - thing)
    :precondition (and (sittable ?x) (here ?x))
    :effect (and (reachable ?x) (sat-on ?x)))

  ; @sage alias LieOn LieDown Lie
  ; @sage reason LieOn (lieable ?x) not-lieable "?x is not something to lie on"
  ; @sage reason LieOn (here ?x) not-in-current-room "?x is not in the current room: MoveTo its room first"
  (:action LieOn
    :parameters (?x - thing)
    :precondition (and (lieable ?x) (here ?x))
    :effect (and (reachable ?x) (lying-on ?x)))

  ;; Serve R: the server runs the Place skill: put the held object on/in R.
  ; @sage alias Serve Deliver
  ; @sage step Serve target|object
  ; @sage reason Serve (receptacle ?r) not-receptacle "?r is not a receptacle: nothing can be served on it"
  ; @sage reason Serve (not (hand-empty)) hand-empty "the hand is empty: Pick an object first"
  ; @sage reason Serve (not (closed ?r)) container-closed "?r is closed: Open it first"
  ; @sage reason Serve (forall (?c - thing) (not (shut-in ?r ?c))) shut-in "?r is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason Serve (not (holding ?r)) target-held "?r is the object being held"
  ; @sage reason Serve (forall (?o - thing) (imply (and (holding ?o) (selective ?r)) (or (fits ?o ?r) (and (sliced ?o) (fits-sliced ?o ?r))))) does-not-fit "the held object cannot be put on or in ?r: AI2-THOR refuses it under the problem's placement setting (forced: too large for ?r, or ?r takes only its own types; typed: not a compatible receptacle for its type)"
  ; @sage reason Serve (here ?r) not-in-current-room "?r is not in the current room: MoveTo its room first"
  (:action Serve
    :parameters (?r - thing)
    :precondition (and (receptacle ?r) (not (hand-empty)) (here ?r) (not (closed ?r)) (forall (?c - thing) (not (shut-in ?r ?c)))
                       (not (holding ?r))
                       (forall (?o - thing) (imply (and (holding ?o) (selective ?r))
                                         (or (fits ?o ?r) (and (sliced ?o) (fits-sliced ?o ?r))))))
    :effect (and
      (reachable ?r)
      (hand-empty)
      (forall (?o - thing) (when (and (holding ?o) (container ?r)) (inside ?o ?r)))
      (forall (?o - thing) (when (and (holding ?o) (not (container ?r))) (on ?o ?r)))
      (forall (?o - thing) (when (holding ?o) (not (holding ?o))))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r))
                                 (and (heated ?o) (not (cooled ?o)))))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r) (cookable ?o))
                                 (cooked ?o)))
      (forall (?o - thing) (when (and (holding ?o) (heater ?r) (turned-on ?r)
                                      (cookable-sliced ?o) (sliced ?o))
                                 (cooked ?o)))
      (forall (?o - thing) (when (and (holding ?o) (cooler ?r)) (and (cooled ?o) (not (heated ?o)))))
      (forall (?o - thing) (when (and (holding ?o) (coffee-maker ?r) (turned-on ?r) (fillable ?o))
                                 (and (filled ?o coffee) (heated ?o) (not (cooled ?o)))))
      (forall (?o ?f - thing)
        (when (and (holding ?o) (near ?f ?r) (water-source ?f) (turned-on ?f) (fillable ?o))
              (filled ?o water)))
      (forall (?o ?f - thing)
        (when (and (holding ?o) (near ?f ?r) (water-source ?f) (turned-on ?f) (washable ?o))
              (and (cleaned ?o) (not (dirty ?o)))))))

  ;; Wait: the server's Pass. No arguments; its only effect records that time passed (some
  ;; planners' PDDL writers drop an empty effect, which Fast Downward then refuses).
  ; @sage alias Wait Pass Idle NoOp
  (:action Wait
    :parameters ()
    :precondition (and)
    :effect (waited))

  ;; Heat/Cool/Clean O: the opt-in object-treatment actions (REFERENCE §1.1): the object stays
  ;; in the hand and an appliance of the right kind must have been located.
  ; @sage alias Heat Warm HeatUp
  ; @sage reason Heat (holding ?o) not-holding "?o is not in the hand: Pick it first"
  ; @sage reason Heat (heater-reachable) no-heater "no heating appliance (Microwave, StoveBurner, Toaster) has been located: MoveTo one first"
  (:action Heat
    :parameters (?o - thing)
    :precondition (and (holding ?o) (heater-reachable))
    :effect (and (heated ?o) (not (cooled ?o))
                 (when (cookable ?o) (cooked ?o))
                 (when (and (cookable-sliced ?o) (sliced ?o)) (cooked ?o))))

  ; @sage alias Cool Chill Refrigerate
  ; @sage reason Cool (holding ?o) not-holding "?o is not in the hand: Pick it first"
  ; @sage reason Cool (cooler-reachable) no-cooler "no Fridge has been located: MoveTo the Fridge first"
  (:action Cool
    :parameters (?o - thing)
    :precondition (and (holding ?o) (cooler-reachable))
    :effect (and (cooled ?o) (not (heated ?o))))

  ; @sage alias Clean Scrub
  ; @sage reason Clean (washable ?o) not-washable "?o cannot be washed"
  ; @sage reason Clean (holding ?o) not-holding "?o is not in the hand: Pick it first"
  ; @sage reason Clean (water-reachable) no-water "no sink or faucet has been located: MoveTo the Sink first"
  (:action Clean
    :parameters (?o - thing)
    :precondition (and (washable ?o) (holding ?o) (water-reachable))
    :effect (and (cleaned ?o) (not (dirty ?o))))

  ;; Slice O: SliceObject on a located sliceable object (Apple, Bread, Egg, Lettuce, Potato,
  ;; Tomato; an Egg cracks) with a knife in the hand (Knife or ButterKnife, ALFRED's rule). The
  ;; pieces keep the object's name here (AI2-THOR names them AppleSliced_1, ...).
  ; @sage alias Slice Cut SliceObject Chop
  ; @sage reason Slice (sliceable ?o) not-sliceable "?o cannot be sliced (AI2-THOR: not sliceable)"
  ; @sage reason Slice (forall (?c - thing) (not (shut-in ?o ?c))) shut-in "?o is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  ; @sage reason Slice (reachable ?o) not-reachable "?o has not been located: MoveTo or Find ?o first"
  ; @sage reason Slice (not (sliced ?o)) already-sliced "?o is already sliced"
  ; @sage reason Slice (exists (?k - thing) (and (holding ?k) (slicer ?k))) no-knife "slicing needs a Knife or ButterKnife in the hand: Pick one first"
  (:action Slice
    :parameters (?o - thing)
    :precondition (and (sliceable ?o) (reachable ?o) (not (sliced ?o))
                       (forall (?c - thing) (not (shut-in ?o ?c)))
                       (exists (?k - thing) (and (holding ?k) (slicer ?k))))
    :effect (sliced ?o))

  ;; Fill O: fill the held object with water at a located sink or faucet (the action server puts
  ;; it in the basin and runs the faucet; AI2-THOR's FillObjectWithLiquid with water).
  ; @sage alias Fill FillWithWater FillObjectWithLiquid
  ; @sage reason Fill (fillable ?o) not-fillable "?o cannot hold liquid (AI2-THOR: not fillable)"
  ; @sage reason Fill (holding ?o) not-holding "?o is not in the hand: Pick it first"
  ; @sage reason Fill (water-reachable) no-water "no sink or faucet has been located: MoveTo the Sink first"
  (:action Fill
    :parameters (?o - thing)
    :precondition (and (fillable ?o) (holding ?o) (water-reachable))
    :effect (and (filled ?o water) (not (filled ?o coffee)) (not (filled ?o wine))))

  ;; Empty O: pour the liquid out of the held object (EmptyLiquidFromObject).
  ; @sage alias Empty Pour EmptyLiquidFromObject Dump
  ; @sage reason Empty (holding ?o) not-holding "?o is not in the hand: Pick it first"
  ; @sage reason Empty (exists (?l - liquid) (filled ?o ?l)) not-filled "?o holds no liquid"
  (:action Empty
    :parameters (?o - thing)
    :precondition (and (holding ?o) (exists (?l - liquid) (filled ?o ?l)))
    :effect (forall (?l - liquid) (not (filled ?o ?l)))))
