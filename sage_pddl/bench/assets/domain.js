/* sage-pddl domain page: hovering a node of the causal graph lights its edges and neighbours. */
(function () {
  "use strict";
  Array.prototype.forEach.call(document.querySelectorAll("svg.causal"), function (svg) {
    function clear() {
      svg.classList.remove("focus");
      Array.prototype.forEach.call(svg.querySelectorAll(".lit"), function (n) { n.classList.remove("lit"); });
    }
    svg.addEventListener("mouseover", function (event) {
      var node = event.target.closest(".node");
      if (!node) return;
      clear();
      svg.classList.add("focus");
      node.classList.add("lit");
      var action = node.getAttribute("data-a"), literal = node.getAttribute("data-l");
      Array.prototype.forEach.call(svg.querySelectorAll(".edge"), function (edge) {
        var a = edge.getAttribute("data-a"), l = edge.getAttribute("data-l");
        if ((action && a === action) || (literal && l === literal)) {
          edge.classList.add("lit");
          Array.prototype.forEach.call(svg.querySelectorAll(".node"), function (other) {
            if (other.getAttribute("data-a") === a || other.getAttribute("data-l") === l) other.classList.add("lit");
          });
        }
      });
    });
    svg.addEventListener("mouseleave", clear);
  });
})();
