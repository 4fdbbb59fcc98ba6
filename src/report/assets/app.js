// KernelFoundry's run report and live dashboard (docs/report.md). Plain ES2020, no libraries:
// every chart is SVG made here. The data comes from the page's #kf-data element: {"mode": "report",
// "run": ..., "details": ...} (everything inlined, no request of any kind), {"mode": "serve",
// "run_name": NAME} (one run, fetched from /api/ and polled) or {"mode": "serve"} (the list of
// runs). Strings from the data only ever reach the page through textContent or setAttribute.
(function () {
  "use strict";

  const D = document;
  const SVGNS = "http://www.w3.org/2000/svg";
  const DASH = "\u2014";

  const STATUS_ORDER = ["ok", "incorrect", "nan", "implausible", "invalid_config", "launch_error",
    "compile_error", "crash", "timeout"];
  const STATUS_COLOUR = {
    ok: "#2f9e44", incorrect: "#d9480f", nan: "#f59f00", implausible: "#e64980",
    invalid_config: "#1c7ed6", launch_error: "#868e96", compile_error: "#adb5bd",
    crash: "#7048e8", timeout: "#ae3ec9",
  };
  const OUTCOMES = [
    ["newbest", "new best"], ["improved", "improved its cell"], ["correct", "correct"],
    ["incorrect", "incorrect"], ["compile", "compile error"], ["nothing", "nothing"],
    ["pending", "being evaluated"], ["baseline", "baseline"],
  ];
  const OUTCOME_COLOUR = {
    newbest: "#f08c00", improved: "#1971c2", correct: "#69db7c", incorrect: "#e03131",
    compile: "#adb5bd", nothing: "#e9ecef", pending: "#ffffff", baseline: "#212529",
  };
  // A sequential scale for speedups of 1 and more (light to dark), and reds for those below 1.
  const SEQ = ["#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#0c2c84"];
  const SLOW = ["#fcbba1", "#cb181d"];

  // ---------------------------------------------------------------- state
  const S = {
    mode: "report",
    runName: null,
    run: null,          // the run view
    M: null,            // what is derived from it
    details: {},        // kernel id -> detail
    open: null,         // the open kernel's id
    version: null,
    pollTimer: null,
    fetching: {},       // kernel id -> promise
    rendered: false,
    genealogy: null,    // {setOpen(id)}
    lastUpdate: null,
  };

  // ---------------------------------------------------------------- small helpers
  function isNum(x) { return typeof x === "number" && isFinite(x); }
  function str(x) { return x === null || x === undefined ? "" : String(x); }

  function h(tag, attrs, ...children) {
    const e = D.createElement(tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function s(tag, attrs, ...children) {
    const e = D.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === "text") e.textContent = String(v);
      else if (k === "class") e.setAttribute("class", v);
      else if (k === "data") { for (const dk of Object.keys(v)) if (v[dk] !== null && v[dk] !== undefined) e.dataset[dk] = String(v[dk]); }
      else if (k === "style") { for (const sk of Object.keys(v)) e.style.setProperty(sk, v[sk]); }
      else if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
  }
  function append(e, children) {
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      if (Array.isArray(c)) append(e, c);
      else if (c instanceof Node) e.appendChild(c);
      else e.appendChild(D.createTextNode(String(c)));
    }
  }

  function fmtNum(x, sig) {
    if (!isNum(x)) return DASH;
    if (x === 0) return "0";
    const a = Math.abs(x);
    if (a >= 1e6 || a < 1e-3) return x.toExponential(2);
    if (a >= 1000) return thousands(Math.round(x));
    return String(+x.toPrecision(sig || 3));
  }
  function thousands(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function fmtInt(x) { return isNum(x) ? thousands(Math.round(x)) : DASH; }
  function fmtSpeed(x) { return isNum(x) ? x.toFixed(2) + "\u00d7" : DASH; }
  function fmtMs(x) { return isNum(x) ? fmtNum(x, 3) + " ms" : DASH; }
  function fmtPct(x) { return isNum(x) ? (x * 100).toFixed(x < 0.1 ? 1 : 0) + "%" : DASH; }
  function fmtCost(x) { return isNum(x) ? "$" + (x >= 1 ? x.toFixed(2) : x.toFixed(4)) : DASH; }
  function fmtSeconds(t) {
    if (!isNum(t)) return DASH;
    if (Math.abs(t) < 120) return fmtNum(t, 3) + " s";
    if (Math.abs(t) < 7200) return (t / 60).toFixed(1) + " min";
    return (t / 3600).toFixed(2) + " h";
  }
  function fmtConfig(c) {
    if (!c || typeof c !== "object") return c === null || c === undefined ? DASH : String(c);
    const keys = Object.keys(c);
    if (!keys.length) return "(defaults)";
    return keys.map(k => k + "=" + (typeof c[k] === "object" ? JSON.stringify(c[k]) : String(c[k]))).join(" ");
  }
  function fmtValue(v) {
    if (v === null || v === undefined) return DASH;
    if (typeof v === "number") return fmtNum(v, 6);
    if (typeof v === "string") return v === "" ? DASH : v;
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (Array.isArray(v) && v.every(x => x === null || typeof x !== "object")) return v.length ? v.map(str).join(", ") : DASH;
    return JSON.stringify(v);
  }
  function fmtTick(v) {
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + "G";
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + "M";
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + "k";
    if (a < 1e-3) return v.toExponential(0);
    return String(+v.toPrecision(4));
  }
  function shortId(id) { return str(id).slice(0, 10); }
  function plural(n, one, many) { return fmtInt(n) + " " + (n === 1 ? one : (many || one + "s")); }

  // ---------------------------------------------------------------- errors and readiness
  const errors = new Map();  // source -> message
  function showError(source, message) {
    errors.set(source, message);
    paintErrors();
  }
  function clearError(source) {
    if (errors.delete(source)) paintErrors();
  }
  function paintErrors() {
    const box = D.getElementById("kf-error");
    if (!box) return;
    box.replaceChildren(...[...errors.values()].map(m => h("div", { text: m })));
    box.hidden = errors.size === 0;
  }
  function markReady() {
    if (D.body.dataset.ready !== "1" && window.performance && performance.mark) performance.mark("kf-ready");
    D.body.dataset.ready = "1";
  }

  async function getJson(url) {
    let res;
    try {
      res = await fetch(url, { cache: "no-store", headers: { Accept: "application/json" } });
    } catch (e) {
      throw new Error("Cannot reach the server for " + url + " (" + (e && e.message || e) + ")");
    }
    let text = "", body = null;
    try {
      text = await res.text();
      body = text ? JSON.parse(text) : null;
    } catch (e) {
      body = null;
    }
    if (!res.ok) {
      const why = body && typeof body.error === "string" ? body.error : (text.trim().slice(0, 300) || res.statusText);
      throw new Error(url + ": " + res.status + " " + why);
    }
    if (body === null || typeof body !== "object") throw new Error(url + ": the answer is not JSON");
    return body;
  }

  // ---------------------------------------------------------------- the tooltip
  let tipBox = null;
  function tip() {
    if (!tipBox) {
      tipBox = h("div", { class: "kf-tip", role: "tooltip" });
      tipBox.hidden = true;
      D.body.appendChild(tipBox);
    }
    return tipBox;
  }
  function showTip(ev, text) {
    const t = tip();
    t.textContent = text;
    t.hidden = false;
    const pad = 14;
    let x = ev.clientX + pad, y = ev.clientY + pad;
    const r = t.getBoundingClientRect();
    if (x + r.width > innerWidth - 4) x = ev.clientX - r.width - pad;
    if (y + r.height > innerHeight - 4) y = ev.clientY - r.height - pad;
    t.style.left = Math.max(4, x) + "px";
    t.style.top = Math.max(4, y) + "px";
  }
  function hideTip() { if (tipBox) tipBox.hidden = true; }

  // ---------------------------------------------------------------- the run's derived model
  function derive(run) {
    const M = {};
    const cols = Array.isArray(run.columns) ? run.columns : [];
    M.evals = [];
    for (const row of Array.isArray(run.evaluations) ? run.evaluations : []) {
      const o = {};
      if (Array.isArray(row)) for (let i = 0; i < cols.length; i++) o[cols[i]] = row[i];
      else if (row && typeof row === "object") Object.assign(o, row);
      M.evals.push(o);
    }
    M.search = M.evals.filter(e => e.purpose !== "final");
    M.kernels = run.kernels && typeof run.kernels === "object" ? run.kernels : {};
    M.proposals = new Map();
    for (const p of Array.isArray(run.proposals) ? run.proposals : []) M.proposals.set(p.index, p);
    M.archive = (Array.isArray(run.archive) ? run.archive : []).filter(a => a && Array.isArray(a.cell));
    M.finals = Array.isArray(run.finals) ? run.finals : [];
    const beh = Array.isArray(run.behaviour) ? run.behaviour : [];
    M.behaviour = beh;
    M.dims = [0, 1, 2].map(i => {
      const d = beh[i] || {};
      return { name: str(d.name), levels: Array.isArray(d.levels) ? d.levels.map(str) : [] };
    });
    for (const a of M.archive) {
      for (let i = 0; i < 3; i++) {
        const v = a.cell[i] | 0;
        while (M.dims[i].levels.length <= v) M.dims[i].levels.push(String(M.dims[i].levels.length));
      }
    }
    for (const d of M.dims) if (!d.levels.length) d.levels.push("");
    M.best = run.best && run.best.kernel ? run.best : null;
    let archiveBest = null;
    for (const a of M.archive) if (isNum(a.speedup) && (!archiveBest || a.speedup > archiveBest.speedup)) archiveBest = a;
    M.archiveBest = archiveBest;
    return M;
  }

  function kernelName(id) {
    const k = S.M && S.M.kernels[id];
    return k && k.name ? k.name : shortId(id);
  }
  function defaultKernel() {
    const M = S.M;
    if (!M) return null;
    if (M.best && M.kernels[M.best.kernel]) return M.best.kernel;
    if (M.archiveBest && M.kernels[M.archiveBest.kernel]) return M.archiveBest.kernel;
    let best = null, bs = -Infinity;
    for (const id of Object.keys(M.kernels)) {
      const b = M.kernels[id].best_speedup;
      if (best === null || (isNum(b) && b > bs)) { best = id; bs = isNum(b) ? b : bs; }
    }
    return best;
  }
  function cellText(cell) {
    if (!Array.isArray(cell) || !cell.length) return DASH;
    return cell.map((v, i) => {
      const d = S.M.behaviour[i];
      const name = d && Array.isArray(d.levels) && d.levels[v] !== undefined ? d.levels[v] : String(v);
      return name;
    }).join(" / ");
  }
  function cellLongText(cell) {
    if (!Array.isArray(cell) || !cell.length) return DASH;
    return cell.map((v, i) => {
      const d = S.M.behaviour[i];
      const dim = d && d.name ? d.name : "dimension " + (i + 1);
      const name = d && Array.isArray(d.levels) && d.levels[v] !== undefined ? d.levels[v] : String(v);
      return dim + "=" + name;
    }).join(", ");
  }
  function outcomeOf(k) {
    if (!k) return "nothing";
    if (k.state === "baseline" || k.proposer === "baseline" || k.origin === "baseline") return "baseline";
    if (k.state === "issued" || k.state === "proposed") return "pending";
    switch (k.grade) {
      case 5: return "newbest";
      case 4: return "improved";
      case 3: return "correct";
      case 2: return "incorrect";
      case 1: return "compile";
      default: return isNum(k.best_speedup) ? "correct" : "nothing";
    }
  }
  function outcomeLabel(o) {
    for (const [k, label] of OUTCOMES) if (k === o) return label;
    return o;
  }
  function statusColour(st) { return STATUS_COLOUR[st] || "#495057"; }

  // ---------------------------------------------------------------- colour scales
  function hexRgb(hex) {
    const n = parseInt(hex.slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }
  function mix(a, b, t) {
    const x = hexRgb(a), y = hexRgb(b);
    return "rgb(" + x.map((v, i) => Math.round(v + (y[i] - v) * t)).join(",") + ")";
  }
  function ramp(stops, t) {
    t = Math.max(0, Math.min(1, isNum(t) ? t : 0));
    const f = t * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(f));
    return mix(stops[i], stops[i + 1], f - i);
  }
  function luminance(rgb) {
    const m = /rgb\((\d+),(\d+),(\d+)\)/.exec(rgb);
    if (!m) return 1;
    return (0.299 * m[1] + 0.587 * m[2] + 0.114 * m[3]) / 255;
  }
  function speedScale(values) {
    const fast = values.filter(v => v >= 1), slow = values.filter(v => v < 1);
    const lo = fast.length ? Math.min(...fast) : 1, hi = fast.length ? Math.max(...fast) : 1;
    const slowMin = slow.length ? Math.min(...slow) : null;
    const f = v => {
      if (!isNum(v)) return "#f1f3f5";
      if (v < 1) {
        const span = Math.log(1 / Math.max(slowMin, 1e-6));
        return ramp(SLOW, span > 0 ? Math.log(1 / v) / span : 1);
      }
      if (hi <= lo) return ramp(SEQ, 0.75);
      return ramp(SEQ, 0.08 + 0.92 * (Math.log(v) - Math.log(lo)) / (Math.log(hi) - Math.log(lo)));
    };
    f.lo = lo; f.hi = hi; f.slowMin = slowMin; f.fast = fast.length; f.slow = slow.length;
    return f;
  }

  // ---------------------------------------------------------------- layout pieces
  function section(id, title, note, ...body) {
    return h("section", { id, class: "kf-section" },
      h("div", { class: "kf-section-head" }, h("h2", { text: title }), note ? h("p", { class: "kf-note", text: note }) : null),
      body);
  }
  function kv(rows, cls) {
    const dl = h("dl", { class: "kf-kv" + (cls ? " " + cls : "") });
    for (const [k, v] of rows) {
      if (v === undefined) continue;
      dl.appendChild(h("dt", { text: k }));
      dl.appendChild(h("dd", null, v instanceof Node ? v : fmtValue(v)));
    }
    return dl;
  }
  function card(title, ...body) {
    return h("div", { class: "kf-card" }, h("h3", { text: title }), body);
  }
  function klink(id, text) {
    if (!id) return DASH;
    const known = S.M && S.M.kernels[id];
    return h("a", { class: "kf-klink kf-open", href: "#k=" + encodeURIComponent(id), data: { kernel: id }, title: id + (known ? "" : " (not in this run)") },
      text !== undefined ? text : kernelName(id));
  }
  function badge(text, cls, title) { return h("span", { class: "kf-badge " + (cls || ""), text, title }); }
  function statusBadge(st) {
    return h("span", { class: "kf-status", style: { "--c": statusColour(st) } }, h("i"), str(st) || DASH);
  }
  function outcomeBadge(o) {
    return h("span", { class: "kf-outcome", style: { "--c": OUTCOME_COLOUR[o] || "#ccc" } }, h("i"), outcomeLabel(o));
  }
  function table(head, rows, cls) {
    return h("div", { class: "kf-table-wrap" },
      h("table", { class: "kf-table " + (cls || "") },
        h("thead", null, h("tr", null, head.map(c => Array.isArray(c) ? h("th", { text: c[0], title: c[1], class: c[2] }) : h("th", { text: c })))),
        h("tbody", null, rows)));
  }
  function td(v, cls, title) {
    return h("td", { class: cls, title }, v instanceof Node ? v : (v === null || v === undefined || v === "" ? DASH : String(v)));
  }
  function fold(key, summary, open, ...body) {
    return h("details", { class: "kf-fold", data: { key }, open: open ? true : null }, h("summary", null, summary), body);
  }
  function placeholder(text) { return h("p", { class: "kf-empty", text }); }

  // ---------------------------------------------------------------- charts
  function niceTicks(a, b, n) {
    const span = b - a;
    if (!(span > 0)) return [a];
    const raw = span / (n || 5);
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const e = raw / mag;
    const step = (e >= 7.5 ? 10 : e >= 3.5 ? 5 : e >= 1.5 ? 2 : 1) * mag;
    const out = [];
    for (let v = Math.ceil(a / step - 1e-9) * step; v <= b + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const t = niceTicks(0, v, 5);
    const step = t.length > 1 ? t[1] - t[0] : v;
    return Math.ceil(v / step - 1e-9) * step;
  }
  function logTicks(a, b) {
    const e0 = Math.floor(Math.log10(a)), e1 = Math.ceil(Math.log10(b));
    const mults = e1 - e0 <= 2 ? [1, 2, 5] : [1];
    let out = [];
    for (let e = e0; e <= e1; e++) for (const m of mults) {
      const v = m * Math.pow(10, e);
      if (v >= a * 0.999 && v <= b * 1.001) out.push(+v.toPrecision(6));
    }
    if (out.length > 9) { const k = Math.ceil(out.length / 8); out = out.filter((_, i) => i % k === 0); }
    if (out.length < 2) out = [a, b].map(v => +v.toPrecision(2));
    return out;
  }
  function scale(type, dom, rng) {
    let f;
    if (type === "log") {
      const l0 = Math.log10(dom[0]), l1 = Math.log10(dom[1]);
      f = v => rng[0] + (Math.log10(v) - l0) / ((l1 - l0) || 1) * (rng[1] - rng[0]);
      f.ticks = () => logTicks(dom[0], dom[1]);
    } else {
      f = v => rng[0] + (v - dom[0]) / ((dom[1] - dom[0]) || 1) * (rng[1] - rng[0]);
      f.ticks = n => niceTicks(dom[0], dom[1], n);
    }
    f.domain = dom; f.range = rng; f.type = type;
    return f;
  }
  function r1(v) { return Math.round(v * 10) / 10; }

  // A chart frame: axes, grid, ticks and titles; returns the scales and the plot's group.
  function frame(o) {
    const W = o.width || 560, H = o.height || 260;
    const m = Object.assign({ l: 58, r: 16, t: 14, b: 42 }, o.margin || {});
    const svg = s("svg", { viewBox: "0 0 " + W + " " + H, class: "kf-chart", role: "img", "aria-label": o.label || "" });
    const x = scale(o.xType || "linear", o.xDomain, [m.l, W - m.r]);
    const y = scale(o.yType || "linear", o.yDomain, [H - m.b, m.t]);
    const grid = s("g", { class: "kf-grid" }), axes = s("g", { class: "kf-axes" });
    const unit = o.xUnit || null;  // [divisor, suffix]: ticks at round numbers of that unit
    const xt = unit ? niceTicks(o.xDomain[0] / unit[0], o.xDomain[1] / unit[0], o.xTicks || 6).map(v => v * unit[0]) : x.ticks(o.xTicks || 6);
    const xf = unit ? (v => fmtTick(+(v / unit[0]).toPrecision(6)) + unit[1]) : (o.xFormat || fmtTick);
    for (const v of xt) {
      const px = r1(x(v));
      grid.appendChild(s("line", { x1: px, x2: px, y1: m.t, y2: H - m.b }));
      axes.appendChild(s("text", { x: px, y: H - m.b + 15, "text-anchor": "middle", text: xf(v) }));
    }
    let yt = y.ticks(o.yTicks || 5);
    if (o.yInt) yt = yt.filter(v => Number.isInteger(v));
    for (const v of yt) {
      const py = r1(y(v));
      grid.appendChild(s("line", { x1: m.l, x2: W - m.r, y1: py, y2: py }));
      axes.appendChild(s("text", { x: m.l - 6, y: py + 4, "text-anchor": "end", text: (o.yFormat || fmtTick)(v) }));
    }
    axes.appendChild(s("line", { class: "kf-axis", x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }));
    axes.appendChild(s("line", { class: "kf-axis", x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }));
    if (o.xTitle) axes.appendChild(s("text", { class: "kf-axis-title", x: (m.l + W - m.r) / 2, y: H - 6, "text-anchor": "middle", text: o.xTitle }));
    if (o.yTitle) axes.appendChild(s("text", { class: "kf-axis-title", x: 14, y: (m.t + H - m.b) / 2, "text-anchor": "middle", transform: "rotate(-90 14 " + ((m.t + H - m.b) / 2) + ")", text: o.yTitle }));
    const plot = s("g", { class: "kf-plot" });
    svg.append(grid, axes, plot);
    return { svg, x, y, plot, W, H, m };
  }
  // Many points as one path of zero-length segments with round caps: cheap for 10,000 points.
  function dots(points, colour, size, opacity) {
    if (!points.length) return null;
    const seen = new Set(), parts = [];
    for (let i = 0; i < points.length; i++) {
      const p = "M" + Math.round(points[i][0] * 2) / 2 + " " + Math.round(points[i][1] * 2) / 2;
      if (!seen.has(p)) { seen.add(p); parts.push(p + "h0"); }
    }
    return s("path", { d: parts.join(""), stroke: colour, "stroke-width": size, "stroke-linecap": "round", "stroke-opacity": opacity || 1, fill: "none", class: "kf-dots" });
  }
  // Clicks and hovers on a chart pick the nearest point (within 8 screen pixels): no element per point.
  function picker(svg, points, describe) {
    let pending = null;
    function nearest(ev) {
      const ctm = svg.getScreenCTM();
      if (!ctm) return null;
      const q = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(ctm.inverse());
      const lim = 8 / (ctm.a || 1);
      let best = null, bd = lim * lim;
      for (const pt of points) {
        const dx = pt[0] - q.x, dy = pt[1] - q.y, d = dx * dx + dy * dy;
        if (d <= bd) { bd = d; best = pt; }
      }
      return best;
    }
    svg.addEventListener("mousemove", ev => {
      if (pending) return;
      pending = requestAnimationFrame(() => {
        pending = null;
        const pt = nearest(ev);
        if (pt) { showTip(ev, describe(pt[2])); svg.classList.add("kf-pointing"); }
        else { hideTip(); svg.classList.remove("kf-pointing"); }
      });
    });
    svg.addEventListener("mouseleave", () => { hideTip(); svg.classList.remove("kf-pointing"); });
    svg.addEventListener("click", ev => {
      if (ev.target instanceof Element && ev.target.closest(".kf-open")) return;  // a marker: the page's handler has it
      const pt = nearest(ev);
      if (pt && pt[2] && pt[2].kernel) { hideTip(); openKernel(pt[2].kernel, { scroll: true }); }
    });
  }
  function describeEval(e) {
    const lines = ["#" + e.seq + "  " + kernelName(e.kernel), fmtConfig(e.config), "status " + e.status + (e.purpose && e.purpose !== "search" ? " (" + e.purpose + ")" : "")];
    if (isNum(e.speedup)) lines.push("speedup " + fmtSpeed(e.speedup));
    if (isNum(e.time_ms)) lines.push("time " + fmtMs(e.time_ms));
    if (isNum(e.gbs)) lines.push(fmtNum(e.gbs) + " GB/s" + (isNum(e.roofline) ? " (" + fmtPct(e.roofline) + " of the copy bandwidth)" : ""));
    if (isNum(e.gflops)) lines.push(fmtNum(e.gflops) + " GFLOP/s" + (isNum(e.compute) ? " (" + fmtPct(e.compute) + " of the compute peak)" : ""));
    if (isNum(e.t)) lines.push("at " + fmtSeconds(e.t));
    return lines.join("\n");
  }
  function chartBox(id, title, ...body) {
    return h("figure", { class: "kf-figure" }, h("figcaption", { text: title }), h("div", { id, class: "kf-chart-box" }, body));
  }
  function legend(items) {
    return h("div", { class: "kf-legend" }, items.map(([colour, label, cls]) =>
      h("span", { class: "kf-legend-item" }, h("i", { class: cls || "", style: { background: colour } }), label)));
  }

  function bestChart(key) {
    const M = S.M;
    const xTitle = key === "t" ? "time since the first evaluation" : "evaluation";
    const all = M.search.filter(e => isNum(e[key]));
    const ok = all.filter(e => e.status === "ok" && isNum(e.speedup));
    if (!ok.length) return placeholder(all.length ? "No correct evaluation yet." : (key === "t" ? "No evaluation times stored." : "No evaluation yet."));
    ok.sort((a, b) => a[key] - b[key]);
    let xmax = 0, xmin = Infinity;
    for (const e of all) { if (e[key] > xmax) xmax = e[key]; if (e[key] < xmin) xmin = e[key]; }
    xmin = key === "t" ? Math.min(0, xmin) : Math.min(1, xmin);
    if (xmax <= xmin) xmax = xmin + 1;
    let ymax = 1;
    for (const e of ok) if (e.speedup > ymax) ymax = e.speedup;
    const f = frame({ label: "best-so-far speedup against " + xTitle, xDomain: [xmin, xmax], yDomain: [0, niceMax(ymax * 1.05)], xTitle, yTitle: "speedup (\u00d7 baseline)", xUnit: key === "t" ? timeUnit(xmax) : null });
    const cloud = ok.map(e => [f.x(e[key]), f.y(e.speedup), e]);
    const dotsPath = dots(cloud, "#868e96", 3, 0.45);
    const base = s("line", { class: "kf-baseline", x1: f.x(xmin), x2: f.x(xmax), y1: r1(f.y(1)), y2: r1(f.y(1)) });
    let best = -Infinity, d = "";
    const marks = [];
    for (const e of ok) {
      if (e.speedup > best) {
        const px = r1(f.x(e[key])), py = r1(f.y(e.speedup));
        d += d ? "H" + px + "V" + py : "M" + px + " " + py;
        best = e.speedup;
        marks.push([px, py, e]);
      }
    }
    d += "H" + r1(f.x(xmax));
    const step = s("path", { class: "kf-step", d });
    const markG = s("g", { class: "kf-marks" });
    for (const [px, py, e] of marks) {
      markG.appendChild(s("circle", { cx: px, cy: py, r: 3.5, class: "kf-mark kf-open", data: { kernel: e.kernel } },
        s("title", { text: "new best " + fmtSpeed(e.speedup) + " at " + (key === "t" ? fmtSeconds(e.t) : "#" + e.seq) + "\n" + kernelName(e.kernel) + "\n" + fmtConfig(e.config) })));
    }
    f.plot.append(base, s("text", { class: "kf-label", x: f.x(xmax) - 4, y: r1(f.y(1)) - 4, "text-anchor": "end", text: "baseline" }));
    if (dotsPath) f.plot.appendChild(dotsPath);
    f.plot.append(step, markG);
    picker(f.svg, cloud, describeEval);
    return f.svg;
  }
  function timeUnit(max) {
    if (max >= 3 * 3600) return [3600, " h"];
    if (max >= 300) return [60, " min"];
    return [1, " s"];
  }

  function verdictsChart() {
    const M = S.M;
    const ev = M.search;
    if (!ev.length) return placeholder("No evaluation yet.");
    let lo = Infinity, hi = -Infinity;
    for (const e of ev) if (isNum(e.t)) { if (e.t < lo) lo = e.t; if (e.t > hi) hi = e.t; }
    const useTime = ev.every(e => isNum(e.t)) && hi > lo;
    const xOf = useTime ? (e => e.t) : ((e, i) => (isNum(e.seq) ? e.seq : i + 1));
    let nb, width;
    if (useTime) {
      nb = Math.min(30, ev.length);
      width = (hi - lo) / nb;
    } else {
      lo = Infinity; hi = -Infinity;
      ev.forEach((e, i) => { const v = xOf(e, i); if (v < lo) lo = v; if (v > hi) hi = v; });
      width = Math.max(1, Math.ceil((hi - lo + 1) / 30));
      nb = Math.max(1, Math.ceil((hi - lo + 1) / width));
    }
    const buckets = Array.from({ length: nb }, () => ({}));
    const seen = new Set(), totals = {};
    ev.forEach((e, i) => {
      const b = Math.max(0, Math.min(nb - 1, Math.floor((xOf(e, i) - lo) / width)));
      const st = str(e.status) || "?";
      buckets[b][st] = (buckets[b][st] || 0) + 1;
      totals[st] = (totals[st] || 0) + 1;
      seen.add(st);
    });
    const order = STATUS_ORDER.filter(x => seen.has(x)).concat([...seen].filter(x => !STATUS_ORDER.includes(x)).sort());
    let ymax = 1;
    for (const b of buckets) { let t = 0; for (const k of Object.keys(b)) t += b[k]; if (t > ymax) ymax = t; }
    const xTitle = useTime ? "time since the first evaluation" : "evaluation";
    const x0d = lo, x1d = lo + nb * width;
    const f = frame({ label: "verdicts by status over " + xTitle, xDomain: [x0d, x1d], yDomain: [0, Math.max(niceMax(ymax), 2)], yInt: true, xTitle, yTitle: "evaluations per bucket", xUnit: useTime ? timeUnit(x1d) : null });
    const g = s("g", { class: "kf-bars" });
    for (let i = 0; i < nb; i++) {
      const b = buckets[i];
      const total = Object.keys(b).reduce((t, k) => t + b[k], 0);
      if (!total) continue;
      const xa = f.x(lo + i * width), xb = f.x(lo + (i + 1) * width);
      const w = Math.max(1, xb - xa - (xb - xa > 4 ? 1.5 : 0.5));
      const range = useTime ? fmtSeconds(lo + i * width) + "\u2013" + fmtSeconds(lo + (i + 1) * width)
        : (width === 1 ? "evaluation " + (lo + i) : "evaluations " + (lo + i * width) + "\u2013" + Math.min(hi, lo + (i + 1) * width - 1));
      const detail = order.filter(st => b[st]).map(st => st + " " + b[st]).join(", ");
      let acc = 0;
      for (const st of order) {
        const c = b[st];
        if (!c) continue;
        const ya = f.y(acc), yb = f.y(acc + c);
        acc += c;
        g.appendChild(s("rect", { x: r1(xa + 0.25), y: r1(yb), width: r1(w), height: r1(Math.max(0.5, ya - yb)), fill: statusColour(st), class: "kf-bar" },
          s("title", { text: range + ": " + total + " (" + detail + ")" })));
      }
    }
    f.plot.appendChild(g);
    return [f.svg, legend(order.map(st => [statusColour(st), st + " " + fmtInt(totals[st] || 0)]))];
  }

  function rooflineChart() {
    const M = S.M, R = S.run.roofline || {};
    const peak = isNum(R.peak_gbs) && R.peak_gbs > 0 ? R.peak_gbs : null;
    const fpb = isNum(R.flops_per_byte) && R.flops_per_byte > 0 ? R.flops_per_byte : null;
    const cpeak = isNum(R.peak_gflops) && R.peak_gflops > 0 ? R.peak_gflops : null;
    const ok = M.evals.filter(e => e.status === "ok");
    const notes = [];
    if (R.sizes) notes.push("timed sizes: " + R.sizes);
    if (isNum(R.min_bytes)) notes.push("min bytes " + fmtNum(R.min_bytes));
    if (isNum(R.flops)) notes.push("FLOPs " + fmtNum(R.flops));
    if (peak) notes.push("measured copy bandwidth " + fmtNum(peak) + " GB/s");
    else notes.push("no measured copy bandwidth");
    if (fpb) notes.push(cpeak ? "measured compute peak " + fmtNum(cpeak) + " GFLOP/s" : "no measured compute peak");
    const foot = h("p", { class: "kf-note", text: notes.join(" \u00b7 ") });
    if (fpb) {
      const gflops = e => {
        if (isNum(R.flops) && isNum(e.time_ms) && e.time_ms > 0) return R.flops / (e.time_ms * 1e-3) / 1e9;
        if (isNum(e.gbs)) return fpb * e.gbs;
        return null;
      };
      const pts = [];
      for (const e of ok) { const y = gflops(e); if (isNum(y) && y > 0) pts.push([fpb, y, e]); }
      if (!pts.length) return [placeholder("No correct evaluation yet."), foot];
      const xlo = fpb / 30, xhi = fpb * 30;
      let ymin = Infinity, ymax = 0;
      for (const p of pts) { if (p[1] < ymin) ymin = p[1]; if (p[1] > ymax) ymax = p[1]; }
      if (peak) { ymax = Math.max(ymax, peak * fpb * 3); ymin = Math.min(ymin, peak * xlo); }
      if (cpeak) ymax = Math.max(ymax, cpeak * 2);
      ymin = Math.pow(10, Math.floor(Math.log10(ymin / 1.5)));
      ymax = Math.pow(10, Math.ceil(Math.log10(ymax * 1.2)));
      const f = frame({ label: "roofline", xType: "log", yType: "log", xDomain: [xlo, xhi], yDomain: [ymin, ymax], xTitle: "arithmetic intensity (FLOP/byte)", yTitle: "achieved GFLOP/s" });
      if (peak) {  // the bandwidth ceiling, up to the ridge where the compute ceiling takes over
        const xa = Math.max(xlo, ymin / peak), xb = Math.min(xhi, ymax / peak, cpeak ? cpeak / peak : Infinity);
        if (xb > xa) {
          f.plot.appendChild(s("line", { class: "kf-ceiling", x1: r1(f.x(xa)), y1: r1(f.y(peak * xa)), x2: r1(f.x(xb)), y2: r1(f.y(peak * xb)) }));
          const lx = Math.min(xb, fpb * 6);
          const ang = Math.atan2(f.y(peak * xb) - f.y(peak * xa), f.x(xb) - f.x(xa)) * 180 / Math.PI;
          f.plot.appendChild(s("text", { class: "kf-label kf-ceiling-label", x: r1(f.x(lx)), y: r1(f.y(peak * lx)) - 6, "text-anchor": "end", transform: "rotate(" + ang.toFixed(1) + " " + r1(f.x(lx)) + " " + (r1(f.y(peak * lx)) - 6) + ")", text: "copy bandwidth " + fmtNum(peak) + " GB/s" }));
        }
      }
      if (cpeak) {
        const xa = Math.max(xlo, peak ? cpeak / peak : xlo), yc = r1(f.y(cpeak));
        if (xa < xhi) {
          f.plot.appendChild(s("line", { class: "kf-ceiling", x1: r1(f.x(xa)), y1: yc, x2: r1(f.x(xhi)), y2: yc }));
          f.plot.appendChild(s("text", { class: "kf-label kf-ceiling-label", x: f.W - f.m.r - 4, y: yc - 5, "text-anchor": "end", text: "compute peak " + fmtNum(cpeak) + " GFLOP/s" }));
        }
      }
      const xi = r1(f.x(fpb));
      f.plot.appendChild(s("line", { class: "kf-intensity", x1: xi, x2: xi, y1: f.m.t, y2: f.H - f.m.b }));
      f.plot.appendChild(s("text", { class: "kf-label", x: xi + 4, y: f.H - f.m.b - 6, text: "task: " + fmtNum(fpb) + " FLOP/B" }));
      const screen = pts.map(p => [f.x(p[0]), f.y(p[1]), p[2]]);
      const search = screen.filter(p => p[2].purpose !== "final"), fin = screen.filter(p => p[2].purpose === "final");
      const a = dots(search, "#1c7ed6", 5, 0.5), b = dots(fin, "#f08c00", 6, 0.9);
      if (a) f.plot.appendChild(a);
      if (b) f.plot.appendChild(b);
      picker(f.svg, screen, e => describeEval(e) + "\n" + fmtNum(gflops(e)) + " GFLOP/s");
      return [f.svg, legend([["#1c7ed6", "search (ok)"], ["#f08c00", "final re-verification"], ["#c92a2a", cpeak ? "bandwidth and compute ceilings" : "bandwidth ceiling", "kf-line"]]), foot];
    }
    const pts = ok.filter(e => isNum(e.gbs) && isNum(e.seq));
    if (!pts.length) return [placeholder("No correct evaluation yet."), foot];
    let xmax = 1, ymax = peak || 0;
    for (const e of M.evals) if (isNum(e.seq) && e.seq > xmax) xmax = e.seq;
    for (const e of pts) if (e.gbs > ymax) ymax = e.gbs;
    const f = frame({ label: "achieved bandwidth", xDomain: [0, xmax], yDomain: [0, niceMax(ymax * 1.08)], xTitle: "evaluation", yTitle: "achieved GB/s" });
    if (peak) {
      const py = r1(f.y(peak));
      f.plot.appendChild(s("line", { class: "kf-ceiling", x1: f.m.l, x2: f.W - f.m.r, y1: py, y2: py }));
      f.plot.appendChild(s("text", { class: "kf-label kf-ceiling-label", x: f.W - f.m.r - 4, y: py - 5, "text-anchor": "end", text: "copy bandwidth " + fmtNum(peak) + " GB/s" }));
    }
    const screen = pts.map(e => [f.x(e.seq), f.y(e.gbs), e]);
    const a = dots(screen.filter(p => p[2].purpose !== "final"), "#1c7ed6", 4, 0.5);
    const b = dots(screen.filter(p => p[2].purpose === "final"), "#f08c00", 5, 0.9);
    if (a) f.plot.appendChild(a);
    if (b) f.plot.appendChild(b);
    picker(f.svg, screen, describeEval);
    return [f.svg, legend([["#1c7ed6", "search (ok)"], ["#f08c00", "final re-verification"], ["#c92a2a", "copy bandwidth", "kf-line"]]),
      h("p", { class: "kf-note", text: "The task declares no FLOPs: achieved bandwidth per evaluation under the measured copy bandwidth." }), foot];
  }

  // ---------------------------------------------------------------- sections
  function headerSection() {
    const run = S.run, info = run.run || {}, M = S.M;
    const status = () => info.finished ? badge("finished", "kf-done") : badge(S.mode === "serve" ? "running" : "not finished", "kf-running");
    const bestId = M.best ? M.best.kernel : (M.archiveBest ? M.archiveBest.kernel : null);
    const bestSpeed = M.best ? M.best.speedup : (M.archiveBest ? M.archiveBest.speedup : null);
    const summary = h("div", { class: "kf-stats" },
      stat("best speedup", fmtSpeed(bestSpeed), M.best ? "verified final" : (M.archiveBest ? "archive (not verified)" : "")),
      stat("evaluations", fmtInt(M.search.length), M.evals.length > M.search.length ? "+" + fmtInt(M.evals.length - M.search.length) + " final" : ""),
      stat("kernels", fmtInt(Object.keys(M.kernels).length), plural((Array.isArray(run.proposals) ? run.proposals.length : 0), "proposal")),
      stat("archive", fmtInt(M.archive.length) + " / " + fmtInt(M.dims[0].levels.length * M.dims[1].levels.length * M.dims[2].levels.length), "cells filled"),
      stat("baseline", fmtMs(run.baseline_ms), "median time"),
      stat("model cost", fmtCost(run.llm && run.llm.cost_usd), run.llm && run.llm.requests ? plural(run.llm.requests, "request") : "no model requests"));
    const runCard = card("Run", kv([
      ["task", info.task],
      ["device", info.device],
      ["created", info.created_at],
      ["state", status()],
      ["stop reason", info.stop_reason || (info.finished ? DASH : "still running")],
      ["best kernel", bestId ? h("span", null, klink(bestId), " ", fmtSpeed(bestSpeed), M.best ? " " + fmtConfig(M.best.config) : "") : DASH],
      ["version", run.version],
    ]));
    const settings = flatten(info.settings);
    const setCard = card("Settings", settings.length ? kv(settings, "kf-kv-compact") : placeholder("No settings stored."));
    const devs = Array.isArray(info.devices) ? info.devices : [];
    const devCard = card("Devices",
      devs.length ? h("div", { class: "kf-devices" }, devs.map(d => h("div", { class: "kf-device" },
        h("div", { class: "kf-device-name", text: str(d.device) || DASH }),
        h("div", { class: "kf-meter", title: "busy " + fmtPct(d.busy_fraction) }, h("span", { style: { width: (isNum(d.busy_fraction) ? Math.max(0, Math.min(1, d.busy_fraction)) * 100 : 0) + "%" } })),
        h("div", { class: "kf-note", text: "busy " + fmtPct(d.busy_fraction) + " \u00b7 " + plural(d.evaluations | 0, "evaluation") + (isNum(d.busy_seconds) ? " \u00b7 " + fmtSeconds(d.busy_seconds) : "") }))))
        : placeholder(info.finished ? "No device figures stored." : "Device figures come when the run finishes."),
      verdictTotals());
    const llm = run.llm || {};
    const byModel = llm.by_model && typeof llm.by_model === "object" ? Object.keys(llm.by_model) : [];
    const llmCard = card("Model use", kv([
      ["requests", fmtInt(llm.requests) + (llm.failed_requests ? " (" + fmtInt(llm.failed_requests) + " failed)" : "")],
      ["prompt tokens", fmtInt(llm.prompt_tokens)],
      ["completion tokens", fmtInt(llm.completion_tokens)],
      ["cost", fmtCost(llm.cost_usd)],
      ["repaired replies", llm.repaired_replies === undefined ? undefined : fmtInt(llm.repaired_replies)],
      ["meta versions", llm.meta_versions === undefined ? undefined : fmtInt(llm.meta_versions)],
    ].concat(byModel.map(m => ["\u2003" + (m || "(unnamed)"), plural(llm.by_model[m].requests | 0, "request") + ", " + fmtCost(llm.by_model[m].cost)]))),
    proposalStates(), budgetSplit());
    return h("section", { id: "kf-sec-run", class: "kf-section kf-header" },
      h("div", { class: "kf-title-row" }, h("h1", { text: str(info.name) || "run" }), status(),
        S.mode === "serve" ? h("a", { class: "kf-back", href: "/", text: "all runs" }) : null),
      summary,
      h("div", { class: "kf-cards" }, runCard, setCard, devCard, llmCard));
  }
  function stat(label, value, note) {
    return h("div", { class: "kf-stat" }, h("div", { class: "kf-stat-value", text: value }), h("div", { class: "kf-stat-label", text: label }), note ? h("div", { class: "kf-stat-note", text: note }) : null);
  }
  function verdictTotals() {
    const v = S.run.verdicts;
    if (!v || typeof v !== "object" || !Object.keys(v).length) return null;
    const keys = Object.keys(v).sort((a, b) => (STATUS_ORDER.indexOf(a) + 99 * (STATUS_ORDER.indexOf(a) < 0)) - (STATUS_ORDER.indexOf(b) + 99 * (STATUS_ORDER.indexOf(b) < 0)));
    return h("div", { class: "kf-verdict-totals" }, h("h4", { text: "Verdicts" }), keys.map(k => h("span", { class: "kf-chip" }, statusBadge(k), " " + fmtInt(v[k]))));
  }
  function proposalStates() {
    const v = S.run.proposal_states;
    if (!v || typeof v !== "object" || !Object.keys(v).length) return null;
    return h("div", { class: "kf-verdict-totals" }, h("h4", { text: "Proposals" }), Object.keys(v).map(k => h("span", { class: "kf-chip", text: k + " " + fmtInt(v[k]) })));
  }
  // Where the search's evaluations went: new kernels, tuning them, deeper tuning of elites.
  function budgetSplit() {
    const v = S.run.budget;
    if (!v || typeof v !== "object" || !Object.keys(v).length) return null;
    const words = { new_kernels: "new kernels", tuning: "tuning proposals", deeper_tuning: "deeper tuning of elites" };
    return h("div", { class: "kf-verdict-totals" }, h("h4", { text: "Evaluations" }), Object.keys(words).filter(k => isNum(v[k])).map(k => h("span", { class: "kf-chip", text: words[k] + " " + fmtInt(v[k]) })));
  }
  function flatten(obj, prefix, out) {
    out = out || [];
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) {
      if (prefix) out.push([prefix, obj]);
      return out;
    }
    for (const k of Object.keys(obj)) {
      const v = obj[k], key = prefix ? prefix + "." + k : k;
      if (v && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length && out.length < 400) flatten(v, key, out);
      else out.push([key, v]);
    }
    return out;
  }

  function heatmapSection() {
    const M = S.M;
    const [d0, d1, d2] = M.dims;
    const cells = new Map();
    for (const a of M.archive) {
      const key = [a.cell[0] | 0, a.cell[1] | 0, a.cell[2] | 0].join(",");
      const old = cells.get(key);
      if (!old || (isNum(a.speedup) && !(a.speedup <= old.speedup))) cells.set(key, a);
    }
    const sc = speedScale([...cells.values()].map(a => a.speedup).filter(isNum));
    const bestKernel = M.best ? M.best.kernel : (M.archiveBest ? M.archiveBest.kernel : null);
    const panels = h("div", { class: "kf-heatmaps" });
    d2.levels.forEach((pl, p) => {
      const grid = h("div", { class: "kf-hm-grid", style: { "grid-template-columns": "minmax(5.5em, auto) repeat(" + d1.levels.length + ", minmax(0, 1fr))" } });
      grid.appendChild(h("div", { class: "kf-hm-corner", title: (d0.name || "rows") + " \u2193, " + (d1.name || "columns") + " \u2192" }, h("span", { text: (d0.name || "") + " \u2193" }), h("span", { text: (d1.name || "") + " \u2192" })));
      d1.levels.forEach(cl => grid.appendChild(h("div", { class: "kf-hm-col", text: breakable(cl), title: (d1.name ? d1.name + "=" : "") + cl })));
      d0.levels.forEach((rl, m) => {
        grid.appendChild(h("div", { class: "kf-hm-row", text: breakable(rl), title: (d0.name ? d0.name + "=" : "") + rl }));
        d1.levels.forEach((cl, a) => {
          const key = m + "," + a + "," + p;
          const e = cells.get(key);
          const where = [d0.name ? d0.name + "=" + rl : rl, d1.name ? d1.name + "=" + cl : cl, d2.name ? d2.name + "=" + pl : pl].filter(Boolean).join(", ");
          if (!e) {
            grid.appendChild(h("div", { class: "kf-cell", data: { cell: key }, title: where + "\nempty" }));
            return;
          }
          const bg = sc(e.speedup);
          const slow = isNum(e.speedup) && e.speedup < 1;
          const name = e.name || kernelName(e.kernel);
          grid.appendChild(h("div", {
            class: "kf-cell filled kf-open" + (slow ? " slow" : "") + (e.kernel === bestKernel ? " best" : "") + (e.kernel === S.open ? " open" : "") + (luminance(bg) < 0.55 ? " dark" : ""),
            data: { cell: key, kernel: e.kernel },
            style: { background: bg },
            title: name + " (" + shortId(e.kernel) + ")\nconfig " + fmtConfig(e.config) + "\nspeedup " + fmtSpeed(e.speedup) + (isNum(e.time_ms) ? ", " + fmtMs(e.time_ms) : "") + "\n" + where,
            tabindex: "0", role: "button",
          }, h("span", { class: "kf-cell-speed", text: fmtSpeed(e.speedup) })));
        });
      });
      panels.appendChild(h("div", { class: "kf-heatmap", data: { panel: p } },
        h("h3", null, d2.name ? h("span", { class: "kf-dim", text: d2.name + " = " }) : null, pl || (d2.name ? "" : "archive")), grid));
    });
    const filled = cells.size, total = d0.levels.length * d1.levels.length * d2.levels.length;
    const leg = h("div", { class: "kf-hm-legend" },
      sc.fast ? h("span", { class: "kf-ramp-wrap" }, h("span", { class: "kf-ramp-label", text: fmtSpeed(sc.lo) }),
        h("span", { class: "kf-ramp", style: { background: "linear-gradient(to right, " + SEQ.join(", ") + ")" } }),
        h("span", { class: "kf-ramp-label", text: fmtSpeed(sc.hi) })) : null,
      sc.slow ? h("span", { class: "kf-ramp-wrap" }, h("i", { class: "kf-swatch slow", style: { background: ramp(SLOW, 0.6) } }), "below 1\u00d7 (slower than the baseline; min " + fmtSpeed(sc.slowMin) + ")") : null,
      h("span", { class: "kf-ramp-wrap" }, h("i", { class: "kf-swatch best-swatch" }), "best kernel"),
      h("span", { class: "kf-ramp-wrap" }, h("i", { class: "kf-swatch empty-swatch" }), "empty"));
    return section("kf-sec-archive", "Archive",
      filled + " of " + total + " cells filled. Each cell holds the fastest correct kernel with that behaviour, coloured by its speedup over the baseline; click one to open it.",
      M.archive.length ? null : placeholder("The archive is empty so far."), panels, leg);
  }
  function breakable(text) { return str(text).replace(/_/g, "_\u200b"); }

  function chartsSection() {
    const R = S.run.roofline || {};
    return section("kf-sec-progress", "Progress", null,
      h("div", { class: "kf-charts" },
        chartBox("kf-best-evals", "Best-so-far speedup by evaluation", bestChart("seq")),
        chartBox("kf-best-time", "Best-so-far speedup by wall time", bestChart("t")),
        chartBox("kf-verdicts", "Verdicts by status over time", verdictsChart()),
        chartBox("kf-roofline", isNum(R.flops_per_byte) ? "Roofline of the correct candidates" : "Achieved bandwidth of the correct candidates", rooflineChart())));
  }

  function topSection() {
    const finals = S.M.finals.slice().sort((a, b) => (isNum(b.median) ? b.median : -1) - (isNum(a.median) ? a.median : -1));
    const bestKey = S.M.best ? S.M.best.kernel + " " + JSON.stringify(S.M.best.config || {}) : null;
    const rows = finals.map((f, i) => {
      const isBest = bestKey !== null && f.kernel + " " + JSON.stringify(f.config || {}) === bestKey;
      return h("tr", { class: isBest ? "kf-best-row" : null },
        td(String(i + 1) + (isBest ? " \u2605" : ""), "kf-num"),
        td(klink(f.kernel, f.name || kernelName(f.kernel))),
        td(fmtConfig(f.config), "kf-mono"),
        td(fmtSpeed(Array.isArray(f.speedups) && f.speedups.length ? f.median : null), "kf-num kf-strong"),
        td(Array.isArray(f.speedups) && f.speedups.length ? f.speedups.map(x => isNum(x) ? x.toFixed(2) : DASH).join(", ") : DASH, "kf-mono"),
        td(fmtNum(f.min_ms), "kf-num"), td(fmtNum(f.time_ms), "kf-num"), td(fmtNum(f.max_ms), "kf-num"),
        td(fmtPct(f.roofline), "kf-num"),
        td(f.verified ? h("span", { class: "kf-yes", text: "\u2713 yes" }) : h("span", { class: "kf-no", text: "\u2717 no" })),
        td(isNum(f.runs) ? String(f.runs) : DASH, "kf-num"),
        td(f.device, "kf-small"));
    });
    return section("kf-sec-top", "Top candidates", "The archive's best kernels re-run on fresh inputs at the end of the run (final re-verification); the best is the verified one with the highest median speedup.",
      h("div", { id: "kf-top" }, finals.length ? table(["#", "kernel", "config", ["median", "median speedup over the baseline"], "speedups", ["min ms", "fastest run's median time"], ["median ms", "median of the runs' median times"], ["max ms", "slowest run's median time"], ["roofline", "fraction of the measured copy bandwidth"], "verified", "runs", "device"], rows)
        : placeholder(S.run.run && S.run.run.finished ? "No final re-verification was stored." : "The final re-verification comes at the end of the run.")));
  }

  function chainOf(id) {
    const out = [], seen = new Set();
    let cur = id;
    while (cur && !seen.has(cur) && out.length < 10000) {
      seen.add(cur);
      out.push(cur);
      const k = S.M.kernels[cur];
      cur = k ? k.parent : "";
    }
    return out.reverse();
  }
  function lineageTable(id) {
    const chain = chainOf(id);
    let prev = null;
    const rows = chain.map((kid, i) => {
      const k = S.M.kernels[kid];
      const p = k && S.M.proposals.get(k.proposal);
      const comps = p && Array.isArray(p.components) ? p.components : [];
      const muts = k && Array.isArray(k.mutations) ? k.mutations : [];
      const b = k ? k.best_speedup : null;
      const delta = isNum(b) && isNum(prev) ? b / prev : null;
      prev = isNum(b) ? b : prev;
      const change = [];
      if (muts.length) change.push(h("div", null, h("span", { class: "kf-tag-label", text: "mutations " }), muts.map(m => h("span", { class: "kf-tag", text: m }))));
      if (comps.length) change.push(h("div", null, h("span", { class: "kf-tag-label", text: "prompt " }), comps.map(c => h("span", { class: "kf-tag kf-tag-prompt", text: typeof c === "string" ? c : JSON.stringify(c) }))));
      return h("tr", { class: kid === id ? "kf-current" : null },
        td(String(i), "kf-num"),
        td(k ? h("span", null, klink(kid), h("div", { class: "kf-small kf-mono", text: shortId(kid) })) : h("span", { class: "kf-muted", text: shortId(kid) + " (not in this run)" })),
        td(k ? outcomeBadge(outcomeOf(k)) : DASH),
        td(k ? (k.origin || DASH) : DASH, "kf-small"),
        td(k ? (k.proposer || (p && p.proposer) || DASH) : DASH),
        td(change.length ? h("div", null, change) : DASH),
        td(k && k.model ? k.model : (p && p.model) || DASH, "kf-small"),
        td(fmtSpeed(b), "kf-num kf-strong"),
        td(delta === null ? DASH : (delta >= 1 ? "+" : "") + ((delta - 1) * 100).toFixed(0) + "%", "kf-num " + (delta === null ? "" : delta >= 1 ? "kf-up" : "kf-down")),
        td(p && isNum(p.cost) && p.cost > 0 ? fmtCost(p.cost) : DASH, "kf-num"));
    });
    return table(["step", "kernel", "outcome", "origin", "proposer", "mutations / prompt components", "model", ["best", "best speedup of its search evaluations"], ["vs parent", "best speedup against its parent's"], "cost"], rows, "kf-lineage-table");
  }
  function lineageBody() {
    const box = h("div", { id: "kf-lineage" });
    const id = S.open;
    if (!id) { box.appendChild(placeholder("No kernel yet.")); return box; }
    box.appendChild(h("h3", null, "Lineage of ", klink(id), id === bestKernelId() ? " (the best kernel)" : ""));
    box.appendChild(lineageTable(id));
    const best = bestKernelId();
    if (best && best !== id && S.M.kernels[best]) {
      box.appendChild(fold("lineage-best", h("span", null, "Lineage of the best kernel, ", h("b", { text: kernelName(best) })), true, lineageTable(best)));
    }
    return box;
  }
  function bestKernelId() {
    const M = S.M;
    return M.best ? M.best.kernel : (M.archiveBest ? M.archiveBest.kernel : null);
  }

  function genealogyChart() {
    const M = S.M;
    const ids = Object.keys(M.kernels);
    if (!ids.length) return { el: placeholder("No kernel yet."), setOpen() {} };
    const depth = new Map();
    const depthOf = id => {
      const stack = [];
      let cur = id;
      const onPath = new Set();
      while (cur && M.kernels[cur] && !depth.has(cur) && !onPath.has(cur)) { onPath.add(cur); stack.push(cur); cur = M.kernels[cur].parent; }
      let d = cur && depth.has(cur) ? depth.get(cur) : -1;
      while (stack.length) { d += 1; depth.set(stack.pop(), d); }
      return depth.get(id);
    };
    const order = ids.slice().sort((a, b) => {
      const pa = M.kernels[a].proposal, pb = M.kernels[b].proposal;
      const na = isNum(pa) ? pa : -1, nb = isNum(pb) ? pb : -1;
      return na - nb || str(M.kernels[a].name).localeCompare(str(M.kernels[b].name)) || (a < b ? -1 : 1);
    });
    const cols = [];
    for (const id of order) { const d = depthOf(id); (cols[d] = cols[d] || []).push(id); }
    const maxRows = Math.max(...cols.map(c => (c ? c.length : 0)));
    const colW = Math.max(18, Math.min(90, 1080 / Math.max(1, cols.length)));
    const rowH = Math.max(7, Math.min(24, 560 / Math.max(1, maxRows)));
    const rad = Math.max(2.5, Math.min(6, Math.min(colW, rowH) * 0.38));
    const padX = 20, padY = 16;
    const W = Math.ceil(padX * 2 + (cols.length - 1) * colW), H = Math.ceil(padY * 2 + (maxRows - 1) * rowH);
    const pos = new Map();
    cols.forEach((c, d) => (c || []).forEach((id, r) => pos.set(id, [padX + d * colW, padY + r * rowH])));
    const svg = s("svg", { class: "kf-genealogy-svg", width: Math.max(W, 200), height: Math.max(H, 40), viewBox: "0 0 " + Math.max(W, 200) + " " + Math.max(H, 40), role: "img", "aria-label": "genealogy of the run's kernels" });
    let d = "";
    const edgeOf = id => {
      const k = M.kernels[id], pp = k && pos.get(k.parent), cp = pos.get(id);
      if (!pp || !cp) return "";
      const mx = (pp[0] + cp[0]) / 2;
      return "M" + r1(pp[0]) + " " + r1(pp[1]) + "C" + r1(mx) + " " + r1(pp[1]) + " " + r1(mx) + " " + r1(cp[1]) + " " + r1(cp[0]) + " " + r1(cp[1]);
    };
    for (const id of ids) d += edgeOf(id);
    svg.appendChild(s("path", { class: "kf-edges", d }));
    const hl = s("g", { class: "kf-highlight" });
    svg.appendChild(hl);
    const nodes = s("g", { class: "kf-nodes" });
    const counts = {};
    for (const id of order) {
      const k = M.kernels[id], p = pos.get(id), o = outcomeOf(k);
      counts[o] = (counts[o] || 0) + 1;
      nodes.appendChild(s("circle", { cx: r1(p[0]), cy: r1(p[1]), r: o === "newbest" ? rad * 1.25 : rad, class: "kf-node kf-open o-" + o, fill: OUTCOME_COLOUR[o], data: { kernel: id } },
        s("title", { text: str(k.name) + " (" + shortId(id) + ")\n" + outcomeLabel(o) + (isNum(k.best_speedup) ? ", best " + fmtSpeed(k.best_speedup) : "") + "\n" + (k.origin || "") + (isNum(k.proposal) && k.proposal >= 0 ? "\nproposal " + k.proposal : "") })));
    }
    svg.appendChild(nodes);
    const setOpen = id => {
      hl.replaceChildren();
      if (!id || !pos.has(id)) return;
      const chain = chainOf(id);
      let hd = "";
      for (const c of chain) hd += edgeOf(c);
      hl.appendChild(s("path", { class: "kf-edges-open", d: hd }));
      const p = pos.get(id);
      hl.appendChild(s("circle", { class: "kf-ring", cx: r1(p[0]), cy: r1(p[1]), r: rad + 4 }));
    };
    setOpen(S.open);
    const wrap = h("div", { class: "kf-scroll kf-genealogy-wrap", data: { scrollKey: "genealogy" } }, svg);
    const leg = legend(OUTCOMES.filter(([k]) => counts[k]).map(([k, label]) => [OUTCOME_COLOUR[k], label + " " + counts[k], "kf-dot" + (k === "pending" || k === "nothing" ? " kf-hollow" : "")]));
    return { el: [wrap, leg, h("p", { class: "kf-note", text: "Columns: generations from the root; rows: proposal order. " + plural(ids.length, "kernel") + ", " + (cols.length) + " generations." })], setOpen };
  }

  function lineageSection() {
    const g = genealogyChart();
    S.genealogy = g;
    return section("kf-sec-lineage", "Lineage", "Where the open kernel came from, and the run's whole family tree; click a node to open that kernel.",
      h("div", { id: "kf-lineage-box" }, lineageBody()),
      h("figure", { class: "kf-figure kf-wide" }, h("figcaption", { text: "Genealogy" }), h("div", { id: "kf-genealogy", class: "kf-chart-box" }, g.el)));
  }

  function kernelSection() {
    return section("kf-sec-kernel", "Kernel", null, h("div", { id: "kf-kernel", class: "kf-kernel" }, placeholder("No kernel open.")));
  }

  // ---------------------------------------------------------------- the kernel view
  function splitLines(text) {
    const lines = str(text).split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
    return lines;
  }
  // Myers' O(ND) line diff; null when the files differ by more than maxD lines.
  function lineDiff(a, b, maxD) {
    let pre = 0;
    while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
    let ea = a.length, eb = b.length;
    while (ea > pre && eb > pre && a[ea - 1] === b[eb - 1]) { ea--; eb--; }
    const ids = new Map();
    const intern = l => { let v = ids.get(l); if (v === undefined) { v = ids.size; ids.set(l, v); } return v; };
    const A = a.slice(pre, ea).map(intern), B = b.slice(pre, eb).map(intern);
    const N = A.length, M = B.length;
    const ops = [];
    for (let i = 0; i < pre; i++) ops.push([" ", i, i]);
    if (N || M) {
      const MAX = Math.min(N + M, maxD);
      const off = MAX + 1;
      const V = new Int32Array(2 * MAX + 3);
      const trace = [];
      let found = -1;
      for (let d = 0; d <= MAX && found < 0; d++) {
        trace.push(V.slice(off - d - 1, off + d + 2));
        for (let k = -d; k <= d; k += 2) {
          let x = (k === -d || (k !== d && V[off + k - 1] < V[off + k + 1])) ? V[off + k + 1] : V[off + k - 1] + 1;
          let y = x - k;
          while (x < N && y < M && A[x] === B[y]) { x++; y++; }
          V[off + k] = x;
          if (x >= N && y >= M) { found = d; break; }
        }
      }
      if (found < 0) return null;
      const mid = [];
      let x = N, y = M;
      for (let d = found; d > 0; d--) {
        const T = trace[d], base = -d - 1;
        const at = k => T[k - base];
        const k = x - y;
        const prevK = (k === -d || (k !== d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
        const px = at(prevK), py = px - prevK;
        while (x > px && y > py) { mid.push([" ", x - 1, y - 1]); x--; y--; }
        if (x === px) mid.push(["+", -1, y - 1]); else mid.push(["-", x - 1, -1]);
        x = px; y = py;
      }
      while (x > 0 && y > 0) { mid.push([" ", x - 1, y - 1]); x--; y--; }
      mid.reverse();
      for (const [t, i, j] of mid) ops.push([t, i < 0 ? -1 : i + pre, j < 0 ? -1 : j + pre]);
    }
    for (let i = 0; i < a.length - ea; i++) ops.push([" ", ea + i, eb + i]);
    return ops;
  }
  function diffView(parentSrc, src) {
    const a = splitLines(parentSrc), b = splitLines(src);
    if (a.length + b.length > 60000) return placeholder("The files are too large to compare here (" + fmtInt(a.length) + " and " + fmtInt(b.length) + " lines).");
    const ops = lineDiff(a, b, 1500);  // the work and memory grow with the square of this
    if (!ops) return placeholder("The files differ too much for a line diff here (over 1,500 lines added or removed).");
    let adds = 0, dels = 0;
    for (const o of ops) { if (o[0] === "+") adds++; else if (o[0] === "-") dels++; }
    if (!adds && !dels) return placeholder("Identical to its parent.");
    const ctx = 3, show = new Uint8Array(ops.length);
    ops.forEach((o, i) => { if (o[0] !== " ") for (let j = Math.max(0, i - ctx); j <= Math.min(ops.length - 1, i + ctx); j++) show[j] = 1; });
    const rows = [];
    let i = 0;
    while (i < ops.length) {
      if (!show[i]) {
        let j = i;
        while (j < ops.length && !show[j]) j++;
        rows.push(h("tr", { class: "kf-diff-gap" }, h("td", { colspan: "3", text: "\u22ef " + plural(j - i, "unchanged line") })));
        i = j;
        continue;
      }
      const [t, ai, bi] = ops[i];
      const text = t === "+" ? b[bi] : a[ai];
      rows.push(h("tr", { class: t === "+" ? "kf-add" : t === "-" ? "kf-del" : "kf-ctx" },
        h("td", { class: "kf-ln", text: ai >= 0 ? String(ai + 1) : "" }),
        h("td", { class: "kf-ln", text: bi >= 0 ? String(bi + 1) : "" }),
        h("td", { class: "kf-code-line" }, h("span", { class: "kf-sign", text: t === " " ? " " : t }), text)));
      i++;
    }
    return h("div", null,
      h("p", { class: "kf-note" }, h("span", { class: "kf-up", text: "+" + adds }), " ", h("span", { class: "kf-down", text: "\u2212" + dels }), " lines against the parent"),
      h("div", { class: "kf-scroll kf-diff-wrap", data: { scrollKey: "diff" } }, h("table", { class: "kf-diff" }, h("tbody", null, rows))));
  }
  function sourceView(src) {
    const lines = splitLines(src);
    const nums = lines.map((_, i) => i + 1).join("\n");
    return h("div", { class: "kf-code kf-scroll", data: { scrollKey: "source" } },
      h("pre", { class: "kf-gutter", "aria-hidden": "true", text: nums }),
      h("pre", { id: "kf-kernel-source", class: "kf-source", text: str(src) }));
  }

  function evaluationsTable(evs) {
    const rows = evs.map(e => h("tr", { class: "st-" + str(e.status) },
      td(isNum(e.seq) ? "#" + e.seq : DASH, "kf-num"),
      td(e.purpose),
      td(fmtConfig(e.config), "kf-mono"),
      td(statusBadge(e.status)),
      td(e.reason ? e.reason : DASH, "kf-reason"),
      td(timeSpread(e), "kf-num"),
      td(isNum(e.runs) ? String(e.runs) : DASH, "kf-num"),
      td(fmtSpeed(e.speedup), "kf-num kf-strong"),
      td(fmtNum(e.gbs), "kf-num"),
      td(fmtPct(e.roofline), "kf-num"),
      td(fmtNum(e.max_abs_err), "kf-num"),
      td(fmtNum(e.max_rel_err), "kf-num"),
      td(fmtNum(e.bad_ratio), "kf-num"),
      td(isNum(e.nan_count) ? fmtInt(e.nan_count) : DASH, "kf-num"),
      td(e.compared === undefined ? DASH : e.compared ? "yes" : "no"),
      td(cellText(e.cell), "kf-small", cellLongText(e.cell)),
      td(fmtMs(e.baseline_ms), "kf-num"),
      td(e.bench_sizes || DASH),
      td(Array.isArray(e.hints) && e.hints.length ? e.hints.join("; ") : DASH, "kf-small"),
      td(phases(e.phase_ms), "kf-small"),
      td(e.device, "kf-small"),
      td(e.at ? String(e.at).replace("T", " ").replace("Z", "") : DASH, "kf-small")));
    return table(["#", "purpose", "config", "status", "reason", ["time", "median (min\u2013max) of the timed runs"], "runs", "speedup", "GB/s", ["roofline", "fraction of the measured copy bandwidth"],
      "max abs err", "max rel err", ["bad ratio", "fraction of outputs out of tolerance"], "NaNs", ["compared", "whether the outputs were compared with the reference"], "cell", ["baseline", "the baseline's median time beside it"], "sizes", "hints", ["phases", "milliseconds per phase"], "device", "at"], rows, "kf-evals");
  }
  function timeSpread(e) {
    if (!isNum(e.time_ms)) return DASH;
    return fmtMs(e.time_ms) + (isNum(e.min_ms) || isNum(e.max_ms) ? " (" + fmtNum(e.min_ms) + "\u2013" + fmtNum(e.max_ms) + ")" : "");
  }
  function phases(p) {
    if (!p || typeof p !== "object") return DASH;
    const keys = Object.keys(p);
    if (!keys.length) return DASH;
    return keys.map(k => k + " " + fmtNum(p[k])).join(", ");
  }
  function compileLogs(evs, id) {
    const groups = new Map();
    for (const e of evs) {
      const log = str(e.compile_log);
      if (!log.trim()) continue;
      if (!groups.has(log)) groups.set(log, []);
      groups.get(log).push(e);
    }
    if (!groups.size) return null;
    let n = 0;
    return h("div", { class: "kf-logs" }, h("h4", { text: "Compile logs" }),
      [...groups.entries()].map(([log, list]) => {
        n++;
        const which = list.slice(0, 12).map(e => "#" + e.seq + " " + fmtConfig(e.config)).join(", ") + (list.length > 12 ? ", \u2026" : "");
        const bad = list.some(e => e.status === "compile_error");
        return fold("log-" + id + "-" + n, h("span", null, bad ? statusBadge("compile_error") : null, " " + plural(list.length, "evaluation") + ": " + which + " \u00b7 " + plural(splitLines(log).length, "line")), bad && groups.size <= 3,
          h("pre", { class: "kf-log", text: log }));
      }));
  }
  function proposalView(det, id) {
    const p = det.proposal;
    if (!p || typeof p !== "object") return null;
    const req = p.request && typeof p.request === "object" ? p.request : {};
    const target = req.target && typeof req.target === "object" ? req.target : null;
    const outcome = p.outcome && typeof p.outcome === "object" ? p.outcome : {};
    const trail = p.trail && typeof p.trail === "object" ? p.trail : {};
    const parts = [];
    parts.push(kv([
      ["proposal", isNum(p.index) ? "#" + p.index : p.index],
      ["state", p.state],
      ["proposer", p.proposer || req.by],
      ["origin", p.origin],
      ["mutations", Array.isArray(p.mutations) && p.mutations.length ? p.mutations.join(", ") : DASH],
      ["notes", p.notes ? h("span", { class: "kf-pre-line", text: p.notes }) : DASH],
      ["target cell", target ? (Array.isArray(target.cell) ? cellLongText(target.cell) : DASH) + (target.description ? " \u2014 " + target.description : "") : undefined],
    ].concat(Object.keys(outcome).map(k => ["outcome: " + k, outcome[k]]))));
    const exchanges = Array.isArray(trail.exchanges) ? trail.exchanges : [];
    const messages = Array.isArray(trail.messages) ? trail.messages : [];
    const meta = trail.meta && typeof trail.meta === "object" ? trail.meta : null;
    if (trail.model || messages.length || exchanges.length) {
      const comps = Array.isArray(trail.components) ? trail.components : [];
      parts.push(h("h4", { text: "Model trail" }));
      parts.push(kv([
        ["model", trail.model],
        ["prompt components", comps.length ? h("span", null, comps.map(c => h("span", { class: "kf-tag kf-tag-prompt", text: typeof c === "string" ? c : JSON.stringify(c) }))) : DASH],
        ["prompt tokens", fmtInt(trail.prompt_tokens)],
        ["completion tokens", fmtInt(trail.completion_tokens)],
        ["cost", fmtCost(trail.cost)],
        ["repaired", trail.repaired === undefined ? undefined : trail.repaired],
        ["problems", Array.isArray(trail.problems) && trail.problems.length ? h("span", { class: "kf-pre-line", text: trail.problems.map(p => typeof p === "string" ? p : JSON.stringify(p)).join("\n") }) : undefined],
      ]));
      messages.forEach((m, i) => parts.push(fold("msg-" + id + "-" + i,
        h("span", null, h("b", { text: "prompt: " + (str(m && m.role) || "message") }), " \u00b7 " + fmtInt(str(m && m.content).length) + " characters"), false,
        h("pre", { class: "kf-message", text: str(m && m.content) }))));
      exchanges.forEach((x, i) => parts.push(exchangeView(x, "reply " + (i + 1), "rep-" + id + "-" + i, i === exchanges.length - 1)));
      if (meta) {
        const mx = Array.isArray(meta.exchanges) ? meta.exchanges : [];
        parts.push(h("h4", { text: "Meta-prompting" + (meta.component ? " (" + (typeof meta.component === "string" ? meta.component : JSON.stringify(meta.component)) + ")" : "") }));
        const rest = Object.keys(meta).filter(k => k !== "exchanges" && k !== "component");
        if (rest.length) parts.push(kv(rest.map(k => [k, meta[k]])));
        mx.forEach((x, i) => parts.push(exchangeView(x, "meta reply " + (i + 1), "meta-" + id + "-" + i, false)));
      }
    }
    // Whatever else a proposer kept in its trail (another proposer's figures), as it is.
    const known = ["model", "components", "messages", "exchanges", "meta", "cost", "prompt_tokens", "completion_tokens", "repaired", "problems"];
    const other = Object.keys(trail).filter(k => !known.includes(k));
    if (other.length) {
      parts.push(h("h4", { text: "Proposer's trail" }));
      parts.push(kv(other.map(k => [k, trail[k]])));
    }
    return h("div", { class: "kf-proposal" }, h("h4", { text: "Proposal" }), parts);
  }
  function exchangeView(x, label, key, open) {
    x = x && typeof x === "object" ? x : {};
    const bits = [x.model, fmtInt(x.prompt_tokens) + " + " + fmtInt(x.completion_tokens) + " tokens", fmtCost(x.cost)];
    if (x.finish_reason) bits.push(x.finish_reason);
    if (isNum(x.seconds)) bits.push(fmtSeconds(x.seconds));
    if (x.ok === false) bits.push("failed");
    return fold(key, h("span", null, h("b", { text: label }), " \u00b7 " + bits.filter(Boolean).join(" \u00b7 ")), open,
      x.error ? h("p", { class: "kf-no", text: str(x.error) }) : null,
      h("pre", { class: "kf-message", text: str(x.reply) }));
  }

  function parentSourceOf(det) {
    if (typeof det.parent_source === "string") return det.parent_source;
    const pd = det.parent && S.details[det.parent];
    return pd && typeof pd.source === "string" ? pd.source : null;
  }

  function fillKernel(id, det, note, opts) {
    const panel = D.getElementById("kf-kernel");
    if (!panel) return;
    const saved = (opts && opts.noSave) || !panel.hasAttribute("data-kernel") ? null : saveView(panel);
    if (saved && panel.getAttribute("data-kernel") !== id) saved.scrolls.clear();  // another kernel: its code from the top
    const k = S.M.kernels[id] || {};
    const parent = det && det.parent !== undefined ? det.parent : k.parent;
    const children = Object.keys(S.M.kernels).filter(c => S.M.kernels[c].parent === id);
    const body = [];
    body.push(h("div", { class: "kf-kernel-head" },
      h("h3", { text: str((det && det.name) || k.name) || shortId(id) }),
      outcomeBadge(outcomeOf(S.M.kernels[id])),
      badge(str((det && det.language) || k.language) || "?", "kf-lang"),
      id === bestKernelId() ? badge("best", "kf-done") : null));
    body.push(kv([
      ["id", h("code", { text: id })],
      ["origin", k.origin || (det && det.proposal && det.proposal.origin) || DASH],
      ["parent", parent ? klink(parent) : "none (a root)"],
      ["children", children.length ? h("span", { class: "kf-children" }, children.slice(0, 30).map(c => klink(c)), children.length > 30 ? " \u2026 " + (children.length - 30) + " more" : "") : DASH],
      ["proposer", k.proposer || DASH],
      ["model", k.model || DASH],
      ["best speedup", fmtSpeed(k.best_speedup)],
      ["evaluations", isNum(k.evaluations) ? fmtInt(k.evaluations) : DASH],
      ["state", k.state || DASH],
    ], "kf-kv-wide"));
    if (note) body.push(h("p", { class: "kf-note", text: note }));
    if (!det) {
      body.push(placeholder(S.mode === "report" ? "This report holds no details for this kernel." : "Loading the kernel's details\u2026"));
      body.push(h("pre", { id: "kf-kernel-source", class: "kf-source", hidden: true }));
    } else {
      const ps = parentSourceOf(det);
      body.push(h("h4", { text: "Changes against its parent" }));
      body.push(h("div", { id: "kf-kernel-diff" },
        !det.parent ? placeholder("No parent: a root kernel.") : ps === null ? placeholder("The parent's source is not available.") : diffView(ps, det.source)));
      body.push(fold("source", h("b", { text: "Source (" + plural(splitLines(det.source).length, "line") + ")" }), true, sourceView(det.source)));
      const evs = Array.isArray(det.evaluations) ? det.evaluations : [];
      body.push(h("h4", { text: "Evaluations (" + evs.length + ")" }));
      body.push(evs.length ? evaluationsTable(evs) : placeholder("Not evaluated."));
      body.push(compileLogs(evs, id));
      body.push(proposalView(det, id));
    }
    panel.replaceChildren(...body.filter(Boolean));
    if (det) panel.setAttribute("data-kernel", id); else panel.removeAttribute("data-kernel");
    restoreView(saved, panel);
  }

  // Opens a kernel: the lineage, the genealogy's highlight and the kernel view follow it.
  function openKernel(id, opts) {
    opts = opts || {};
    if (!id) return;
    const changed = id !== S.open;
    S.open = id;
    if (changed) {
      try { history.replaceState(null, "", "#k=" + encodeURIComponent(id)); } catch (e) { /* file: URLs may refuse */ }
      const box = D.getElementById("kf-lineage-box");
      if (box) box.replaceChildren(lineageBody());
      if (S.genealogy) S.genealogy.setOpen(id);
      for (const c of D.querySelectorAll(".kf-cell.open")) c.classList.remove("open");
      for (const c of D.querySelectorAll(".kf-cell.filled")) if (c.dataset.kernel === id) c.classList.add("open");
    }
    showDetail(id, changed);
    if (opts.scroll) {
      const sec = D.getElementById("kf-sec-kernel");
      if (sec) sec.scrollIntoView({ block: "start" });
    }
  }
  function showDetail(id, changed) {
    const det = S.details[id];
    if (det) { fillKernel(id, det); markReady(); return Promise.resolve(); }
    if (S.mode !== "serve") { fillKernel(id, null); markReady(); return Promise.resolve(); }
    if (changed || !D.querySelector("#kf-kernel[data-kernel]")) fillKernel(id, null);
    return fetchDetail(id).then(d => {
      if (S.open === id) fillKernel(id, d);
      clearError("kernel");
    }, e => {
      if (S.open === id) {
        showError("kernel", "Could not load kernel " + shortId(id) + ": " + e.message);
        fillKernel(id, null, "Its details could not be loaded.");
      }
    }).finally(markReady);
  }
  function fetchDetail(id) {
    if (!S.fetching[id]) {
      S.fetching[id] = getJson("/api/runs/" + encodeURIComponent(S.runName) + "/kernels/" + encodeURIComponent(id))
        .then(d => { S.details[id] = d; return d; })
        .finally(() => { delete S.fetching[id]; });
    }
    return S.fetching[id];
  }

  // ---------------------------------------------------------------- whole-page rendering
  function saveView(root) {
    if (!S.rendered) return null;  // nothing drawn yet: reading the layout would only cost time
    const r = root || D;
    const folds = new Map();
    for (const d of r.querySelectorAll("details[data-key]")) folds.set(d.dataset.key, d.open);
    const scrolls = new Map();
    for (const e of r.querySelectorAll("[data-scroll-key]")) scrolls.set(e.dataset.scrollKey, [e.scrollLeft, e.scrollTop]);
    return { x: scrollX, y: scrollY, folds, scrolls };
  }
  function restoreView(v, root) {
    if (!v) return;
    const r = root || D;
    for (const d of r.querySelectorAll("details[data-key]")) if (v.folds.has(d.dataset.key)) d.open = v.folds.get(d.dataset.key);
    for (const e of r.querySelectorAll("[data-scroll-key]")) {
      const p = v.scrolls.get(e.dataset.scrollKey);
      if (p) { e.scrollLeft = p[0]; e.scrollTop = p[1]; }
    }
    if (scrollX !== v.x || scrollY !== v.y) window.scrollTo(v.x, v.y);
  }

  function renderRun() {
    const saved = saveView();
    const app = D.getElementById("kf-app");
    const info = S.run.run || {};
    D.title = (info.name ? info.name + " \u00b7 " : "") + "KernelFoundry";
    const title = D.getElementById("kf-title");
    if (title) title.textContent = str(info.task);
    if (!S.open || !S.M.kernels[S.open]) S.open = defaultKernel();
    // How many evaluations are drawn: a test watches it grow while a run is going.
    D.body.dataset.evaluations = String(Array.isArray(S.run.evaluations) ? S.run.evaluations.length : 0);
    app.replaceChildren(headerSection(), heatmapSection(), chartsSection(), topSection(), lineageSection(), kernelSection());
    const id = S.open;
    const cached = id && (S.details[id] || S.mode !== "serve");
    if (cached) fillKernel(id, S.details[id] || null, null, { noSave: true });
    restoreView(saved);  // once, after the kernel view is drawn: one layout, not several
    paintLive();
    S.rendered = true;
    if (id && !cached) return showDetail(id, true);
    markReady();
    return Promise.resolve();
  }
  function paintLive() {
    const live = D.getElementById("kf-live");
    if (!live) return;
    if (S.mode === "report") { live.textContent = "report"; live.className = "kf-live"; return; }
    const fin = S.run && S.run.run && S.run.run.finished;
    const at = S.lastUpdate ? S.lastUpdate.toLocaleTimeString() : "";
    live.textContent = (fin ? "finished" : "live") + (at ? " \u00b7 updated " + at : "");
    live.className = "kf-live " + (fin ? "kf-live-done" : "kf-live-on");
  }

  function kernelFromHash() {
    const m = /^#k=(.+)$/.exec(location.hash || "");
    if (!m) return null;
    try { return decodeURIComponent(m[1]); } catch (e) { return null; }
  }

  function setRun(run) {
    S.run = run;
    S.M = derive(run);
  }

  // ---------------------------------------------------------------- modes
  function startReport(data) {
    S.mode = "report";
    S.details = data.details && typeof data.details === "object" ? data.details : {};
    if (!data.run || typeof data.run !== "object") {
      D.getElementById("kf-app").replaceChildren(placeholder("This report holds no run."));
      showError("data", "The report's data has no run.");
      markReady();
      return;
    }
    setRun(data.run);
    const fromHash = kernelFromHash();
    S.open = fromHash && S.M.kernels[fromHash] ? fromHash : defaultKernel();
    renderRun();
  }

  function startRun(name) {
    S.mode = "serve";
    S.runName = name;
    const home = D.getElementById("kf-home");
    if (home) home.setAttribute("href", "/");
    const fromHash = kernelFromHash();
    if (fromHash) S.open = fromHash;
    loadRun().then(() => clearError("run"), e => {
      showError("run", "Could not load run " + name + ": " + e.message);
      if (!S.rendered) D.getElementById("kf-app").replaceChildren(placeholder("No run to show yet; retrying every 10 seconds."));
      markReady();
    }).finally(schedulePoll);
  }
  async function loadRun() {
    const run = await getJson("/api/runs/" + encodeURIComponent(S.runName));
    // Evaluations may have landed: every detail is fetched again, but the open kernel's old one
    // is drawn meanwhile so that the page keeps its height and scroll position.
    const old = S.open && S.details[S.open] ? { id: S.open, det: S.details[S.open] } : null;
    setRun(run);
    S.version = run.version;
    S.details = {};
    S.lastUpdate = new Date();
    if (old) S.details[old.id] = old.det;
    await renderRun();
    if (old && S.open === old.id) {
      delete S.details[old.id];
      await showDetail(old.id, false);
    }
  }
  function schedulePoll() {
    clearTimeout(S.pollTimer);
    const finished = S.run && S.run.run && S.run.run.finished;
    S.pollTimer = setTimeout(poll, !S.run || finished ? 10000 : 2000);
  }
  async function poll() {
    try {
      if (!S.run) await loadRun();
      else {
        const v = await getJson("/api/runs/" + encodeURIComponent(S.runName) + "/version");
        if (v.version !== S.version) await loadRun();
        else { S.lastUpdate = new Date(); paintLive(); }
      }
      clearError("run");
    } catch (e) {
      showError("run", "Could not update run " + S.runName + ": " + e.message);
    }
    schedulePoll();
  }

  function startIndex() {
    S.mode = "serve";
    const home = D.getElementById("kf-home");
    if (home) home.setAttribute("href", "/");
    D.title = "Runs \u00b7 KernelFoundry";
    const tick = () => getJson("/api/runs").then(d => { renderIndex(d); clearError("runs"); }, e => {
      showError("runs", "Could not load the list of runs: " + e.message);
      if (!S.rendered) D.getElementById("kf-app").replaceChildren(placeholder("No list of runs yet; retrying every 5 seconds."));
    }).finally(() => { markReady(); setTimeout(tick, 5000); });
    tick();
  }
  function renderIndex(d) {
    const runs = Array.isArray(d.runs) ? d.runs.slice() : [];
    runs.sort((a, b) => str(b.created_at).localeCompare(str(a.created_at)));
    const saved = saveView();
    const rows = runs.map(r => h("tr", null,
      td(h("a", { class: "kf-run-link", href: "/runs/" + encodeURIComponent(str(r.name)), data: { run: str(r.name) }, text: str(r.name) || "(unnamed)" })),
      td(r.task), td(r.device, "kf-small"), td(r.created_at ? String(r.created_at).replace("T", " ").replace("Z", "") : DASH, "kf-small"),
      td(fmtInt(r.evaluations), "kf-num"), td(fmtInt(r.proposals), "kf-num"), td(fmtSpeed(r.best_speedup), "kf-num kf-strong"),
      td(r.finished ? badge("finished", "kf-done") : badge("running", "kf-running"))));
    D.getElementById("kf-app").replaceChildren(section("kf-sec-runs", "Runs", (d.store ? "Store " + d.store + " \u00b7 " : "") + plural(runs.length, "run") + " \u00b7 refreshed every 5 seconds",
      runs.length ? table(["run", "task", "device", "created", "evaluations", "proposals", "best", "state"], rows, "kf-runs") : placeholder("The store has no runs yet.")));
    restoreView(saved);
    S.rendered = true;
    const live = D.getElementById("kf-live");
    if (live) { live.textContent = "updated " + new Date().toLocaleTimeString(); live.className = "kf-live kf-live-on"; }
  }

  // ---------------------------------------------------------------- events
  function onClick(ev) {
    const t = ev.target instanceof Element ? ev.target.closest(".kf-open[data-kernel]") : null;
    if (!t) return;
    if (ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
    ev.preventDefault();
    openKernel(t.getAttribute("data-kernel"), { scroll: true });
  }
  function onKey(ev) {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    const t = ev.target instanceof Element ? ev.target.closest(".kf-cell.filled[data-kernel]") : null;
    if (!t) return;
    ev.preventDefault();
    openKernel(t.getAttribute("data-kernel"), { scroll: true });
  }

  function main() {
    window.addEventListener("unhandledrejection", ev => {
      showError("script", "Internal error: " + (ev.reason && ev.reason.message || ev.reason));
    });
    D.addEventListener("click", onClick);
    D.addEventListener("keydown", onKey);
    window.addEventListener("hashchange", () => {
      const id = kernelFromHash();
      if (id && S.M && S.M.kernels[id] && id !== S.open) openKernel(id, { scroll: true });
    });
    let data;
    try {
      const holder = D.getElementById("kf-data");
      data = JSON.parse(holder ? holder.textContent : "");
    } catch (e) {
      D.getElementById("kf-app").replaceChildren(placeholder("No data."));
      showError("data", "The page holds no readable run data (" + e.message + ").");
      markReady();
      return;
    }
    if (!data || typeof data !== "object") data = {};
    try {
      if (data.mode === "serve" && data.run_name) startRun(String(data.run_name));
      else if (data.mode === "serve") startIndex();
      else startReport(data);
    } catch (e) {
      showError("script", "The page could not be drawn: " + (e && e.message || e));
      markReady();
      throw e;
    }
  }

  if (D.readyState === "loading") D.addEventListener("DOMContentLoaded", main);
  else main();
})();
