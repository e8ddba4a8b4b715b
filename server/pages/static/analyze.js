// The /analyze page's search tree: drawn as SVG from the report the server put in the page
// (the same JSON as GET /api/analyze). Nodes fold and unfold; pointing at one (or focusing it)
// shows its position and its line of the text trace. No inline script: the page's CSP forbids it.
"use strict";
// A move clicked on the board (or in the move lists) keeps the agent, depth and options picked
// in the form, even when the form was not sent yet: the link's query takes the form's values.
(function () {
  const form = document.querySelector("form.analyze-form");
  if (!form) { return; }
  const kept = ["agent", "options", "depth", "simulations", "limit"];
  document.addEventListener("click", function (event) {
    const link = event.target.closest && event.target.closest("a");
    if (!link || link.closest("form")) { return; }
    // Board cells are SVG links: their href is an attribute, not a string property.
    const attribute = link.hasAttribute("href") ? "href" : "xlink:href";
    const href = link.getAttribute(attribute);
    if (!href || href.indexOf("/analyze?") !== 0) { return; }
    const url = new URL(href, location.href);
    kept.forEach(function (name) {
      const field = form.elements.namedItem(name);
      if (field && field.value !== "") { url.searchParams.set(name, field.value); }
    });
    link.setAttribute(attribute, url.pathname + url.search);
  }, true);
  // The position, the search and the tree shown are the game's and the agent's in the address:
  // picking another game opens that game's start (its moves and agents are not this one's),
  // picking another agent runs its search, so no tree on the page is stale.
  const game = form.elements.namedItem("game");
  game.addEventListener("change", function () {
    location.assign("/analyze?game=" + encodeURIComponent(game.value));
  });
  form.elements.namedItem("agent").addEventListener("change", function () { form.requestSubmit(); });
})();
(function () {
  const island = document.getElementById("analysis-data");
  if (!island) { return; }
  const data = JSON.parse(island.textContent);
  const trace = data.trace;
  const details = data.nodes || {};
  const box = document.getElementById("tree-box");
  const panel = document.getElementById("node-details");
  const NS = "http://www.w3.org/2000/svg";
  const algorithm = trace.algorithm;
  // Room for one node and its labels: as wide as the widest label drawn (measured below).
  let SLOT = 60;
  const LEVEL = 104;
  const TOP = 34;
  const R = 14;
  //: Pruned moves drawn under one node; the rest are summed up in one more.
  const PRUNED_DRAWN = 6;
  const collapsed = new Set();
  if (!trace.tree) {
    box.textContent = "No search tree: " + (trace.notes.join(" ") || "the answer did not come from a search.");
    return;
  }

  // --- numbers as the text trace writes them -------------------------------------------
  function fmt(x) {
    if (x === null || x === undefined) { return "?"; }
    if (Array.isArray(x)) { return "(" + x.map(fmt).join(", ") + ")"; }
    if (typeof x === "string") { return x; }
    if (x === 0) { return "0"; }
    return String(Number(x.toPrecision(4)));
  }
  function fraction(p) {
    for (const d of [36, 18, 12, 6, 4, 3, 2, 1]) {
      const n = p * d;
      if (Math.abs(n - Math.round(n)) < 1e-9) {
        let a = Math.round(n), b = d;
        const g = (function gcd(x, y) { return y ? gcd(y, x % y) : x; })(a, b);
        a /= g; b /= g;
        return b === 1 ? String(a) : a + "/" + b;
      }
    }
    return fmt(p);
  }

  // --- what is drawn under each node: its children, and what the search skipped ----------
  function why(node) {
    const c = node.cutoff, s = node.star1;
    if (s) { return "Star1 cut-off after " + s.after + " (" + fmt(s.v) + " " + s.test + " " + fmt(s.window) + ")"; }
    if (c && c.kind === "shallow") { return "shallow pruning after " + c.after + " (" + fmt(c.has) + " for " + node.player + " leaves at most " + fmt(c.leaves) + " for " + c.parent + ", who has " + fmt(c.parent_has) + ")"; }
    if (c) { return "cut-off after " + c.after + " (v " + fmt(c.v) + " " + c.test + " " + fmt(c.bound) + ")"; }
    return "not searched";
  }
  function items(node) {
    const out = node.children.slice();
    const ns = node.not_shown;
    if (ns.children) {
      out.push({ pseudo: "more", label: "… " + ns.children + " more", title: ns.children + (ns.children === 1 ? " more child, " : " more children, ") + ns.nodes + " nodes, not drawn (Nodes drawn)" });
    }
    if (ns.not_recorded && node.children.length === 0) {
      out.push({ pseudo: "more", label: "… " + ns.not_recorded + " below", title: ns.not_recorded + " nodes below, searched but not recorded" });
    }
    const pruned = node.pruned || [];
    const reason = why(node);
    pruned.slice(0, pruned.length > PRUNED_DRAWN ? PRUNED_DRAWN - 1 : PRUNED_DRAWN).forEach(function (move) {
      out.push({ pseudo: "pruned", label: move, title: "pruned " + move + ": " + reason });
    });
    if (pruned.length > PRUNED_DRAWN) {
      const rest = pruned.length - (PRUNED_DRAWN - 1);
      out.push({ pseudo: "pruned", label: "… " + rest + " more", title: rest + " more moves pruned: " + reason });
    }
    return out;
  }
  function openChildren(node) { return node.pseudo || collapsed.has(node.id) ? [] : items(node); }

  // --- layout: leaves side by side, each parent over the middle of its children -----------
  function layout(root) {
    let slot = 0;
    let depth = 0;
    const placed = [];
    (function place(node, level) {
      const kids = openChildren(node);
      node._kids = kids;
      node._level = level;
      depth = Math.max(depth, level);
      if (kids.length === 0) {
        node._x = slot++;
      } else {
        kids.forEach(function (k) { place(k, level + 1); });
        node._x = (kids[0]._x + kids[kids.length - 1]._x) / 2;
      }
      placed.push(node);
    })(root, 0);
    return { nodes: placed, slots: slot, depth: depth };
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(NS, name);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function text(parent, x, y, content, cls) {
    const t = el("text", { x: x, y: y, "text-anchor": "middle", class: cls || "" }, parent);
    t.textContent = content;
    return t;
  }
  function shape(kind, g) {
    if (kind === "max" || kind === "negamax") { return el("polygon", { points: "0,-15 15,11 -15,11", class: "shape" }, g); }
    if (kind === "min") { return el("polygon", { points: "0,15 15,-11 -15,-11", class: "shape" }, g); }
    if (kind === "chance") { return el("circle", { r: R, class: "shape" }, g); }
    if (kind === "choice" || kind === "decision") { return el("rect", { x: -R, y: -R, width: 2 * R, height: 2 * R, rx: 7, class: "shape" }, g); }
    if (kind === "eval") { return el("polygon", { points: "0,-13 13,0 0,13 -13,0", class: "shape" }, g); }
    return el("rect", { x: -11, y: -11, width: 22, height: 22, class: "shape" }, g);  // terminal
  }
  function valueText(node) {
    if (algorithm === "mcts") {
      return node.visits === undefined ? "" : "N=" + node.visits + (node.mean !== undefined && node.mean !== null ? " · " + fmt(node.mean) : "");
    }
    return fmt(node.value);
  }
  function moveText(node) {
    if (node.move === null) { return ""; }
    return node.probability === undefined ? node.move : node.move + " p=" + fraction(node.probability);
  }
  function windowText(node) {
    if (node.alpha === undefined || node.kind === "terminal" || node.kind === "eval") { return ""; }
    return "[" + fmt(node.alpha) + ", " + fmt(node.beta) + "]";
  }

  // --- drawing -----------------------------------------------------------------------------
  function draw(focusId) {
    const laid = layout(trace.tree);
    let widest = 4;
    laid.nodes.forEach(function (n) {
      const labels = n.pseudo ? [n.label] : [moveText(n), valueText(n), windowText(n)];
      labels.forEach(function (l) { widest = Math.max(widest, l.length); });
    });
    SLOT = Math.min(220, Math.max(48, 7 * widest + 14));
    const width = Math.max(1, laid.slots) * SLOT;
    const height = TOP + laid.depth * LEVEL + 70;
    box.textContent = "";
    const svg = el("svg", { class: "tree tree-" + algorithm, viewBox: "0 0 " + width + " " + height, width: width, height: height, role: "tree", "aria-label": "Search tree of " + algorithm }, box);
    const X = function (n) { return n._x * SLOT + SLOT / 2; };
    const Y = function (n) { return TOP + n._level * LEVEL; };
    const edges = el("g", { class: "edges" }, svg);
    laid.nodes.forEach(function (node) {
      node._kids.forEach(function (kid) {
        const cls = "edge" + (kid.pseudo ? " " + kid.pseudo : "") + (node.best && kid.move === node.best ? " best" : "");
        el("line", { x1: X(node), y1: Y(node) + R, x2: X(kid), y2: Y(kid) - R - 14, class: cls }, edges);
      });
    });
    laid.nodes.forEach(function (node) {
      const g = el("g", { transform: "translate(" + X(node) + "," + Y(node) + ")" }, svg);
      if (node.pseudo) {
        g.setAttribute("class", "node pseudo " + node.pseudo);
        el("title", {}, g).textContent = node.title;
        el("rect", { x: -9, y: -9, width: 18, height: 18, class: "shape" }, g);
        text(g, 0, -R - 4, node.label, "move");
        if (node.pseudo === "pruned") { text(g, 0, R + 14, "pruned", "value"); }
        return;
      }
      const kids = items(node);
      const cls = ["node", "kind-" + node.kind];
      if (node.cutoff || node.star1) { cls.push("cut"); }
      if (node.proven) { cls.push("proven"); }
      if (collapsed.has(node.id)) { cls.push("collapsed"); }
      g.setAttribute("class", cls.join(" "));
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "treeitem");
      g.setAttribute("data-id", node.id);
      g.setAttribute("data-kind", node.kind);
      if (kids.length) { g.setAttribute("aria-expanded", collapsed.has(node.id) ? "false" : "true"); }
      const line = (details[node.id] || {}).line || "";
      g.setAttribute("aria-label", (node.move === null ? "root" : node.move) + ": " + line);
      el("title", {}, g).textContent = (node.move === null ? "root" : node.move) + ": " + line;
      shape(node.kind, g);
      if (node.player && (node.kind === "choice" || node.kind === "decision")) {
        text(g, 0, 4, String(node.player).slice(0, 1), "who");
      }
      if (node.move !== null) { text(g, 0, -R - 4, moveText(node), "move"); }
      text(g, 0, R + 14, valueText(node), "value");
      const win = windowText(node);
      if (win) { text(g, 0, R + 27, win, "window"); }
      if (node.cutoff || node.star1) { text(g, R + 4, -R + 2, "✂", "cut-mark"); }
      if (algorithm === "mcts" && node.visits) {
        // A child's share of its parent's visits, as the bar's width.
        const parentVisits = node._parentVisits || node.visits;
        const w = Math.max(1, 70 * node.visits / parentVisits);
        el("rect", { x: -35, y: R + 20, width: 70, height: 6, class: "bar-bg" }, g);
        el("rect", { x: -35, y: R + 20, width: w, height: 6, class: "bar" }, g);
      }
      if (collapsed.has(node.id) && kids.length) { text(g, 0, R + 40, "+ " + (node.nodes - 1) + " below", "fold"); }
      g.addEventListener("click", function () { toggle(node); });
      g.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); toggle(node); }
      });
      g.addEventListener("mouseenter", function () { show(node); });
      g.addEventListener("focus", function () { show(node); });
    });
    if (focusId !== undefined) {
      const again = svg.querySelector('[data-id="' + focusId + '"]');
      if (again) { again.focus({ preventScroll: true }); }
    }
  }

  function toggle(node) {
    if (items(node).length === 0) { return; }
    if (collapsed.has(node.id)) { collapsed.delete(node.id); } else { collapsed.add(node.id); }
    draw(node.id);
  }

  // --- the node's position and what the search did there -------------------------------
  const pathTo = {};
  (function index(node, path, parentVisits) {
    pathTo[node.id] = path;
    node._parentVisits = parentVisits;
    node.children.forEach(function (k) { index(k, path.concat([k.move]), node.visits); });
  })(trace.tree, [], undefined);

  function show(node) {
    const d = details[node.id];
    panel.textContent = "";
    const h = document.createElement("h3");
    const path = pathTo[node.id];
    h.textContent = path.length ? "After " + path.join(", ") : "The root: the position searched";
    panel.appendChild(h);
    if (d && d.position) {
      const img = document.createElement("img");
      img.className = "node-board";
      img.alt = "The position at this node";
      img.src = "/boards/" + encodeURIComponent(data.game) + ".svg?position=" + encodeURIComponent(JSON.stringify(d.position)) + (node.move ? "&last=" + encodeURIComponent(node.move) : "");
      panel.appendChild(img);
    }
    const p = document.createElement("p");
    p.className = "node-line";
    const code = document.createElement("code");
    code.textContent = (d && d.line) || "";
    p.appendChild(code);
    panel.appendChild(p);
    const dl = document.createElement("dl");
    const facts = [["kind", node.kind + " — " + (trace.kinds[node.kind] || "")], ["nodes in its subtree", String(node.nodes)]];
    if (node.player) { facts.push(["to move", String(node.player)]); }
    if (node.order && node.order.length) { facts.push(["searched first", node.order.map(function (o) { return o.move + " (" + o.why + ")"; }).join(", ")]); }
    if (node.weighted) { facts.push(["weighted sum", node.weighted]); }
    if (node.eval && node.eval.text) { facts.push([node.eval.formula || "eval", node.eval.text]); }
    if (node.ucb !== undefined && node.ucb !== null) { facts.push(["UCB1 at the last selection", fmt(node.ucb)]); }
    if (node.pruned && node.pruned.length) { facts.push(["pruned", node.pruned.join(", ") + ": " + why(node)]); }
    facts.forEach(function (f) {
      const dt = document.createElement("dt"); dt.textContent = f[0];
      const dd = document.createElement("dd"); dd.textContent = f[1];
      dl.appendChild(dt); dl.appendChild(dd);
    });
    panel.appendChild(dl);
  }

  function collapseToRootChildren() {
    collapsed.clear();
    trace.tree.children.forEach(function (k) { if (items(k).length) { collapsed.add(k.id); } });
  }
  // The root in view: a wide tree opens on its middle, not on its leftmost leaves.
  function centreRoot() {
    const root = box.querySelector('[data-id="' + trace.tree.id + '"]');
    if (!root) { return; }
    const bounds = root.getBoundingClientRect(), outer = box.getBoundingClientRect();
    box.scrollLeft = Math.max(0, box.scrollLeft + bounds.left - outer.left - box.clientWidth / 2);
  }
  document.getElementById("expand-all").addEventListener("click", function () { collapsed.clear(); draw(); centreRoot(); });
  document.getElementById("collapse-all").addEventListener("click", function () {
    collapseToRootChildren();
    draw();
    centreRoot();
  });
  draw();
  // A tree many screens wide opens folded to the root's children (all of them in view where
  // they fit); a click unfolds a node, "Expand all" draws everything.
  const svg = box.querySelector("svg");
  if (svg && svg.width.baseVal.value > 3 * box.clientWidth) {
    collapseToRootChildren();
    draw();
  }
  centreRoot();
  show(trace.tree);
})();
