// The pages' way in: ask /session who is logged in; the login form POSTs the token to /login, which sets an HttpOnly cookie.
"use strict";
(function () {
  async function session() {
    const response = await fetch("/session", { credentials: "same-origin" });
    return response.ok ? response.json() : null;
  }

  async function login(token) {
    const response = await fetch("/login", {
      method: "POST",
      credentials: "same-origin",
      body: new URLSearchParams({ token: token }),
    });
    if (response.ok) return { session: await response.json() };
    return { error: response.status === 429 ? "Too many wrong tokens; try again in a minute." : "That token was refused." };
  }

  // Show `form` until a login succeeds, then call onSession with {name, trust, owner, csrf}.
  function ask(form, onSession, error) {
    const input = form.querySelector("input[name=token]");
    const message = form.querySelector("[role=alert]");
    form.hidden = false;
    message.textContent = error || "";
    input.focus();
    form.onsubmit = async function (event) {
      event.preventDefault();
      const result = await login(input.value.trim());
      input.value = "";
      if (result.error) { message.textContent = result.error; return; }
      form.hidden = true;
      onSession(result.session);
    };
  }

  window.relaybotLogin = { session: session, ask: ask };
})();
