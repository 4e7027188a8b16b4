;; ALFWorld household domain for sage-pddl.
;;
;; One action per ALFWorld (TextWorld) command, taking exactly the words the command names:
;;   go to <recep>            -> (GoTo ?r)
;;   open/close <recep>       -> (Open ?r) (Close ?r)
;;   take <obj> from <recep>  -> (Take ?o ?r)
;;   move <obj> to <recep>    -> (Put ?o ?r)        also "put <obj> in/on <recep>"
;;   use <obj>                -> (Toggle ?o)
;;   heat/cool/clean <obj> with <recep> -> (Heat ?o ?r) (Cool ?o ?r) (Clean ?o ?r)
;;   slice <obj> with <obj>   -> (Slice ?o ?k)
;;   examine <thing>, look, inventory -> (Examine ?x) (Look) (Inventory)
;;
;; The facts are those of ALFWorld's own alfred.pddl (alfworld/alfworld @ ca98194, MIT), with
;; three deliberate changes that keep the semantics of its TextWorld engine:
;;  * there is one agent, so the agent argument is dropped (holds ?a ?o -> holds ?o);
;;  * every ALFWorld location holds exactly one receptacle, so "the agent is at location l where
;;    receptacle r stands" becomes (atReceptacle ?r), and an object's location is the receptacle
;;    it is in;
;;  * atReceptacle, inReceptacle and holds take a `thing` (item or receptacle) so that one
;;    Examine action serves "examine <receptacle>" and "examine <object>";
;;  * the file is well typed: ALFWorld's `object` type is `item` here (PDDL's root type is
;;    `object`), the type constants its actions use (MicrowaveType, FridgeType, SinkBasinType,
;;    KnifeType, ButterKnifeType) are declared as constants, and there are no `()` bodies, no
;;    comma-separated variable lists and no numeric fluents (ALFWorld's action costs do not
;;    affect which commands are admissible).
;; Problems name instances as ALFWorld prints them with `_` for the space: "apple 1" is apple_1.

(define (domain alfworld)
  ; @sage describe A household robot in an ALFWorld (TextWorld) room: it goes to receptacles, opens and closes them, takes and puts objects, and heats, cools, cleans and slices them.
  ; @sage fields object target
  (:requirements :strips :typing :negative-preconditions :disjunctive-preconditions
                 :equality :existential-preconditions :universal-preconditions
                 :conditional-effects)
  (:types
    item receptacle - thing
    otype rtype)

  (:constants
    MicrowaveType FridgeType SinkBasinType - rtype
    KnifeType ButterKnifeType - otype)

  (:predicates
    (atReceptacle ?r - thing)                 ; the agent stands at receptacle ?r
    (inReceptacle ?o - thing ?r - receptacle) ; ?o is in or on ?r
    (openable ?r - receptacle)
    (opened ?r - receptacle)
    (checked ?r - receptacle)                 ; the agent has looked in/on ?r
    (examined ?x - thing)
    (receptacleType ?r - receptacle ?t - rtype)
    (objectType ?o - item ?t - otype)
    (canContain ?rt - rtype ?ot - otype)      ; ALFRED's receptacle/object compatibility
    (holds ?o - thing)
    (holdsAny)
    (pickupable ?o - item)
    (isReceptacleObject ?o - item)            ; bowl, mug, pan, ...: carried like any item
    (cleanable ?o - item)
    (isClean ?o - item)
    (heatable ?o - item)
    (isHot ?o - item)
    (coolable ?o - item)
    (isCool ?o - item)
    (toggleable ?o - item)
    (isOn ?o - item)
    (isToggled ?o - item)
    (sliceable ?o - item)
    (isSliced ?o - item))

  ; ALFWorld answers "go to" the receptacle the agent is at like any other move, so no
  ; precondition.
  ; @sage alias GoTo GotoLocation MoveTo Navigate Walk
  (:action GoTo
    :parameters (?r - receptacle)
    :precondition (and)
    :effect (and
      (forall (?other - receptacle) (not (atReceptacle ?other)))
      (atReceptacle ?r)
      (when (or (not (openable ?r)) (opened ?r)) (checked ?r))))

  ; @sage alias Open OpenObject
  ; @sage reason Open (openable ?r) not-openable "?r cannot be opened"
  ; @sage reason Open (atReceptacle ?r) not-at-receptacle "the agent is not at ?r: go to it first"
  ; @sage reason Open (not (opened ?r)) already-open "?r is already open"
  (:action Open
    :parameters (?r - receptacle)
    :precondition (and (openable ?r) (atReceptacle ?r) (not (opened ?r)))
    :effect (and (opened ?r) (checked ?r)))

  ; @sage alias Close CloseObject
  ; @sage reason Close (openable ?r) not-openable "?r cannot be closed"
  ; @sage reason Close (atReceptacle ?r) not-at-receptacle "the agent is not at ?r: go to it first"
  ; @sage reason Close (opened ?r) already-closed "?r is already closed"
  (:action Close
    :parameters (?r - receptacle)
    :precondition (and (openable ?r) (atReceptacle ?r) (opened ?r))
    :effect (not (opened ?r)))

  ; @sage alias Take PickupObject Pick PickUp Grab Get
  ; @sage reason Take (pickupable ?o) not-pickupable "?o cannot be picked up"
  ; @sage reason Take (atReceptacle ?r) not-at-receptacle "the agent is not at ?r: go to it first"
  ; @sage reason Take (inReceptacle ?o ?r) not-in-receptacle "?o is not in/on ?r"
  ; @sage reason Take (not (holdsAny)) hand-full "the agent already carries an object: put it somewhere first"
  ; @sage reason Take (or (not (openable ?r)) (opened ?r)) receptacle-closed "?r is closed: open it first"
  (:action Take
    :parameters (?o - item ?r - receptacle)
    :precondition (and
      (pickupable ?o)
      (atReceptacle ?r)
      (inReceptacle ?o ?r)
      (not (holdsAny))
      (or (not (openable ?r)) (opened ?r)))
    :effect (and (not (inReceptacle ?o ?r)) (holds ?o) (holdsAny)))

  ; @sage alias Put PutObject Move Place PutIn PutOn
  ; @sage reason Put (holds ?o) not-holding "the agent does not carry ?o"
  ; @sage reason Put (atReceptacle ?r) not-at-receptacle "the agent is not at ?r: go to it first"
  ; @sage reason Put (or (not (openable ?r)) (opened ?r)) receptacle-closed "?r is closed: open it first"
  (:action Put
    :parameters (?o - item ?r - receptacle)
    :precondition (and
      (holds ?o)
      (atReceptacle ?r)
      (or (not (openable ?r)) (opened ?r))
      (exists (?ot - otype ?rt - rtype)
        (and (objectType ?o ?ot) (receptacleType ?r ?rt) (canContain ?rt ?ot))))
    :effect (and (inReceptacle ?o ?r) (not (holds ?o)) (not (holdsAny))))

  ; @sage alias Toggle ToggleObject Use TurnOn TurnOff SwitchOn SwitchOff
  ; @sage reason Toggle (toggleable ?o) not-toggleable "?o has no switch"
  (:action Toggle
    :parameters (?o - item)
    :precondition (and
      (toggleable ?o)
      (exists (?r - receptacle) (and (atReceptacle ?r) (inReceptacle ?o ?r))))
    :effect (and
      (when (isOn ?o) (not (isOn ?o)))
      (when (not (isOn ?o)) (isOn ?o))
      (isToggled ?o)))

  ; @sage alias Heat HeatObject
  ; @sage reason Heat (heatable ?o) not-heatable "?o cannot be heated"
  ; @sage reason Heat (receptacleType ?r MicrowaveType) not-a-microwave "?r is not a microwave"
  ; @sage reason Heat (atReceptacle ?r) not-at-receptacle "the agent is not at ?r: go to it first"
  ; @sage reason Heat (holds ?o) not-holding "the agent does not carry ?o"
  (:action Heat
    :parameters (?o - item ?r - receptacle)
    :precondition (and (heatable ?o) (receptacleType ?r MicrowaveType) (atReceptacle ?r) (holds ?o))
    :effect (and (isHot ?o) (not (isCool ?o))))

  ; @sage alias Cool CoolObject Chill
  ; @sage reason Cool (coolable ?o) not-coolable "?o cannot be cooled"
  ; @sage reason Cool (receptacleType ?r FridgeType) not-a-fridge "?r is not a fridge"
  ; @sage reason Cool (atReceptacle ?r) not-at-receptacle "the agent is not at ?r: go to it first"
  ; @sage reason Cool (holds ?o) not-holding "the agent does not carry ?o"
  (:action Cool
    :parameters (?o - item ?r - receptacle)
    :precondition (and (coolable ?o) (receptacleType ?r FridgeType) (atReceptacle ?r) (holds ?o))
    :effect (and (isCool ?o) (not (isHot ?o))))

  ; @sage alias Clean CleanObject Wash Rinse
  ; @sage reason Clean (cleanable ?o) not-cleanable "?o cannot be cleaned"
  ; @sage reason Clean (receptacleType ?r SinkBasinType) not-a-sink "?r is not a sink basin"
  ; @sage reason Clean (atReceptacle ?r) not-at-receptacle "the agent is not at ?r: go to it first"
  ; @sage reason Clean (holds ?o) not-holding "the agent does not carry ?o"
  (:action Clean
    :parameters (?o - item ?r - receptacle)
    :precondition (and (cleanable ?o) (receptacleType ?r SinkBasinType) (atReceptacle ?r) (holds ?o))
    :effect (isClean ?o))

  ; @sage alias Slice SliceObject Cut
  ; @sage reason Slice (sliceable ?o) not-sliceable "?o cannot be sliced"
  ; @sage reason Slice (holds ?k) not-holding-knife "the agent does not carry ?k"
  (:action Slice
    :parameters (?o - item ?k - item)
    :precondition (and
      (sliceable ?o)
      (or (objectType ?k KnifeType) (objectType ?k ButterKnifeType))
      (holds ?k)
      (exists (?r - receptacle) (and (atReceptacle ?r) (inReceptacle ?o ?r))))
    :effect (isSliced ?o))

  ; "examine <receptacle>" needs the agent there; "examine <object>" needs it carried or in
  ; view (in/on the receptacle the agent is at, which is open if it can be opened). The three
  ; predicates used here take a `thing` so one action covers both readings with plain literals.
  ; @sage alias Examine ExamineObject ExamineReceptacle Inspect
  (:action Examine
    :parameters (?x - thing)
    :precondition (or
      (atReceptacle ?x)
      (holds ?x)
      (exists (?r - receptacle)
        (and (atReceptacle ?r) (inReceptacle ?x ?r) (or (not (openable ?r)) (opened ?r)))))
    :effect (examined ?x))

  (:action Look
    :parameters ()
    :precondition (and)
    :effect (forall (?r - receptacle) (when (atReceptacle ?r) (checked ?r))))

  (:action Inventory
    :parameters ()
    :precondition (and)
    :effect (and))
)
