// The depthdyn stability explorer: one front end for the Jupyter widget and the standalone page.
//
// This file defines `mount(model, el, compiled)` against anywidget's model API (model.get,
// model.set, model.on("change:..."), model.save_changes). depthdyn appends, per recurrence,
// the `COMPILED` object printed by SymPy's JavaScript printer (coefficients, conditions,
// layers) and a few lines that start it: `export default { render }` for anywidget, a small
// in-page model for the standalone page. Nothing here evaluates text: numbers typed in a box
// are read by a regular expression, and every formula is compiled code, never a string run.

const DD_NUMBER = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(?:\/\s*((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*)?$/;

// A typed value: a decimal or a fraction a/b; NaN for anything else.
function ddReadNumber(text) {
  const m = DD_NUMBER.exec(String(text));
  if (!m) return NaN;
  const num = Number(m[1]);
  return m[2] === undefined ? num : num / Number(m[2]);
}

// ------------------------------------------------------------------ complex arithmetic
const cadd = (a, b) => [a[0] + b[0], a[1] + b[1]];
const csub = (a, b) => [a[0] - b[0], a[1] - b[1]];
const cmul = (a, b) => [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]];
function cdiv(a, b) {
  // Smith's algorithm: no overflow for large |b|
  if (Math.abs(b[0]) >= Math.abs(b[1])) {
    const r = b[1] / b[0], d = b[0] + b[1] * r;
    return [(a[0] + a[1] * r) / d, (a[1] - a[0] * r) / d];
  }
  const r = b[0] / b[1], d = b[0] * r + b[1];
  return [(a[0] * r + a[1]) / d, (a[1] * r - a[0]) / d];
}
const cabs = (a) => Math.hypot(a[0], a[1]);

// p(z) and p'(z) by Horner's rule; coefficients highest power first
function horner(a, z) {
  let p = a[0], dp = [0, 0];
  for (let i = 1; i < a.length; i++) {
    dp = cadd(cmul(dp, z), p);
    p = cadd(cmul(p, z), a[i]);
  }
  return [p, dp];
}

// A multiple root comes out of any iteration as a cluster accurate to about eps^(1/m); the mean of
// the cluster is accurate to about eps (the errors cancel), so clusters are replaced by their mean.
function ddMergeClusters(z) {
  const out = z.map((r) => r.slice()), used = new Array(z.length).fill(false);
  for (let i = 0; i < z.length; i++) {
    if (used[i]) continue;
    const members = [i];
    for (let j = i + 1; j < z.length; j++) {
      if (!used[j] && cabs(csub(z[i], z[j])) <= 1e-7 * Math.max(1, cabs(z[i]))) members.push(j);
    }
    if (members.length < 2) continue;
    let mean = [0, 0];
    for (const k of members) { used[k] = true; mean = cadd(mean, z[k]); }
    mean = [mean[0] / members.length, mean[1] / members.length];
    for (const k of members) out[k] = mean.slice();
  }
  return out;
}

// Roots of a polynomial with complex coefficients ([re, im] pairs, highest first): the
// Aberth–Ehrlich iteration (all roots at once, cubic convergence for simple roots), Newton
// steps on the same polynomial kept only while they reduce |p|, then multiple roots' clusters
// merged.
function ddRoots(coeffs) {
  let a = coeffs.map((c) => [c[0], c[1]]);
  while (a.length > 1 && a[0][0] === 0 && a[0][1] === 0) a.shift();
  const lead = a[0];
  a = a.map((c) => cdiv(c, lead));
  let zeros = 0;
  while (a.length > 1 && a[a.length - 1][0] === 0 && a[a.length - 1][1] === 0) { a.pop(); zeros++; }
  const n = a.length - 1;
  const out = [];
  if (n === 1) out.push([-a[1][0], -a[1][1]]);
  else if (n > 1) {
    // start on a circle of the geometric-mean radius, off the real axis
    const radius = Math.max(Math.pow(cabs(a[n]), 1 / n), 1e-3);
    const z = [];
    for (let k = 0; k < n; k++) {
      const t = (2 * Math.PI * k) / n + 0.4;
      z.push([radius * Math.cos(t), radius * Math.sin(t)]);
    }
    for (let it = 0; it < 800; it++) {
      let moved = 0;
      for (let k = 0; k < n; k++) {
        const [p, dp] = horner(a, z[k]);
        if (p[0] === 0 && p[1] === 0) continue;
        const ratio = cdiv(p, dp);
        let s = [0, 0];
        for (let j = 0; j < n; j++) if (j !== k) s = cadd(s, cdiv([1, 0], csub(z[k], z[j])));
        const w = cdiv(ratio, csub([1, 0], cmul(ratio, s)));
        if (!Number.isFinite(w[0]) || !Number.isFinite(w[1])) continue;
        z[k] = csub(z[k], w);
        moved = Math.max(moved, cabs(w) / Math.max(cabs(z[k]), 1e-300));
      }
      if (moved < 1e-16) break;
    }
    for (const zk of z) {
      let best = zk, bestP = cabs(horner(a, zk)[0]);
      for (let s = 0; s < 4; s++) {
        const [p, dp] = horner(a, best);
        if (dp[0] === 0 && dp[1] === 0) break;
        const next = csub(best, cdiv(p, dp));
        const nextP = cabs(horner(a, next)[0]);
        if (!(nextP < bestP)) break;
        best = next; bestP = nextP;
      }
      out.push(best);
    }
  }
  for (let i = 0; i < zeros; i++) out.push([0, 0]);
  return ddMergeClusters(out);
}

// x_0 .. x_depth from the window of ones, one state matrix per layer of the period
function ddTrajectory(layers, dim, depth) {
  let w = new Array(layers[0].length).fill(1);
  const out = [w.slice(0, dim)];
  for (let l = 0; l < depth; l++) {
    const C = layers[l % layers.length];
    const next = new Array(w.length).fill(0);
    for (let i = 0; i < C.length; i++) {
      let s = 0;
      for (let j = 0; j < w.length; j++) s += C[i][j] * w[j];
      next[i] = s;
    }
    w = next;
    out.push(w.slice(0, dim).map((v) => (Number.isFinite(v) ? v : null)));
  }
  return out;
}

// ------------------------------------------------------------------ drawing helpers
function ddEl(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.appendChild(c);
  return node;
}

function ddCanvas(width, height) {
  const c = ddEl("canvas", { class: "dd-canvas", role: "img" });
  const ratio = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
  c.width = Math.round(width * ratio);
  c.height = Math.round(height * ratio);
  c.style.width = `${width}px`;
  c.style.height = `${height}px`;
  c.getContext("2d").setTransform(ratio, 0, 0, ratio, 0, 0);
  return c;
}

function ddTick(v) {
  if (v === 0) return "0";
  const a = Math.abs(v);
  const text = a >= 1e4 || a < 1e-3 ? v.toExponential(1) : String(Number(v.toPrecision(3)));
  return text.replace("-", "\u2212");
}

// axes frame in the house style: left and bottom spines, ticks at the ends and at zero
function ddFrame(ctx, box, xr, yr, xlabel, ylabel, style) {
  const { x0, y0, w, h } = box;
  ctx.strokeStyle = "#000"; ctx.lineWidth = 0.8;
  ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x0, y0 + h); ctx.lineTo(x0 + w, y0 + h); ctx.stroke();
  ctx.fillStyle = "#000";
  ctx.font = `11px ${style.font}`;
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  const xs = [xr[0], xr[1]]; if (xr[0] < 0 && xr[1] > 0) xs.push(0);
  for (const v of xs) {
    const px = x0 + ((v - xr[0]) / (xr[1] - xr[0])) * w;
    ctx.beginPath(); ctx.moveTo(px, y0 + h); ctx.lineTo(px, y0 + h + 3); ctx.stroke();
    ctx.fillText(ddTick(v), px, y0 + h + 4);
  }
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  const ys = [yr[0], yr[1]]; if (yr[0] < 0 && yr[1] > 0) ys.push(0);
  for (const v of ys) {
    const py = y0 + h - ((v - yr[0]) / (yr[1] - yr[0])) * h;
    ctx.beginPath(); ctx.moveTo(x0 - 3, py); ctx.lineTo(x0, py); ctx.stroke();
    ctx.fillText(ddTick(v), x0 - 5, py);
  }
  ctx.font = `italic 13px ${style.font}`;
  ctx.textAlign = "center"; ctx.textBaseline = "top";
  ctx.fillText(xlabel, x0 + w / 2, y0 + h + 17);
  ctx.save(); ctx.translate(12, y0 + h / 2); ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = "middle"; ctx.fillText(ylabel, 0, 0); ctx.restore();
}

// The explorer is a light card whatever the host's theme: its text and canvases are drawn for a
// white ground, which JupyterLab's dark theme would otherwise put behind them.
const DD_CSS = `
.dd-explorer { font-family: var(--dd-font); color: #111; background: #fff; color-scheme: light;
  max-width: 980px; padding: 0.3em 0; }
.dd-explorer h2 { font-size: 1.15em; margin: 0.2em 0; font-weight: normal; }
.dd-explorer .dd-sub { color: #444; font-size: 0.9em; margin-bottom: 0.4em; }
.dd-explorer .dd-verdict { display: inline-block; padding: 0.1em 0.6em; border-radius: 3px; color: #fff; }
.dd-explorer .dd-verdict[data-stable="true"] { background: var(--dd-blue); }
.dd-explorer .dd-verdict[data-stable="false"] { background: var(--dd-vermilion); }
.dd-explorer .dd-controls { display: grid; grid-template-columns: auto 1fr 7em auto; gap: 0.3em 0.6em;
  align-items: center; margin: 0.6em 0; }
.dd-explorer .dd-controls input[type=range] { width: 100%; }
.dd-explorer .dd-box { width: 6.5em; font-family: inherit; }
.dd-explorer .dd-box.dd-invalid { outline: 2px solid var(--dd-vermilion); }
.dd-explorer .dd-domain { color: #555; font-size: 0.85em; }
.dd-explorer .dd-views { display: flex; flex-wrap: wrap; gap: 0.8em; }
.dd-explorer figure { margin: 0; }
.dd-explorer figcaption { font-size: 0.85em; color: #333; text-align: center; }
.dd-explorer .dd-conditions { list-style: none; padding: 0; margin: 0; min-width: 300px; }
.dd-explorer .dd-conditions li { padding: 0.2em 0.4em; margin: 0.15em 0; border-left: 3px solid var(--dd-green); }
.dd-explorer .dd-conditions li.dd-fails { border-left-color: var(--dd-vermilion); background: #fbe3d6; }
.dd-explorer .dd-conditions li .dd-mark { float: right; font-size: 0.85em; }
.dd-explorer .dd-axes select { font-family: inherit; }
`;

// ------------------------------------------------------------------ the explorer
// A widget shown twice has two views in one document: each view's ids carry its own number, so
// that every label names its own view's slider.
let ddViews = 0;

function mount(model, el, compiled) {
  const view = ++ddViews;
  const spec = model.get("spec");
  const style = spec.style;
  const params = spec.params;
  const names = params.map((p) => p.name);
  const root = ddEl("div", { class: "dd-explorer" });
  root.style.setProperty("--dd-font", style.font);
  root.style.setProperty("--dd-blue", style.blue);
  root.style.setProperty("--dd-vermilion", style.vermilion);
  root.style.setProperty("--dd-green", style.green);
  root.appendChild(ddEl("style", { text: DD_CSS }));

  const verdict = ddEl("span", { class: "dd-verdict", "aria-live": "polite" });
  const title = ddEl("h2", { text: `${spec.name} ` }, [verdict]);
  root.appendChild(title);
  const sub = ddEl("div", { class: "dd-sub", title: spec.charpoly });
  sub.innerHTML = spec.charpoly_mathml; // MathML printed by SymPy from the characteristic polynomial
  sub.prepend(document.createTextNode("characteristic polynomial "));
  if (spec.period > 1) sub.append(document.createTextNode(` (Floquet multipliers: one step is one period of ${spec.period} layers)`));
  root.appendChild(sub);

  // sliders, one per free parameter, with a box for exact values
  const controls = ddEl("div", { class: "dd-controls" });
  const sliders = {}, boxes = {};
  for (const p of params) {
    const label = ddEl("label", { for: `dd-${view}-${p.name}`, title: p.description || p.name });
    label.innerHTML = p.mathml; // MathML printed by SymPy from the parameter's symbol
    const range = ddEl("input", { type: "range", id: `dd-${view}-${p.name}`, min: p.lo, max: p.hi, step: p.step,
      "data-param": p.name, "aria-label": p.label });
    const box = ddEl("input", { type: "text", class: "dd-box", inputmode: "decimal", "data-param": p.name,
      "aria-label": `${p.label}, exact value` });
    const domain = ddEl("span", { class: "dd-domain", text: `\u2208 ${p.domain}` });
    range.addEventListener("input", () => setValue(p.name, Number(range.value), range.value));
    box.addEventListener("change", () => {
      const v = ddReadNumber(box.value);
      const bad = !Number.isFinite(v) || (p.min !== null && (v < p.min || (p.min_open && v === p.min))) ||
        (p.max !== null && (v > p.max || (p.max_open && v === p.max)));
      box.classList.toggle("dd-invalid", bad);
      box.title = bad ? `${p.name} must be a number in ${p.domain}` : "";
      if (!bad) setValue(p.name, v, box.value.trim());
    });
    sliders[p.name] = range; boxes[p.name] = box;
    controls.append(label, range, box, domain);
  }
  if (!params.length) controls.appendChild(ddEl("span", { text: "no free parameter: nothing to slide" }));
  root.appendChild(controls);

  // axes of the region, and the depth of the trajectory
  const axes = ddEl("div", { class: "dd-axes" });
  const pick = (key) => {
    const s = ddEl("select", { "aria-label": `${key} axis of the region` });
    for (const p of params) s.appendChild(ddEl("option", { value: p.name, text: p.label }));
    s.value = model.get(key) || "";
    s.addEventListener("change", () => { model.set(key, s.value); model.save_changes(); });
    return s;
  };
  const depthBox = ddEl("input", { type: "number", min: 1, max: 2000, step: 1, value: model.get("depth"),
    "aria-label": "depth", style: "width: 5em" });
  depthBox.addEventListener("change", () => {
    const d = Math.round(Number(depthBox.value));
    if (d >= 1 && d <= 2000) { model.set("depth", d); model.save_changes(); }
  });
  if (params.length >= 2) axes.append(document.createTextNode("region over "), pick("x"),
    document.createTextNode(" and "), pick("y"), document.createTextNode(";  "));
  axes.append(document.createTextNode("depth L = "), depthBox);
  root.appendChild(axes);
  // In JupyterLab the notebook's command-mode shortcuts (the arrow keys move between cells) would
  // take the keys of a focused slider or menu; Lumino matches no shortcut from an element marked so.
  for (const input of root.querySelectorAll("input, select")) input.setAttribute("data-lm-suppress-shortcuts", "true");

  const views = ddEl("div", { class: "dd-views" });
  const region = ddCanvas(330, 280), rootsC = ddCanvas(280, 280), traj = ddCanvas(330, 280);
  region.setAttribute("aria-label", "stability region");
  rootsC.setAttribute("aria-label", "characteristic roots and the unit circle");
  traj.setAttribute("aria-label", "trajectory over depth");
  const condList = ddEl("ul", { class: "dd-conditions" });
  const fig = (node, text) => ddEl("figure", {}, [node, ddEl("figcaption", { text })]);
  views.append(
    fig(region, "strictly stable set (shaded), the current point marked"),
    fig(rootsC, spec.period > 1 ? "Floquet multipliers and the unit circle" : "roots r and the unit circle"),
    fig(traj, "trajectory x\u2097 over depth from x\u2080 = x\u208b\u2081 = \u2026 = 1"),
    fig(condList, spec.exact ? "exact stability conditions: all must hold" : spec.note));
  root.appendChild(views);
  el.appendChild(root);

  let state = null;
  function vector(values) { return names.map((n) => values[n]); }

  function setValue(name, value, text) {
    if (text !== undefined) boxes[name].value = text;
    const values = { ...model.get("values") };
    values[name] = value;
    model.set("values", values); // "change:values" redraws
    model.save_changes();
  }

  function stableAt(p) {
    if (spec.exact) return compiled.conditions(p).every(Boolean);
    const z = ddRoots(compiled.coefficients(p));
    return z.every((r) => cabs(r) < 1);
  }

  function compute() {
    const values = model.get("values");
    const p = vector(values);
    const roots = ddRoots(compiled.coefficients(p));
    const conds = compiled.conditions(p).map(Boolean);
    const radius = roots.reduce((m, r) => Math.max(m, cabs(r)), 0);
    const stable = spec.exact ? conds.every(Boolean) : radius < 1;
    const trajectory = ddTrajectory(compiled.layers(p), spec.dim, model.get("depth"));
    return { values: { ...values }, point: p, roots, conditions: conds, radius, stable, trajectory };
  }

  function drawRegion(ctx, st) {
    const W = 330, H = 280, box = { x0: 52, y0: 10, w: W - 62, h: H - 52 };
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    const xName = model.get("x"), yName = model.get("y");
    if (!xName) {
      ctx.fillStyle = "#000"; ctx.font = `13px ${style.font}`; ctx.textAlign = "center";
      ctx.fillText(st.stable ? "strictly stable" : "not strictly stable", W / 2, H / 2 - 10);
      ctx.fillText("(no parameter to vary)", W / 2, H / 2 + 10);
      ctx.fillStyle = st.stable ? style.stable : "#eee"; ctx.fillRect(W / 2 - 40, H / 2 + 30, 80, 20);
      return;
    }
    const ix = names.indexOf(xName), iy = yName ? names.indexOf(yName) : -1;
    const px = params[ix], py = iy >= 0 ? params[iy] : null;
    const xr = [px.lo, px.hi], yr = py ? [py.lo, py.hi] : [0, 1];
    const NX = spec.exact ? 110 : 50, NY = py ? (spec.exact ? 90 : 40) : 1;
    const q = st.point.slice();
    ctx.fillStyle = style.stable;
    const cw = box.w / NX, ch = box.h / NY;
    for (let i = 0; i < NX; i++) {
      q[ix] = xr[0] + ((i + 0.5) / NX) * (xr[1] - xr[0]);
      for (let j = 0; j < NY; j++) {
        if (py) q[iy] = yr[0] + ((j + 0.5) / NY) * (yr[1] - yr[0]);
        if (stableAt(q)) ctx.fillRect(box.x0 + i * cw, box.y0 + box.h - (j + 1) * ch, cw + 0.6, ch + 0.6);
      }
    }
    ddFrame(ctx, box, xr, yr, px.label, py ? py.label : "", style);
    const mx = box.x0 + ((st.values[xName] - xr[0]) / (xr[1] - xr[0])) * box.w;
    const my = py ? box.y0 + box.h - ((st.values[yName] - yr[0]) / (yr[1] - yr[0])) * box.h : box.y0 + box.h / 2;
    ctx.fillStyle = style.vermilion; ctx.strokeStyle = "#000"; ctx.lineWidth = 0.8;
    ctx.beginPath(); ctx.arc(mx, my, 4.5, 0, 2 * Math.PI); ctx.fill(); ctx.stroke();
  }

  function drawRoots(ctx, st) {
    const W = 280, H = 280, box = { x0: 45, y0: 10, w: W - 55, h: H - 52 };
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    const R = Math.max(1.25, 1.1 * Math.min(st.radius, 1e6));
    const sx = (x) => box.x0 + ((x + R) / (2 * R)) * box.w, sy = (y) => box.y0 + box.h - ((y + R) / (2 * R)) * box.h;
    ctx.strokeStyle = style.reference; ctx.setLineDash([4, 3]); ctx.lineWidth = 1;
    ctx.beginPath(); ctx.ellipse(sx(0), sy(0), box.w / (2 * R), box.h / (2 * R), 0, 0, 2 * Math.PI); ctx.stroke();
    ctx.setLineDash([]);
    ddFrame(ctx, box, [-R, R], [-R, R], "Re r", "Im r", style);
    for (const r of st.roots) {
      ctx.fillStyle = cabs(r) < 1 ? style.blue : style.vermilion;
      ctx.beginPath(); ctx.arc(sx(r[0]), sy(r[1]), 4.5, 0, 2 * Math.PI); ctx.fill();
    }
  }

  function drawTrajectory(ctx, st) {
    const W = 330, H = 280, box = { x0: 52, y0: 10, w: W - 62, h: H - 52 };
    ctx.clearRect(0, 0, W, H);
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
    const L = st.trajectory.length - 1;
    let top = 0;
    for (const x of st.trajectory) for (const v of x) if (v !== null) top = Math.max(top, Math.abs(v));
    top = top > 0 ? top * 1.05 : 1;
    const yr = [-top, top];
    ddFrame(ctx, box, [0, Math.max(L, 1)], yr, "l", "x\u2097", style);
    const sx = (l) => box.x0 + (l / Math.max(L, 1)) * box.w, sy = (v) => box.y0 + box.h - ((v + top) / (2 * top)) * box.h;
    const colours = style.palette;
    for (let c = 0; c < spec.dim; c++) {
      ctx.strokeStyle = colours[c % colours.length]; ctx.lineWidth = 1.5;
      ctx.beginPath();
      let started = false;
      st.trajectory.forEach((x, l) => {
        if (x[c] === null) { started = false; return; }
        if (started) ctx.lineTo(sx(l), sy(x[c])); else { ctx.moveTo(sx(l), sy(x[c])); started = true; }
      });
      ctx.stroke();
    }
  }

  function drawConditions(st) {
    condList.textContent = "";
    if (spec.never) condList.appendChild(ddEl("li", { class: "dd-fails", text: `never strictly stable: ${spec.reason}` }));
    spec.conditions.forEach((c, i) => {
      if (spec.never && !c.implied) return;
      const ok = st.conditions[i];
      const li = ddEl("li", { class: ok ? "dd-holds" : "dd-fails", "data-holds": String(ok) });
      const mark = ddEl("span", { class: "dd-mark", text: (ok ? "\u2713 holds" : "\u2717 fails") +
        (c.implied ? " (implied by the domain)" : "") });
      const formula = ddEl("span", { title: c.text });
      formula.innerHTML = c.mathml; // MathML printed by SymPy from the exact condition
      li.append(mark, formula);
      condList.appendChild(li);
    });
    if (!spec.conditions.length && !spec.never) {
      const none = params.length ? "no condition: strictly stable on the whole domain"
        : "no parameter: the roots decide";
      condList.appendChild(ddEl("li", { text: spec.exact ? none : spec.note }));
    }
  }

  function draw() {
    const t0 = performance.now();
    state = compute();
    for (const n of names) {
      const v = state.values[n];
      if (document.activeElement !== sliders[n]) sliders[n].value = v;
      if (document.activeElement !== boxes[n] && ddReadNumber(boxes[n].value) !== v) boxes[n].value = String(v);
    }
    verdict.textContent = state.stable ? "strictly stable" : "not strictly stable";
    verdict.dataset.stable = String(state.stable);
    drawRegion(region.getContext("2d"), state);
    drawRoots(rootsC.getContext("2d"), state);
    drawTrajectory(traj.getContext("2d"), state);
    drawConditions(state);
    root.dataset.stable = String(state.stable);
    root.dataset.radius = String(state.radius);
    state.milliseconds = performance.now() - t0;
  }

  const onDepth = () => { depthBox.value = model.get("depth"); draw(); };
  model.on("change:values", draw);
  model.on("change:depth", onDepth);
  model.on("change:x", draw);
  model.on("change:y", draw);
  draw();

  return {
    element: root,
    // what the page shows, for tests and scripts
    state() {
      return { values: state.values, roots: state.roots, stable: state.stable, conditions: state.conditions,
        radius: state.radius, trajectory: state.trajectory, milliseconds: state.milliseconds };
    },
    set: setValue,
    // a removed view stops listening to the model (anywidget calls what render returns)
    dispose() {
      model.off("change:values", draw);
      model.off("change:depth", onDepth);
      model.off("change:x", draw);
      model.off("change:y", draw);
    },
  };
}
