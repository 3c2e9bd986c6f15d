/**
 * The dashboard's script, served as `/app.js`: plain JavaScript, no framework, nothing from elsewhere.
 * It builds every node with `createElement` / `createElementNS` and sets words with
 * `textContent`, so nothing an agent prints, nor any name, becomes markup. It follows the loops by
 * server-sent events (`/events`, `/events/<change-id>`) and passes on the token of its own URL.
 */
export const pageScript = String.raw`(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var token = new URLSearchParams(window.location.search).get("token");
  var app = document.getElementById("app");
  var repo = document.getElementById("repo");
  var connection = document.getElementById("connection");
  var source = null;
  var retry = null;
  var ended = null;
  var current = { view: null, changeId: null, data: null };

  function withToken(url) {
    return token === null ? url : url + (url.indexOf("?") === -1 ? "?" : "&") + "token=" + encodeURIComponent(token);
  }

  // Every node is made here, its words set as text: nothing read from the server becomes markup.
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svg(tag, attributes) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attributes || {}).forEach(function (name) { node.setAttribute(name, String(attributes[name])); });
    return node;
  }

  function append(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return parent;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // Formats: durations as spool prints them (450ms, 12.3s, 3m12s, 1h02m).
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function duration(ms) {
    if (ms === null || ms === undefined || isNaN(ms)) return "–";
    if (ms < 1000) return Math.round(ms) + "ms";
    if (ms < 60000) return (ms / 1000).toFixed(1) + "s";
    var total = Math.round(ms / 1000);
    var hours = Math.floor(total / 3600);
    var minutes = Math.floor((total % 3600) / 60);
    return hours > 0 ? hours + "h" + pad(minutes) + "m" : minutes + "m" + pad(total % 60) + "s";
  }
  function money(usd) { return usd === null || usd === undefined ? "–" : "$" + (usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)); }
  function count(n) { return n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"); }
  function spend(s) {
    if (!s) return "–";
    var parts = [];
    if (s.costUsd !== null) parts.push(money(s.costUsd));
    parts.push(count(s.tokens) + " tokens");
    return parts.join(" · ");
  }
  function ago(iso) {
    var at = Date.parse(iso);
    if (isNaN(at)) return "–";
    var s = Math.max(0, Math.round((Date.now() - at) / 1000));
    if (s < 5) return "just now";
    if (s < 60) return s + "s ago";
    if (s < 3600) return Math.floor(s / 60) + "m ago";
    if (s < 86400) return Math.floor(s / 3600) + "h ago";
    return Math.floor(s / 86400) + "d ago";
  }
  function clock(iso) {
    var at = new Date(iso);
    return isNaN(at.getTime()) ? "–" : pad(at.getHours()) + ":" + pad(at.getMinutes()) + ":" + pad(at.getSeconds());
  }
  var LIVE = { running: true, waiting: true };
  // A running loop's time goes on between its writes of the state.
  function elapsedOf(loop) {
    if (loop.elapsedMs === null) return null;
    if (!LIVE[loop.status] || !loop.updatedAt) return loop.elapsedMs;
    var since = Date.now() - Date.parse(loop.updatedAt);
    return loop.elapsedMs + (isNaN(since) ? 0 : Math.max(0, since));
  }
  function words(status) { return String(status).replace(/-/g, " "); }
  function badge(status) { return el("span", "badge " + status, words(status)); }
  function ticking(node, loop, render) {
    node.setAttribute("data-tick", "1");
    node.__tick = function () { node.textContent = render(loop); };
    node.__tick();
    return node;
  }
  setInterval(function () {
    var nodes = app.querySelectorAll("[data-tick]");
    for (var i = 0; i < nodes.length; i++) if (nodes[i].__tick) nodes[i].__tick();
  }, 1000);

  function setConnection(stateName, label) {
    connection.className = "connection " + stateName;
    connection.querySelector(".label").textContent = label || stateName;
  }

  function setRepository(name) {
    if (name) {
      repositoryKnown = true;
      repo.textContent = name;
      document.title = (current.view === "detail" ? current.changeId + " · " : "") + name + " · spool";
    }
  }

  function tasks(t) {
    if (!t || t.total === 0) return el("span", "faint", "–");
    var wrap = el("span", "progress");
    var track = el("span", "bar-track");
    var fill = el("span", "bar-fill");
    fill.style.width = Math.round((100 * (t.complete + t.shelved)) / t.total) + "%";
    append(track, fill);
    append(wrap, track, el("span", "num", t.complete + "/" + t.total + (t.shelved > 0 ? " (" + t.shelved + " shelved)" : "")));
    return wrap;
  }

  // The list of loops.
  function renderList(data) {
    setRepository(data.repository);
    clear(app);
    var loops = data.loops;
    var counts = {};
    loops.forEach(function (loop) { counts[loop.status] = (counts[loop.status] || 0) + 1; });
    var summary = Object.keys(counts).sort().map(function (status) { return counts[status] + " " + words(status); });
    var heading = append(el("div", "heading"),
      append(el("div", "title"), el("h1", null, "Loops")),
      el("div", "summary", loops.length === 0 ? "" : summary.join(" · ") + " · " + loops.length + " in all"));
    append(app, heading);
    if (loops.length === 0) {
      append(app, append(el("div", "card"), append(el("div", "card-body"),
        el("p", "empty", "No loop has run in this repository yet. Start one with spool ralph --change <id>; it shows here as it runs."))));
      return;
    }
    var table = el("table", "loops");
    var head = el("tr");
    [["Change"], ["Status"], ["Iteration", "num"], ["Elapsed", "num"], ["Spend", "num"], ["Tasks"], ["Last outcome"], ["Branch", "hide-narrow"], ["Updated", "num hide-narrow"]]
      .forEach(function (column) { append(head, el("th", column[1] || null, column[0])); });
    append(table, append(el("thead"), head));
    var body = el("tbody");
    loops.forEach(function (loop) {
      var row = el("tr", "link");
      row.setAttribute("data-change", loop.changeId);
      var link = el("a", "change", loop.changeId);
      link.href = "#/" + encodeURIComponent(loop.changeId);
      var name = append(el("td"), link);
      if (loop.problem) append(name, el("div", "problem", loop.problem));
      append(row,
        name,
        append(el("td"), badge(loop.status)),
        el("td", "num", loop.maxIterations === null ? "–" : loop.iteration + " of " + loop.maxIterations),
        ticking(el("td", "num"), loop, function (l) { return duration(elapsedOf(l)); }),
        el("td", "num", spend(loop.spend)),
        append(el("td"), tasks(loop.tasks)),
        append(el("td"), loop.lastOutcome === null ? el("span", "faint", "–") : badge(loop.lastOutcome)),
        el("td", "mono muted hide-narrow", loop.branch || "–"),
        ticking(el("td", "num muted hide-narrow"), loop, function (l) { return l.updatedAt ? ago(l.updatedAt) : "–"; }));
      row.addEventListener("click", function (event) {
        if (event.target.tagName !== "A") window.location.hash = "#/" + encodeURIComponent(loop.changeId);
      });
      append(body, row);
    });
    append(app, append(el("div", "card"), append(table, body)));
  }

  function stat(label, value, sub) {
    var node = append(el("div", "card stat"), el("div", "label", label));
    append(node, typeof value === "string" ? el("div", "value", value) : value);
    if (sub) append(node, el("div", "sub", sub));
    return node;
  }

  // A chart: one bar per iteration, its height the value; an iteration's outcome colours its bar.
  function chart(name, title, iterations, value, format, empty) {
    var card = el("div", "card chart");
    card.setAttribute("data-chart", name);
    var known = iterations.filter(function (it) { return value(it) !== null; });
    var max = known.reduce(function (m, it) { return Math.max(m, value(it)); }, 0);
    var last = known.length > 0 ? value(known[known.length - 1]) : null;
    append(card, append(el("div", "card-head"), el("h2", null, title),
      el("span", "card-note", known.length === 0 ? "" : "last " + format(last) + " · max " + format(max))));
    var body = el("div", "card-body");
    append(card, body);
    if (known.length === 0) {
      append(body, el("div", "chart-empty", iterations.length === 0 ? "No iteration has ended yet." : empty));
      return card;
    }
    var slots = Math.max(iterations.length, 12);
    var chartSvg = svg("svg", { viewBox: "0 0 " + slots * 10 + " 100", preserveAspectRatio: "none", role: "img" });
    chartSvg.setAttribute("aria-label", title);
    iterations.forEach(function (it, i) {
      var v = value(it);
      if (v === null) return;
      var h = max > 0 ? Math.max(v > 0 ? 1.5 : 0, (v / max) * 96) : 0;
      var bar = svg("rect", { x: i * 10 + 1.5, y: 100 - h, width: 7, height: h, rx: 1 });
      bar.setAttribute("class", "bar " + it.outcome);
      var tip = svg("title");
      tip.textContent = "#" + it.iteration + " · " + format(v) + " · " + words(it.outcome);
      append(chartSvg, append(bar, tip));
    });
    append(chartSvg, svg("line", { x1: 0, y1: 100, x2: slots * 10, y2: 100, "class": "base" }));
    append(body, chartSvg, append(el("div", "axis"),
      el("span", null, "#" + iterations[0].iteration),
      el("span", null, iterations.length + " iteration" + (iterations.length === 1 ? "" : "s")),
      el("span", null, "#" + iterations[iterations.length - 1].iteration)));
    return card;
  }

  function checks(list) {
    if (!list || list.length === 0) return el("span", "faint", "–");
    var wrap = el("div", "checks");
    list.forEach(function (c) {
      var how = c.timedOut ? "timed out" : c.signal ? c.signal : "exit " + c.exitCode;
      append(wrap, el("span", "check " + (c.passed ? "passed" : "failed"),
        (c.passed ? "✓ " : "✗ ") + c.command + " · " + (c.passed ? "" : how + ", ") + duration(c.durationMs)));
    });
    return wrap;
  }

  function textCard(title, note, text, emptyText, className, pane) {
    var card = el("div", "card");
    append(card, append(el("div", "card-head"), el("h2", null, title), el("span", "card-note", note)));
    var pre = el("pre", "text " + (className || ""), text === "" ? emptyText : text);
    pre.setAttribute("data-pane", pane);
    append(card, pre);
    return card;
  }

  // One change's page.
  function renderDetail(detail, previous) {
    var outputBefore = app.querySelector("[data-pane=output]");
    var stick = !outputBefore || outputBefore.scrollTop + outputBefore.clientHeight >= outputBefore.scrollHeight - 8;
    var scrolled = outputBefore ? outputBefore.scrollTop : 0;
    clear(app);
    var loop = detail.loop;
    document.title = loop.changeId + " · " + (repo.textContent || "spool") + " · spool";
    var back = el("a", "back", "← All loops");
    back.href = "#/";
    append(app, back);
    append(app, append(el("div", "heading"),
      append(el("div", "title"), el("h1", "change-title", loop.changeId), badge(loop.status))));
    var meta = el("div", "meta");
    if (detail.run) append(meta, el("span", null, "run " + detail.run));
    if (loop.branch) append(meta, el("span", "mono", loop.branch));
    if (detail.startedAt) append(meta, el("span", null, "started " + clock(detail.startedAt)));
    if (loop.updatedAt) append(meta, ticking(el("span"), loop, function (l) { return "updated " + ago(l.updatedAt); }));
    append(app, meta);
    if (loop.problem) append(app, el("div", "callout", loop.problem));

    var iterationValue = el("div", "value", loop.maxIterations === null ? "–" : loop.iteration + " of " + loop.maxIterations);
    iterationValue.setAttribute("data-field", "iteration");
    var elapsedValue = ticking(el("div", "value"), loop, function (l) { return duration(elapsedOf(l)); });
    var t = loop.tasks;
    append(app, append(el("div", "stats"),
      stat("Iteration", iterationValue),
      stat("Elapsed", elapsedValue),
      stat("Spend", loop.spend && loop.spend.costUsd !== null ? money(loop.spend.costUsd) : loop.spend ? count(loop.spend.tokens) : "–",
        loop.spend && loop.spend.costUsd !== null ? count(loop.spend.tokens) + " tokens" : loop.spend ? "tokens" : "none reported"),
      stat("Tasks", t.total === 0 ? "–" : t.complete + " of " + t.total, t.total === 0 ? "no tasks.md" : t.shelved > 0 ? t.shelved + " shelved" : "complete"),
      stat("Last outcome", loop.lastOutcome === null ? el("div", "value faint", "–") : append(el("div", "value"), badge(loop.lastOutcome)))));

    if (detail.stopMessage) append(app, el("div", "callout" + (loop.status === "complete" ? " complete" : ""), detail.stopMessage));
    if (loop.status === "abandoned") append(app, el("div", "callout", "no process runs this loop: it was killed, or its machine stopped; go on with spool ralph --change " + loop.changeId + " --resume"));
    if (detail.resumeAt && loop.status === "waiting") append(app, el("div", "callout", "waiting for a usage limit to lift; resumes at " + clock(detail.resumeAt)));

    // The charts follow the current run; the table lists every run the history's end holds.
    var runs = detail.iterations.filter(function (it) { return it.run === detail.run; });
    var charted = runs.length > 0 ? runs : detail.iterations;
    var hasCost = charted.some(function (it) { return it.costUsd !== null; });
    var spendChart = hasCost
      ? chart("cost", "Cost per iteration", charted, function (it) { return it.costUsd; }, money, "")
      : chart("tokens", "Tokens per iteration", charted, function (it) { return it.tokens; }, count, "This agent reports no cost or tokens.");
    append(app, append(el("div", "charts"),
      chart("duration", "Duration per iteration", charted, function (it) { return it.durationMs; }, duration, ""),
      spendChart,
      chart("files", "Files changed per iteration", charted, function (it) { return it.changedFiles; }, count, "git reported no changes.")));

    var output = detail.output;
    var outputNote = output === null ? "" : "iteration " + output.iteration + (LIVE[loop.status] ? " · live" : "") + (output.truncated ? " · last 64 KiB" : "");
    var journal = detail.journal;
    append(app, append(el("div", "grid2"),
      textCard("Output", outputNote, output === null ? "" : output.text, "No output yet.", "output", "output"),
      textCard("Error journal", journal.truncated ? "last 32 KiB" : "errors.md", journal.text, "No failed iteration journaled.", "", "journal")));

    var table = el("table", "iterations");
    var head = el("tr");
    [["#", "num"], ["Outcome"], ["Started", "hide-narrow"], ["Duration", "num"], [hasCost ? "Cost" : "Tokens", "num"], ["Files", "num"], ["Commit"], ["Checks"]]
      .forEach(function (column) { append(head, el("th", column[1] || null, column[0])); });
    var body = el("tbody");
    detail.iterations.slice().reverse().forEach(function (it) {
      var row = el("tr");
      var number = el("td", "num", String(it.iteration));
      if (it.run !== detail.run) append(number, el("div", "faint mono", it.run));
      append(row, number,
        append(el("td"), badge(it.outcome)),
        el("td", "muted hide-narrow", clock(it.startedAt)),
        el("td", "num", duration(it.durationMs)),
        el("td", "num", hasCost ? money(it.costUsd) : count(it.tokens)),
        el("td", "num", count(it.changedFiles)),
        el("td", "mono muted", it.commit ? it.commit.slice(0, 8) : "–"),
        append(el("td"), checks(it.checks)));
      append(body, row);
    });
    var iterationsCard = append(el("div", "card section"),
      append(el("div", "card-head"), el("h2", null, "Iterations"), el("span", "card-note", detail.iterations.length + " recorded")));
    if (detail.iterations.length === 0) append(iterationsCard, append(el("div", "card-body"), el("p", "empty", "No iteration has ended yet.")));
    else append(iterationsCard, append(table, append(el("thead"), head), body));
    append(app, iterationsCard);

    var outputPane = app.querySelector("[data-pane=output]");
    outputPane.scrollTop = stick || previous === null ? outputPane.scrollHeight : scrolled;
  }

  function renderMissing(changeId) {
    clear(app);
    var back = el("a", "back", "← All loops");
    back.href = "#/";
    append(app, back, append(el("div", "card"), append(el("div", "card-body"),
      el("p", "empty", "No loop state for " + changeId + " (yet). This page shows it once a loop runs on it."))));
  }

  // Server-sent events: a snapshot at once, then one each time it changes.
  function listen(path, onData, onClosed) {
    if (source) source.close();
    if (retry) clearTimeout(retry);
    var es = new EventSource(withToken(path));
    source = es;
    es.onopen = function () { ended = null; setConnection("live"); };
    es.onmessage = function (event) {
      if (source !== es) return;
      setConnection("live");
      onData(JSON.parse(event.data));
    };
    // spool stopped serving, having sent the loops' last state: it stays shown, and says why.
    es.addEventListener("end", function (event) {
      if (source !== es) return;
      es.close();
      ended = event.data;
      setConnection("ended", ended);
    });
    es.onerror = function () {
      if (source !== es) return;
      setConnection(ended === null ? "reconnecting" : "ended", ended);
      // Closed for good (refused, or not found): look again in a while.
      if (es.readyState === 2) {
        if (onClosed) onClosed();
        retry = setTimeout(route, 3000);
      }
    };
  }

  function route() {
    var hash = window.location.hash;
    if (hash.indexOf("#/") === 0 && hash.length > 2) {
      var changeId = hash.slice(2);
      try { changeId = decodeURIComponent(changeId); } catch (e) { /* shown as it is: the server finds no such change */ }
      if (current.view !== "detail" || current.changeId !== changeId) {
        current = { view: "detail", changeId: changeId, data: null };
        clear(app);
        append(app, el("p", "loading", "Loading " + changeId + "…"));
      }
      listen("/events/" + encodeURIComponent(changeId), function (detail) {
        if (detail === null) return renderMissing(changeId);
        var previous = current.data;
        current.data = detail;
        renderDetail(detail, previous);
      }, function () { if (current.data === null) renderMissing(changeId); });
      fetchRepository();
    } else {
      current = { view: "list", changeId: null, data: null };
      listen("/events", function (data) { current.data = data; renderList(data); });
    }
  }

  // The detail's events carry no repository name: the list has it.
  var repositoryKnown = false;
  function fetchRepository() {
    if (repositoryKnown) return;
    fetch(withToken("/api/loops"), { headers: { accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) { if (data) { repositoryKnown = true; repo.textContent = data.repository; } })
      .catch(function () {});
  }

  window.addEventListener("hashchange", route);
  route();
})();
`
