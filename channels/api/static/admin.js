// The dashboard: an owner's session cookie reads /admin/state; actions POST to /admin/action with the CSRF token.
"use strict";
(function () {
  const $ = function (id) { return document.getElementById(id); };
  let csrf = "";

  function cell(row, content) {
    const td = document.createElement("td");
    if (content instanceof Node) td.appendChild(content); else td.textContent = content == null ? "" : String(content);
    row.appendChild(td);
  }

  function table(node, heads, rows) {
    node.textContent = "";
    const head = node.insertRow();
    for (const h of heads) { const th = document.createElement("th"); th.textContent = h; head.appendChild(th); }
    for (const values of rows) { const row = node.insertRow(); for (const v of values) cell(row, v); }
    if (!rows.length) { const row = node.insertRow(); cell(row, "none"); }
  }

  function button(label, request, danger) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = label;
    if (danger) b.className = "danger";
    b.addEventListener("click", function () { act(request); });
    return b;
  }

  function when(seconds) { return seconds ? new Date(seconds * 1000).toLocaleString() : ""; }

  function usageChart(days) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    const width = 600, height = 160, base = 140;
    svg.setAttribute("viewBox", "0 0 " + width + " " + height);
    svg.setAttribute("role", "img");
    const max = Math.max(1, ...days.map(function (d) { return d.tokens; }));
    const step = width / Math.max(days.length, 1);
    days.forEach(function (d, i) {
      const h = Math.round((d.tokens / max) * (base - 10));
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", String(i * step + 4));
      rect.setAttribute("y", String(base - h));
      rect.setAttribute("width", String(Math.max(step - 8, 2)));
      rect.setAttribute("height", String(h));
      const title = document.createElementNS(ns, "title");
      title.textContent = d.day + ": " + d.tokens + " tokens";
      rect.appendChild(title);
      const label = document.createElementNS(ns, "text");
      label.setAttribute("x", String(i * step + 4));
      label.setAttribute("y", String(height - 4));
      label.textContent = d.day.slice(5);
      svg.append(rect, label);
    });
    return svg;
  }

  function render(state) {
    table($("channels"), ["channel", "state", "since", "last error", "in", "out"], state.channels.map(function (c) {
      return [c.name, c.state + (c.failures ? " (" + c.failures + " failed starts)" : ""), when(c.since),
        c.last_error || "", c.messages_in, c.messages_out];
    }));
    table($("pending"), ["channel", "code", "sender", "asked", ""], state.pairing.pending.map(function (p) {
      return [p.channel, p.code, p.user_id + (p.name ? " (" + p.name + ")" : ""), when(p.created),
        button("Approve", { op: "pairing.approve", channel: p.channel, code: p.code })];
    }));
    const approved = [];
    for (const channel of Object.keys(state.pairing.approved)) {
      for (const user of state.pairing.approved[channel]) {
        approved.push([channel, user, button("Revoke", { op: "pairing.revoke", channel: channel, user_id: user }, true)]);
      }
    }
    table($("approved"), ["channel", "sender", ""], approved);
    $("usage").textContent = "";
    $("usage").appendChild(usageChart(state.usage));
    table($("sessions"), ["session", "last activity", "messages", "tokens", "model"], state.sessions.map(function (s) {
      return [s.key, when(s.last_activity), s.messages, s.tokens, s.model || "default"];
    }));
    table($("cron"), ["id", "name", "schedule", "to", "next run", "last run", "", ""], state.cron.map(function (j) {
      const last = j.last_run ? (j.last_run.ok ? "ok" : "failed: " + j.last_run.error) : "never";
      return [j.id, j.name, j.schedule, j.target, j.next_run || "never", last,
        button("Run now", { op: "cron.run", id: j.id }), button("Remove", { op: "cron.remove", id: j.id }, true)];
    }));
    table($("dead"), ["id", "", "chat", "agent", "failed", "attempts", "reason", "message", "", ""],
      state.dead_letters.map(function (d) {
        return [d.id, d.direction, d.chat, d.agent, when(d.when), d.attempts, d.reason, d.preview,
          button("Retry", { op: "queue.retry", id: d.id }), button("Drop", { op: "queue.drop", id: d.id }, true)];
      }));
    $("heartbeat").textContent = "";
    for (const key of Object.keys(state.heartbeat)) {
      const dt = document.createElement("dt"); dt.textContent = key;
      const value = state.heartbeat[key];
      const dd = document.createElement("dd");
      dd.textContent = key === "last_run" ? (value ? when(value) : "never") : String(value);
      $("heartbeat").append(dt, dd);
    }
  }

  async function refresh() {
    const response = await fetch("/admin/state", { credentials: "same-origin" });
    if (!response.ok) { $("state").textContent = "refused (" + response.status + ")"; return; }
    render(await response.json());
  }

  async function act(request) {
    const headers = { "Content-Type": "application/json", "X-CSRF-Token": csrf };
    const response = await fetch("/admin/action", {
      method: "POST", credentials: "same-origin", headers: headers, body: JSON.stringify(request),
    });
    const result = await response.json();
    await refresh();  // "done" is shown once the tables show what the action did
    $("state").textContent = result.ok ? "done" : "failed: " + result.error;
  }

  function open(session) {
    if (!session.owner) { window.relaybotLogin.ask($("login"), open, "An owner token is needed."); return; }
    csrf = session.csrf || "";
    $("admin").hidden = false;
    refresh();
  }

  $("refresh").addEventListener("click", refresh);
  window.relaybotLogin.session().then(function (session) {
    if (session) open(session); else window.relaybotLogin.ask($("login"), open);
  });
})();
