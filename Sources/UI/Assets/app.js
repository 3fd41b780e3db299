// faultline's web UI. Everything shown comes from the capture, so every string is put in
// the page as text (textContent), never as markup; the lane is an SVG image, where no
// script runs. Updates come over one WebSocket (/live); the server coalesces them, so the
// page only renders the newest state. After a reconnect the page says what it holds and
// the server sends only what is newer.
"use strict";
(function () {
  var ROW = 26, OVERSCAN = 10;
  var $ = function (id) { return document.getElementById(id); };
  var state = {
    socket: null, retry: 500, seq: -1, offset: 0, count: 60, total: 0, rows: [],
    selected: null, framesAfter: 0, kinds: [], nextAction: 1, laneVersion: -1, client: null,
    // Actions taken while the live socket is down, sent when it is back (at most
    // PENDING_LIMIT; past that an action is refused on the page, never dropped unsaid).
    pending: []
  };
  var PENDING_LIMIT = 16;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function send(message) {
    if (state.socket && state.socket.readyState === 1) state.socket.send(JSON.stringify(message));
  }
  // Text above the action buttons that live updates change (the connection's title and
  // facts, the intercept's state) goes in a box of fixed height (app.css: one line, or two
  // for the intercept's state), the whole text in its tooltip: were it to wrap onto
  // another line as it grows, every button below would move, and a click on its way
  // (a person's, or a test's) would land beside it.
  function line(id, text) {
    $(id).textContent = text;
    $(id).title = text;
  }
  function seconds(s) { return s < 60 ? s.toFixed(1) + " s" : s < 3600 ? (s / 60).toFixed(1) + " min" : (s / 3600).toFixed(1) + " h"; }
  function bytes(n) { return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KB" : (n / 1048576).toFixed(1) + " MB"; }

  // --- connection ---------------------------------------------------------------------
  function connect() {
    var socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live");
    state.socket = socket;
    socket.onopen = function () {
      state.retry = 500;
      // The page's link, readable from outside (the tests wait on it over DevTools):
      // sockets opened and dropped so far, and updates since the latest one opened.
      document.body.dataset.connects = (+(document.body.dataset.connects || 0) + 1);
      document.body.dataset.updatesSinceConnect = 0;
      $("link").textContent = "connected";
      $("link").className = "badge on";
      send({ type: "hello", filter: $("filter").value, offset: state.offset, count: state.count,
             selected: state.selected, frames_after: state.framesAfter });
      var pending = state.pending;
      state.pending = [];
      pending.forEach(send);
      if (pending.length) $("action-result").textContent = "sent…";
    };
    socket.onmessage = function (e) {
      var m;
      try { m = JSON.parse(e.data); } catch (err) { return; }
      if (m.type === "welcome") welcome(m);
      else if (m.type === "update") update(m);
      else if (m.type === "result") result(m);
    };
    socket.onclose = function () {
      document.body.dataset.drops = (+(document.body.dataset.drops || 0) + 1);
      $("link").textContent = "reconnecting…";
      $("link").className = "badge off";
      setTimeout(connect, state.retry);
      state.retry = Math.min(state.retry * 2, 8000);
    };
  }

  function welcome(m) {
    $("mode").textContent = m.mode + " · spec " + m.spec;
    document.body.dataset.mode = m.mode;
    state.kinds = m.fault_kinds || [];
    var select = $("fault-kind");
    while (select.firstChild) select.removeChild(select.firstChild);
    state.kinds.forEach(function (k) {
      var o = el("option", null, k.kind);
      o.value = k.kind;
      select.appendChild(o);
    });
    kindChosen();
    // Recorded captures cannot be acted on: no actions are offered.
    $("actions").hidden = m.mode !== "live";
  }

  // --- the list -------------------------------------------------------------------------
  function update(m) {
    state.seq = m.seq;
    document.body.dataset.updatesSinceConnect = +(document.body.dataset.updatesSinceConnect || 0) + 1;
    state.total = m.total;
    document.body.dataset.seq = m.seq;
    $("counts").textContent = m.total + " connection" + (m.total === 1 ? "" : "s") + " · " + seconds(m.now);
    if (m.skipped > 0) {
      $("skipped").hidden = false;
      $("skipped").textContent = m.skipped + " update" + (m.skipped === 1 ? "" : "s") + " skipped (the page fell behind)";
    }
    $("evicted").hidden = !m.evicted_rows;
    if (m.evicted_rows) $("evicted").textContent = m.evicted_rows + " older ended connections are no longer held";
    renderRows(m.offset, m.rows);
    if (m.selected) renderDetail(m.selected);
    if (m.intercept) renderIntercept(m.intercept);
  }

  // --- intercept: the selected connection's pause and held messages ----------------------
  // Items are added and removed by id, never redrawn, so an edit being typed survives
  // every update.
  function renderIntercept(x) {
    if (x.conn !== state.selected) return;
    var p = x.pause;
    line("intercept-state", p
      ? "paused" + (p.conn === null ? " (every connection)" : "") + ": holding messages" +
        (p.from ? " from the " + p.from : "") + (p.match ? " containing '" + p.match + "'" : "") +
        "; each is forwarded unchanged after " + p.timeout_s + " s undecided · " + x.held.length + " held"
      : (x.held.length ? x.held.length + " held" : "not paused"));
    $("detail").dataset.paused = p ? "yes" : "no";
    var list = $("held"), ids = {};
    x.held.forEach(function (h) { ids[h.id] = true; });
    Array.prototype.slice.call(list.children).forEach(function (li) { if (!ids[li.dataset.id]) li.remove(); });
    x.held.forEach(function (h) {
      if (list.querySelector('li[data-id="' + h.id + '"]')) return;
      list.appendChild(heldItem(h));
    });
  }

  function heldItem(h) {
    var li = el("li", "held");
    li.dataset.id = h.id;
    li.appendChild(el("div", "fmeta", "held #" + h.id + " · " + (h.from === "client" ? "client→server" : "server→client") +
      " · " + h.len + " B · since " + h.held_at_s.toFixed(3) + " s · forwarded unchanged at " + h.release_at_s.toFixed(3) + " s"));
    var text = el("textarea", "held-text");
    text.value = h.text !== undefined ? h.text : h.b64;
    text.dataset.b64 = h.text === undefined ? "yes" : "no";
    text.setAttribute("aria-label", "held message " + h.id);
    li.appendChild(text);
    var row = el("div", "action-row");
    [["forward", "forward"], ["edit", "send edited"], ["drop", "drop"]].forEach(function (b) {
      var button = el("button", "held-" + b[0], b[1]);
      button.type = "button";
      button.addEventListener("click", function () {
        var m = { action: "decide", held: h.id, decision: b[0] };
        if (b[0] === "edit") m[text.dataset.b64 === "yes" ? "b64" : "text"] = text.value;
        act(m);
      });
      row.appendChild(button);
    });
    li.appendChild(row);
    return li;
  }

  // A row's element is kept while its connection stays in the window and only its text is
  // brought up to date: a row replaced between a mouse press and its release takes no click
  // (updates come every 100 ms, a click lasts about as long).
  var COLUMNS = ["c-conn num", "c-client", "c-path", "c-ua", "c-state", "c-age num", "c-frames num", "c-bytes num", "c-findings num"];
  function renderRows(offset, rows) {
    var box = $("rows"), kept = {}, shown = {};
    $("spacer").style.height = (state.total * ROW) + "px";
    rows.forEach(function (r) { shown[r.conn] = true; });
    box.querySelectorAll(".row").forEach(function (row) {
      if (shown[row.dataset.conn]) kept[row.dataset.conn] = row; else row.remove();
    });
    rows.forEach(function (r, i) {
      var row = kept[r.conn];
      if (!row) {
        row = el("div");
        COLUMNS.forEach(function (c) { row.appendChild(el("span", c)); });
        row.addEventListener("click", function () { select(+row.dataset.conn); });
      }
      // In the list's order (after the spacer), moved only when out of place.
      if (box.children[i + 1] !== row) box.insertBefore(row, box.children[i + 1] || null);
      row.className = "row" + (r.open ? "" : " ended") + (r.conn === state.selected ? " sel" : "");
      row.style.top = ((offset + i) * ROW) + "px";
      row.dataset.conn = r.conn;
      row.dataset.state = r.state || "";
      var cells = row.children;
      [r.conn, r.client || "…", r.path, r.ua, r.state || "-", seconds(r.age), r.frames, bytes(r.bytes), r.findings || 0]
        .forEach(function (v, c) { cells[c].textContent = v === undefined || v === null ? "" : String(v); });
      cells[4].className = "c-state state state-" + (r.state || "none");
      row.title = (r.key || "") + (r.end ? " · " + r.end : "");
    });
  }

  function requestView() {
    var box = $("rows");
    var first = Math.max(0, Math.floor(box.scrollTop / ROW) - OVERSCAN);
    var count = Math.min(200, Math.ceil(box.clientHeight / ROW) + 2 * OVERSCAN);
    if (first === state.offset && count === state.count) return;
    state.offset = first;
    state.count = count;
    send({ type: "view", offset: first, count: count });
  }

  function select(conn) {
    state.selected = conn;
    state.framesAfter = 0;
    state.laneVersion = -1;
    while ($("frames").firstChild) $("frames").removeChild($("frames").firstChild);
    while ($("findings").firstChild) $("findings").removeChild($("findings").firstChild);
    while ($("held").firstChild) $("held").removeChild($("held").firstChild);
    $("intercept-state").textContent = "";
    $("action-result").hidden = true;
    $("detail").hidden = false;
    send({ type: "select", conn: conn, frame_filter: $("frame-filter").value });
  }

  // --- one connection -------------------------------------------------------------------
  function renderDetail(d) {
    var r = d.row;
    if (r.conn !== state.selected) return;
    state.client = r.client || null;
    line("d-title", "connection " + r.conn + (r.client ? " · " + r.client : ""));
    $("detail").dataset.state = r.state || "";
    // What changes first, so that a narrow window's ellipsis cuts the longest, steadiest parts.
    line("d-meta", ["state " + (r.state || "-"), r.open ? "open" : "ended" + (r.end ? " (" + r.end + ")" : ""),
      r.frames + " frames", bytes(r.bytes), d.key ? "key " + d.key : null, r.path ? "path " + r.path : null,
      r.ua ? "User-Agent " + r.ua : null].filter(Boolean).join(" · "));
    if (d.lane !== undefined && r.client) {
      state.laneVersion = d.lane;
      $("lane").src = "/lane.svg?client=" + encodeURIComponent(r.client) + "&v=" + d.lane;
    }
    if (d.findings) renderFindings(d.findings);
    $("frames-lost").hidden = !d.frames_lost;
    if (d.frames_lost) $("frames-lost").textContent = d.frames_lost + " earlier frames are no longer held";
    d.frames.forEach(function (f) { $("frames").appendChild(frameItem(f)); });
    state.framesAfter = d.frames_after;
  }

  function renderFindings(list) {
    var ul = $("findings");
    while (ul.firstChild) ul.removeChild(ul.firstChild);
    if (!list.length) ul.appendChild(el("li", "meta", "no findings"));
    list.forEach(function (f) {
      var li = el("li", "finding");
      li.dataset.rule = f.rule;
      li.appendChild(el("span", "sev-" + f.severity, f.severity + " "));
      li.appendChild(el("code", null, f.rule));
      li.appendChild(el("span", null, " at " + f.t.toFixed(3) + " s: " + f.message + (f.fault_note ? " (" + f.fault_note + ")" : "")));
      if (f.explain) li.appendChild(el("span", "explain", f.explain + (f.example ? " Example: " + f.example : "")));
      (f.evidence || []).forEach(function (e) {
        var a = el("a", "ev", "conn " + e.conn + " at " + e.t.toFixed(3) + " s: " + e.summary);
        a.addEventListener("click", function () { showEvidence(e.conn, e.t); });
        li.appendChild(el("br"));
        li.appendChild(a);
      });
      ul.appendChild(li);
    });
  }

  function showEvidence(conn, t) {
    if (conn !== state.selected) { select(conn); state.pendingEvidence = t; return; }
    markEvidence(t);
  }
  function markEvidence(t) {
    var best = null;
    $("frames").querySelectorAll("li").forEach(function (li) {
      li.classList.remove("hit");
      if (best === null || Math.abs(+li.dataset.t - t) < Math.abs(+best.dataset.t - t)) best = li;
    });
    if (best) { best.classList.add("hit"); best.scrollIntoView({ block: "center" }); }
  }

  function frameItem(f) {
    var li = el("li");
    li.dataset.t = f.t;
    li.dataset.n = f.n;
    var head = el("div", "fhead");
    head.appendChild(el("span", null, "#" + f.n + " " + f.t.toFixed(6) + " "));
    head.appendChild(el("span", "from-" + f.from, f.from === "client" ? "client→server" : "server→client"));
    var kind = { 0: "cont", 1: "text", 2: "binary", 8: "close", 9: "ping", 10: "pong" }[f.opcode] || ("op" + f.opcode);
    var bits = [" " + kind, f.len + " B"];
    if (f.event) bits.push(f.event);
    if (f.close_code !== undefined) bits.push("close " + f.close_code + (f.close_reason ? " '" + f.close_reason + "'" : ""));
    if (f.action !== "forwarded") bits.push(f.action);
    if (f.fault) bits.push("fault " + f.fault);
    if (f.cut) bits.push("(payload cut)");
    head.appendChild(el("span", "fmeta", bits.join(" · ")));
    li.appendChild(head);
    var body = payloadText(f);
    if (body) li.appendChild(el("pre", "payload", body));
    return li;
  }

  function payloadText(f) {
    if (f.text !== undefined) {
      if (f.opcode !== 1) return f.text;
      try { return JSON.stringify(JSON.parse(f.text), null, 2); } catch (e) { return f.text; }
    }
    if (!f.base64 || f.opcode === 8) return "";
    var raw = atob(f.base64), out = [];
    for (var i = 0; i < raw.length && i < 512; i += 16) {
      var hex = [], asc = "";
      for (var j = i; j < i + 16 && j < raw.length; j++) {
        var c = raw.charCodeAt(j);
        hex.push((c < 16 ? "0" : "") + c.toString(16));
        asc += c >= 32 && c < 127 ? raw[j] : ".";
      }
      out.push(("000" + i.toString(16)).slice(-4) + "  " + hex.join(" ") + "  " + asc);
    }
    return out.join("\n");
  }

  // --- actions --------------------------------------------------------------------------
  function act(message) {
    message.type = "action";
    message.id = state.nextAction++;
    message.conn = state.selected;
    var box = $("action-result");
    box.hidden = false;
    box.className = "result";
    if (state.socket && state.socket.readyState === 1) {
      box.textContent = "sent…";
      send(message);
    } else if (state.pending.length < PENDING_LIMIT) {
      state.pending.push(message);
      box.textContent = "queued: sent when the live connection is back…";
    } else {
      box.className = "result bad";
      box.textContent = "not sent: the live connection is down and " + PENDING_LIMIT + " actions already wait for it";
    }
  }

  function result(m) {
    var box = $("action-result");
    box.hidden = false;
    box.className = "result" + (m.ok ? "" : " bad");
    box.dataset.status = m.status;
    var b = m.body || {};
    if (m.ok && (b.paused || b.resumed || b.decision)) {
      box.textContent = "done: " + (b.paused ? "paused" : b.resumed ? "resumed" : b.decision + " held #" + b.id) +
        (b.connection ? " on connection " + b.connection : " on every connection");
    } else if (m.ok) {
      box.textContent = "done: " + (b.rule || (b.last && b.last.rule) || "") +
        (b.applied_to ? " on connections " + b.applied_to.join(", ") : b.connection ? " on connection " + b.connection : b.id ? " as rule " + b.id : "");
    } else {
      box.textContent = (b.detail || b.error || ("error " + m.status));
    }
  }

  function kindChosen() {
    var kind = state.kinds.filter(function (k) { return k.kind === $("fault-kind").value; })[0];
    if (!kind) return;
    $("fault-rule").value = kind.kind + (kind.example ? ":" + kind.example : "");
    $("fault-help").textContent = kind.summary + (kind.options.length ? " · options: " + kind.options.join(", ") : "") +
      (kind.new_connections_only ? " · only for new connections (" + kind.new_connections_only + ")" : "");
  }

  function wire() {
    var filterTimer = null;
    $("filter").addEventListener("input", function () {
      clearTimeout(filterTimer);
      filterTimer = setTimeout(function () {
        $("rows").scrollTop = 0;
        state.offset = 0;
        send({ type: "view", filter: $("filter").value, offset: 0, count: state.count });
      }, 150);
    });
    var frameTimer = null;
    $("frame-filter").addEventListener("input", function () {
      clearTimeout(frameTimer);
      frameTimer = setTimeout(function () { if (state.selected) select(state.selected); }, 200);
    });
    $("rows").addEventListener("scroll", requestView);
    window.addEventListener("resize", requestView);
    $("close-code").addEventListener("input", function () { $("close-button").textContent = "close " + $("close-code").value; });
    $("close-button").addEventListener("click", function () {
      act({ action: "close", code: +$("close-code").value, reason: $("close-reason").value });
    });
    $("fault-kind").addEventListener("change", kindChosen);
    $("fault-apply").addEventListener("click", function () {
      act({ action: "apply", rule: $("fault-rule").value, scope: $("fault-scope").value });
    });
    $("send-button").addEventListener("click", function () {
      act({ action: "send", to: $("send-to").value, text: $("send-text").value });
    });
    $("intercept-pause").addEventListener("click", function () {
      act({ action: "pause", from: $("intercept-from").value, match: $("intercept-match").value });
    });
    $("intercept-resume").addEventListener("click", function () { act({ action: "resume" }); });
    new MutationObserver(function () {
      if (state.pendingEvidence !== undefined && $("frames").children.length) {
        markEvidence(state.pendingEvidence);
        state.pendingEvidence = undefined;
      }
    }).observe($("frames"), { childList: true });
  }

  wire();
  connect();
})();
