// flowgate run center: live updates by server-sent events, no framework.
// A flow's page follows the flow's history stream; any other page
// follows /pulse, which sends the page's main part again when it changed.
// Text from the stream is set with textContent, never parsed as HTML;
// HTML comes only from the server's own escaping templates.
(function () {
  "use strict";
  var main = document.getElementById("main");
  if (!main) { return; }
  // drawn is main as the server last drew it, serialized by this
  // browser, or null once this script changed it in place: a redraw
  // that brings the same HTML leaves the page alone, so a link the reader
  // is about to click is not swapped out from under the pointer.
  var drawn = main.innerHTML.trim();

  // The server writes every time in UTC (<time datetime=… title="… UTC">);
  // local rewrites the text into the viewer's zone, leaving UTC on hover.
  var zoned = new Intl.DateTimeFormat("en-CA", { hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
  function local(root) {
    root.querySelectorAll("time[datetime]:not([data-local])").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) { return; }
      var p = {};
      zoned.formatToParts(d).forEach(function (x) { p[x.type] = x.value; });
      el.dataset.local = "";
      el.textContent = p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second + " " + p.timeZoneName;
    });
  }
  local(main);
  // Redraws replace main's HTML; each new <time> is rewritten as it comes.
  new MutationObserver(function () { local(main); }).observe(main, { childList: true, subtree: true });
  // A followed log keeps its newest lines in view as the pulse redraws it.
  function tail() {
    var log = main.querySelector("#log[data-follow]");
    if (log) { log.scrollTop = log.scrollHeight; window.scrollTo(0, document.body.scrollHeight); }
  }
  tail();
  new MutationObserver(tail).observe(main, { childList: true });

  // redrawn puts html in main unless it is what main already shows.
  // /pulse sends a page's main part as soon as it connects, and a flow
  // page redraws when its stream ends: both are usually what the server
  // drew a moment before.
  function redrawn(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    if (t.innerHTML.trim() === drawn) { return; }
    drawn = t.innerHTML.trim();
    main.innerHTML = html;
  }

  if (main.dataset.pulse) {
    var pulse = new EventSource("/pulse?page=" + encodeURIComponent(main.dataset.pulse));
    // body's data-live is "on" once the pulse has brought the page as
    // it stands.
    pulse.onmessage = function (e) { redrawn(e.data); document.body.dataset.live = "on"; };
    return;
  }
  if (!main.dataset.stream) { return; }

  var redrawing = null, again = null;
  // redraw fetches the page's main part again: tasks, steps, gate, status.
  // A call while a fetch is in flight gets one more fetch after it, shared
  // by every such call: the fetch in flight may have been answered before
  // the change that called for this one, and the last redraw (the one
  // after the flow ended) must show the end.
  function redraw() {
    if (redrawing) {
      again = again || redrawing.then(function () { again = null; return redraw(); });
      return again;
    }
    redrawing = fetch(location.pathname + "?part=main", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html !== null) { redrawn(html); } })
      .finally(function () { redrawing = null; });
    return redrawing;
  }

  function lastSeq() {
    var rows = main.querySelectorAll("#history tr[data-seq]");
    return rows.length ? rows[rows.length - 1].dataset.seq : "0";
  }

  function cell(text, cls) {
    var td = document.createElement("td");
    if (cls) { var c = document.createElement("code"); c.textContent = text; td.appendChild(c); } else { td.textContent = text; }
    return td;
  }

  // when is a history entry's time as the server draws it: a <time>
  // in UTC, which local then rewrites.
  function when(at) {
    var td = document.createElement("td");
    if (!at) { td.textContent = "—"; return td; }
    var utc = new Date(at).toISOString().replace("T", " ").replace(/\.\d+Z$/, "");
    var t = document.createElement("time");
    t.setAttribute("datetime", utc.replace(" ", "T") + "Z");
    t.title = utc + " UTC";
    t.textContent = utc + "Z";
    td.appendChild(t);
    return td;
  }

  // addEntry appends a history entry unless the page already has it.
  function addEntry(e) {
    var body = main.querySelector("#history tbody");
    if (!body || main.querySelector('#history tr[data-seq="' + e.seq + '"]')) { return; }
    drawn = null;
    var tr = document.createElement("tr");
    tr.dataset.seq = e.seq;
    tr.appendChild(cell(String(e.seq)));
    tr.appendChild(when(e.at));
    tr.appendChild(cell(e.kind, true));
    var td = cell(e.summary || "");
    if (e.by) {
      var by = document.createElement("span");
      by.className = "by";
      by.textContent = "by " + e.by;
      td.appendChild(document.createTextNode(" "));
      td.appendChild(by);
    }
    tr.appendChild(td);
    body.appendChild(tr);
  }

  // moveBar shows a progress entry on its task's bar.
  function moveBar(e) {
    var p = e.data && e.data.progress;
    if (!p || !e.task_id) { return false; }
    var bar = main.querySelector('progress[data-task="' + CSS.escape(e.task_id) + '"]');
    if (!bar) { return false; }
    drawn = null;
    if (typeof p.fraction === "number") {
      var pct = Math.round(p.fraction * 100);
      bar.value = pct;
      main.querySelector('[data-task-pct="' + CSS.escape(e.task_id) + '"]').textContent = pct + "%";
    }
    main.querySelector('[data-task-line="' + CSS.escape(e.task_id) + '"]').textContent =
      [p.phase, p.message].filter(Boolean).join(" ");
    return true;
  }

  // body's data-live says how the stream stands: on, or ended once the
  // flow has ended and the page was drawn from the whole history.
  var stream = new EventSource(main.dataset.stream + "?after=" + lastSeq());
  stream.onopen = function () { document.body.dataset.live = "on"; };
  stream.onmessage = function (m) {
    var e = JSON.parse(m.data);
    addEntry(e);
    if (e.kind !== "progress" || !moveBar(e)) { redraw(); }
  };
  stream.addEventListener("end", function () {
    stream.close();
    redraw().then(function () { document.body.dataset.live = "ended"; });
  });
})();

// The flow page's timeline (timeline.go). A progress entry moves a task's
// bar without redrawing the page, so a running attempt's timeline bar,
// which the server draws up to now, would stand still: after such a move
// the timeline alone is fetched again from the server, at most once a
// second. Every other entry redraws the whole page, timeline included.
(function () {
  "use strict";
  var main = document.getElementById("main");
  if (!main || !main.dataset.stream) { return; }
  var pending = null, last = 0;
  function refresh() {
    pending = null;
    last = Date.now();
    if (!main.querySelector("#timeline[data-live]")) { return; }
    fetch(location.pathname + "/timeline", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        var old = main.querySelector("#timeline");
        if (html !== null && old) { old.outerHTML = html; }
      });
  }
  new MutationObserver(function (records) {
    var moved = records.some(function (r) { return r.target.closest && r.target.closest(".task .bar"); });
    if (moved && !pending) { pending = setTimeout(refresh, Math.max(0, 1000 - (Date.now() - last))); }
  }).observe(main, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["value"] });
})();
