;; AI2-THOR (iTHOR) household domain for sage-pddl: the SAGE action vocabulary, one PDDL action
;; per plan step, with the semantics of the AI2-THOR skill server the paper executes on
;; (../REFERENCE.md §8.3) and of AI2-THOR itself (object types and their actionable properties:
;; https://ai2thor.allenai.org/ithor/documentation/objects/object-types).
;;
;; Objects are instances of AI2-THOR object types: `Fridge` where the scene has one, `Cabinet_1`
;; ... `Cabinet_9` where it has several. Plans name types (`Open Cabinet`); a step naming a type
;; acts on the first instance it applies to, as the action server resolves it.
;; Every action takes exactly the words a planner writes (`Pick Apple`, `Place CounterTop`,
;; `Wait`); the held object is implicit and handled inside the action with universal and
;; conditional effects, so a plan step maps 1:1 to a ground action.
;;
;; State
;;   (reachable ?x)   the robot has located ?x (MoveTo or Find): the executor can walk to it and
;;                    interact. Monotone, like the server, which keeps what it found/arrived at
;;                    and navigates to the object itself before every interaction. MoveTo/Find of
;;                    ?x also reaches what is in/on ?x, the fixtures `near` ?x (the Faucet of a
;;                    Sink, the knobs of a StoveBurner) and the other instances of its type
;;                    (`same-kind`): the server keeps the type it arrived at or found, and
;;                    walks to the instance a step acts on by itself.
;;   (beside ?o ?x)   ?o stood within reach of where ?x stands: MoveTo/Find ?x reaches ?o,
;;                    and nothing else (no water or heat: `near` is for fixtures that stand
;;                    together). Only a simulator-verified reference plan gives it (an object it
;;                    used after reaching another); picking either up ends it, since the
;;                    object has left the place the evidence is about.
;;   (holding ?o) / (hand-empty)          the one object in the robot's hand.
;;   (inside ?o ?c) / (on ?o ?r)          AI2-THOR's parentReceptacles, split by the kind of
;;                    receptacle: containers (openable ones, sinks, bins, bowls, pots...) hold
;;                    things inside, surfaces hold them on top.
;;   (shut-in ?o ?c)  ?o is inside the closed container ?c, directly or inside an open container
;;                    that is inside ?c (two levels: the apple in the bowl in the cabinet). In
;;                    AI2-THOR an object in a closed receptacle is neither visible nor
;;                    interactable, whatever the action, so ?o can be the object or the target of
;;                    no action but MoveTo until ?c is opened (the violation `shut-in` names ?c).
;;                    Close ?c states it for what is inside, Open ?c ends it; an inner closed
;;                    container keeps its own. MoveTo is exempt: the action server teleports
;;                    next to any object that exists.
;;   (opened ?x) / (closed ?x)            open state of openable objects (neither holds for an
;;                    object that cannot open, so "already open" and "already closed" are single
;;                    literals with their own reason codes).
;;   (turned-on ?x)   toggle state (AI2-THOR isToggled). A StoveKnob and the StoveBurner it
;;                    `controls` switch together: AI2-THOR toggles a burner only through its
;;                    knob (CanToggleOnOff), and the action server turns the knob for
;;                    "TurnOn StoveBurner". `controls` is stated only where the scene says which
;;                    burner a knob switches (the knob's controlledObjects); a knob whose burner
;;                    is unknown switches only itself here, so a goal on a particular burner is
;;                    reached by switching that burner (docs/goals.md, "Knobs and burners").
;;   (heated ?o) / (cooled ?o)   AI2-THOR's temperature Hot / Cold (ObjectTemperature): what is
;;                    in or on a heat source that is on (Microwave, Toaster, StoveBurner)
;;                    turns Hot, what goes into the Fridge turns Cold (HeatZone, ColdZone).
;;                    Heat reaches one level: what is in a pan on a burner is not modelled,
;;                    so a goal that cooks in a pan states the pan, the burner and its state.
;;   (cooked ?o)      isCooked: a cookable object (Potato; Bread and Egg once sliced/cracked)
;;                    heated as above, or by the Heat action.
;;   (sliced ?o)      isSliced: SliceObject, with a knife in the hand (ALFRED's rule).
;;   (filled ?o ?l)   isFilledWithLiquid with fillLiquid ?l (water, coffee, wine): Fill at a
;;                    sink; a fillable object in a basin under a running faucet (Fill.cs); a
;;                    Mug on a CoffeeMachine that is on gets coffee (and turns Hot).
;;   (dirty ?o)       isDirty (Dirtyable types; scenes start clean): Wash/Clean, or running
;;                    water over it, clean it (Dirty.cs). A Bed that is dirty is unmade.
;;   (cleaned ?o)     ?o was washed (Wash/Clean, or held under running water): the outcome of
;;                    "wash X" whether or not X was dirty.
;;   (sat-on ?x) (lying-on ?x)   task outcomes (AI2-THOR has no sitting; the server walks there).
;;   (water-reachable) (heater-reachable) (cooler-reachable)   a sink/faucet, a heating
;;                    appliance, a fridge has been located (needed by Wash/Clean, Heat, Cool).
;; Static affordances come from the task's object catalogue (sage_pddl/tasks/catalogue.py), which
;; is written from AI2-THOR's object-type documentation: pickupable, openable, toggleable,
;; receptacle, sliceable, cookable, fillable (CanFillWithLiquid), dirtyable are its actionable
;; properties; the other static predicates are kinds the actions need (container, heater, ...).
;; A type may have several instances (Cabinet_1, Cabinet_2): a step naming the type acts on the
;; first instance for which it is applicable (sage_pddl/tasks/problem.py).
;;
;; Preconditions are written affordance first, then hand, reachability, state: the first literal
;; that fails is the one reported, so "Pick Fridge" says not-pickupable, not not-reachable.

(define (domain ithor)
  ; @sage describe A household robot in an AI2-THOR (iTHOR) room: it moves to objects, picks them up and puts them down, opens and closes containers, switches appliances on and off, and washes, fills, slices, heats and cools objects.
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
                 :disjunctive-preconditions)
  (:types thing liquid)
  (:constants water coffee wine - liquid)

  (:predicates
    ;; static affordances (AI2-THOR actionable properties and kinds)
    (pickupable ?x - thing)
    (openable ?x - thing)
    (toggleable ?x - thing)
    (receptacle ?x - thing)
    (container ?x - thing)
    (sittable ?x - thing)
    (lieable ?x - thing)
    (washable ?x - thing)
    (water-source ?x - thing)
    (heater ?x - thing)
    (cooler ?x - thing)
    (near ?o - thing ?x - thing)
    (beside ?o - thing ?x - thing)
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
    (same-kind ?a - thing ?b - thing)
    ;; fluents
    (reachable ?x - thing)
    (holding ?o - thing)
    (hand-empty)
    (inside ?o - thing ?c - thing)
    (on ?o - thing ?r - thing)
    (shut-in ?o - thing ?c - thing)
    (opened ?x - thing)
    (closed ?x - thing)
    (turned-on ?x - thing)
    (sat-on ?x - thing)
    (lying-on ?x - thing)
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
    (waited))

  ;; MoveTo X: walk to the nearest X. The server teleports next to any object that exists (it
  ;; even reports success when no pose is found), including one inside a closed container, so
  ;; there is no precondition. In iTHOR a room name ("Kitchen") is not an object: unknown-object.
  ;; Effect: X, what is in/on X and the fixtures near X become reachable.
  ; @sage alias MoveTo Navigate GoTo GoToLocation Walk WalkTo
  (:action MoveTo
    :parameters (?x - thing)
    :precondition (and)
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

  ;; Find X: turn towards the nearest X and designate it (the server's `found`). An object
  ;; inside a closed container is not visible, so it cannot be found. Effect as MoveTo.
  ; @sage alias Find Search Locate LookFor
  ; @sage reason Find (forall (?c - thing) (not (shut-in ?x ?c))) shut-in "?x is inside the closed ?c: Open ?c first (AI2-THOR: what is in a closed receptacle is not interactable)"
  (:action Find
    :parameters (?x - thing)
    :precondition (and (forall (?c - thing) (not (shut-in ?x ?c))))
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
      (forall (?y - thing) (not (beside ?o ?y)))))

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
  (:action Place
    :parameters (?r - thing)
    :precondition (and (receptacle ?r) (not (hand-empty)) (not (closed ?r)) (forall (?c - thing) (not (shut-in ?r ?c)))
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
  (:action PutIn
    :parameters (?r - thing)
    :precondition (and (receptacle ?r) (not (hand-empty)) (not (closed ?r)) (forall (?c - thing) (not (shut-in ?r ?c)))
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
  (:action Sit
    :parameters (?x - thing)
    :precondition (and (sittable ?x))
    :effect (and (reachable ?x) (sat-on ?x)))

  ; @sage alias LieOn LieDown Lie
  ; @sage reason LieOn (lieable ?x) not-lieable "?x is not something to lie on"
  (:action LieOn
    :parameters (?x - thing)
    :precondition (and (lieable ?x))
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
  (:action Serve
    :parameters (?r - thing)
    :precondition (and (receptacle ?r) (not (hand-empty)) (not (closed ?r)) (forall (?c - thing) (not (shut-in ?r ?c)))
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
