// The web chat: a login form until the browser has a session cookie, then one WebSocket to /ws and a live transcript.
"use strict";
(function () {
  const $ = function (id) { return document.getElementById(id); };
  const log = $("log");
  let socket = null;
  let live = null;      // the bot bubble of the running turn: {node, text, tools}
  let opened = false;
  let csrf = "";        // the session's CSRF token, for POST /logout

  function showLogin(error) {
    $("chat").hidden = true;
    window.relaybotLogin.ask($("login"), start, error);
  }

  function scroll() { log.scrollTop = log.scrollHeight; }

  function bubble(kind, text) {
    const node = document.createElement("div");
    node.className = "msg " + kind;
    if (kind === "bot") node.innerHTML = window.renderMarkdown(text);
    else node.textContent = text;
    log.appendChild(node);
    scroll();
    return node;
  }

  // The model's reasoning, folded above the reply it led to: one click opens it.
  function folded(node, text) {
    const details = document.createElement("details");
    details.className = "reasoning";
    const summary = document.createElement("summary");
    summary.textContent = "Reasoning";
    const body = document.createElement("div");
    body.textContent = text;
    details.append(summary, body);
    node.prepend(details);
    return body;
  }

  function liveBubble() {
    if (!live) {
      const node = bubble("bot live", "");
      const tools = document.createElement("div");
      tools.className = "tools";
      const body = document.createElement("div");
      node.append(tools, body);
      live = { node: node, body: body, tools: tools, text: "", fresh: false };
    }
    return live;
  }

  function setWorking(working) {
    $("stop").disabled = !working;
    $("state").textContent = working ? "working…" : "";
  }

  function onFrame(frame) {
    switch (frame.type) {
      case "status":
        if (frame.state === "connected") {
          log.textContent = "";
          live = null;
          for (const item of frame.history || []) {
            const node = bubble(item.role === "user" ? "user" : "bot", item.text);
            if (item.reasoning) folded(node, item.reasoning);
          }
        } else {
          setWorking(frame.state === "working");
        }
        break;
      case "stream_start":
        liveBubble().fresh = true;
        break;
      case "stream_chunk": {
        const current = liveBubble();
        if (current.fresh) { current.text = ""; current.fresh = false; }
        current.text += frame.text;
        current.body.innerHTML = window.renderMarkdown(current.text);
        scroll();
        break;
      }
      case "reasoning": {
        const current = liveBubble();
        if (!current.reasoning) current.reasoning = folded(current.node, "");
        current.reasoning.textContent += frame.text;
        break;
      }
      case "tool_call": {
        const line = document.createElement("div");
        line.className = "tool";
        line.dataset.name = frame.name;
        line.textContent = "running " + frame.name + (frame.summary ? " (" + frame.summary + ")" : "") + "…";
        liveBubble().tools.appendChild(line);
        scroll();
        break;
      }
      case "tool_result": {
        const lines = liveBubble().tools.querySelectorAll(".tool:not(.ok):not(.failed)");
        for (const line of lines) {
          if (line.dataset.name === frame.name) { line.classList.add(frame.ok ? "ok" : "failed"); break; }
        }
        break;
      }
      case "message":
        if (live) {
          live.body.innerHTML = window.renderMarkdown(frame.text);
          live.node.classList.remove("live");
          live.node.classList.add("final");
          live = null;
        } else {
          bubble("bot final", frame.text);
        }
        break;
      case "error":
        if (live) { live.node.classList.remove("live"); live = null; }
        bubble("error", frame.message);
        break;
    }
  }

  function start(session) {
    csrf = session.csrf || "";
    connect();
  }

  // The session cookie goes with the upgrade; the token itself never leaves the login form.
  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    socket = new WebSocket(scheme + "//" + location.host + "/ws");
    opened = false;
    socket.onopen = function () {
      opened = true;
      $("login").hidden = true;
      $("chat").hidden = false;
      $("state").textContent = "";
      $("text").focus();
    };
    socket.onmessage = function (event) { onFrame(JSON.parse(event.data)); };
    socket.onclose = function () {
      if (!opened) {
        showLogin("Please log in again.");
      } else {
        $("state").textContent = "disconnected; reconnecting…";
        setTimeout(connect, 2000);
      }
    };
  }

  // A chosen file waits beside the text box and goes with the next message, by POST /upload; the reply comes
  // over the WebSocket like any other.
  function attached() { return $("file").files.length ? $("file").files[0] : null; }

  function showAttached() {
    const file = attached();
    $("attached").hidden = !file;
    $("attached-name").textContent = file ? "Attached: " + file.name : "";
  }

  async function upload(file, text) {
    const form = new FormData();
    form.append("file", file, file.name);
    form.append("text", text);
    form.append("id", String(Date.now()));
    const answer = await fetch("/upload", {
      method: "POST", body: form, credentials: "same-origin", headers: { "X-CSRF-Token": csrf },
    });
    if (!answer.ok) bubble("error", "The file was not sent: " + ((await answer.text()) || answer.status));
  }

  $("attach").addEventListener("click", function () { $("file").click(); });
  $("file").addEventListener("change", showAttached);
  $("unattach").addEventListener("click", function () { $("file").value = ""; showAttached(); });

  $("compose").addEventListener("submit", function (event) {
    event.preventDefault();
    const text = $("text").value.trim();
    const file = attached();
    if ((!text && !file) || !socket || socket.readyState !== WebSocket.OPEN) return;
    bubble("user", file ? "[" + file.name + "]" + (text ? "\n" + text : "") : text);
    live = null;
    if (file) {
      upload(file, text);
      $("file").value = "";
      showAttached();
    } else {
      socket.send(JSON.stringify({ type: "message", text: text, id: String(Date.now()) }));
    }
    $("text").value = "";
  });

  $("text").addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("compose").requestSubmit();
    }
  });

  $("stop").addEventListener("click", function () { socket.send(JSON.stringify({ type: "stop" })); });
  $("new").addEventListener("click", function () {
    socket.send(JSON.stringify({ type: "new" }));
    log.textContent = "";
    live = null;
  });

  $("logout").addEventListener("click", async function () {
    await fetch("/logout", { method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf } });
    socket.onclose = null;
    socket.close();
    log.textContent = "";
    showLogin();
  });

  window.relaybotLogin.session().then(function (session) {
    if (session) start(session); else showLogin();
  });
})();
