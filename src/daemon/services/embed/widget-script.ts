/**
 * The widget a page includes with one tag:
 *   <script src="{daemon}/v1/embed/widget.js" data-key="emb_…" async></script>
 * It reads its key and the daemon's address from its own tag, fetches the config, draws a small
 * chat box and posts messages as text/plain JSON (a "simple" cross-origin request, so no preflight;
 * the daemon checks Origin). The end user's secret id and the session id live in localStorage; on
 * load the widget shows the session's earlier turns (POST …/sessions/{id}:get).
 * data-autosend="text" sends one message on load (used by the browser test).
 */
export const WIDGET_SCRIPT = `(function () {
  var tag = document.currentScript;
  if (!tag) return;
  var key = tag.getAttribute('data-key');
  var base = new URL(tag.src).origin;
  function rand(n) { var a = new Uint8Array(n), s = ''; crypto.getRandomValues(a); for (var i = 0; i < n; i++) s += 'abcdefghijklmnopqrstuvwxyz0123456789'[a[i] % 36]; return s; }
  function stored(name, n) { var k = 'platform-widget-' + name + '-' + key, v; try { v = localStorage.getItem(k); if (!v) { v = rand(n); localStorage.setItem(k, v); } } catch (e) { v = v || rand(n); } return v; }
  // The end user's secret id: one per browser and page origin (not per key, so a rotated key keeps
  // the conversations); the daemon derives the session owner from it and never stores it.
  function storedEndUser() { var k = 'platform-widget-end-user', v; try { v = localStorage.getItem(k); if (!v) { v = rand(32); localStorage.setItem(k, v); } } catch (e) { v = v || rand(32); } return v; }
  var endUser = storedEndUser(), sessionId = stored('session', 32);
  function post(path, body) {
    return fetch(base + '/v1/embed/' + key + path, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, status: r.status, b: b }; }); });
  }
  var box = document.createElement('div');
  box.id = 'platform-widget';
  box.setAttribute('data-state', 'loading');
  box.style.cssText = 'position:fixed;bottom:16px;right:16px;width:300px;font:14px sans-serif;border:1px solid #ccc;border-radius:8px;background:#fff;box-shadow:0 2px 8px rgba(0,0,0,.2);z-index:2147483647';
  var title = document.createElement('div'), log = document.createElement('div'), form = document.createElement('form'), input = document.createElement('input');
  title.style.cssText = 'padding:8px;color:#fff;background:#333;border-radius:8px 8px 0 0';
  log.className = 'platform-widget-log';
  log.style.cssText = 'padding:8px;max-height:240px;overflow:auto';
  input.placeholder = 'Type a message';
  input.style.cssText = 'width:100%;box-sizing:border-box;padding:8px;border:0;border-top:1px solid #ccc';
  form.appendChild(input); box.appendChild(title); box.appendChild(log); box.appendChild(form);
  function line(who, text) { var p = document.createElement('p'); p.className = 'platform-widget-' + who; p.textContent = text; log.appendChild(p); log.scrollTop = log.scrollHeight; }
  // An agent answers {output}; a function any JSON, often {reply} (a recorded function turn keeps it as text).
  function shown(b) { if (typeof b === 'string') { try { b = JSON.parse(b); } catch (e) { return b; } } var r = b && b.reply !== undefined ? b.reply : b && b.output !== undefined ? b.output : b; return typeof r === 'string' ? r : JSON.stringify(r); }
  function fail(text) { box.setAttribute('data-state', 'error'); line('error', text); }
  function send(text) {
    line('user', text);
    box.setAttribute('data-state', 'waiting');
    post('/invoke', { message: text, end_user: endUser, session_id: sessionId })
      .then(function (x) {
        if (!x.ok) return fail(x.b && x.b.error ? x.b.error : 'request refused');
        line('agent', shown(x.b));
        box.setAttribute('data-state', 'ready');
      })
      .catch(function (e) { fail('could not reach the agent: ' + e.message); });
  }
  form.addEventListener('submit', function (e) { e.preventDefault(); var t = input.value.trim(); if (t) { input.value = ''; send(t); } });
  function mount() { document.body.appendChild(box); }
  if (document.body) mount(); else document.addEventListener('DOMContentLoaded', mount);
  fetch(base + '/v1/embed/' + key + '/config')
    .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, b: b }; }); })
    .then(function (x) {
      if (!x.ok) return fail(x.b && x.b.error ? x.b.error : 'widget unavailable');
      var t = x.b.theme || {};
      title.textContent = t.title || x.b.agent;
      if (t.color) title.style.background = t.color;
      if (t.position === 'bottom-left') { box.style.right = 'auto'; box.style.left = '16px'; }
      if (x.b.greeting) line('agent', x.b.greeting);
      // The conversation so far (only ever this end user's: another's is a 404, like a new session).
      return post('/sessions/' + sessionId + ':get', { end_user: endUser }).then(function (h) {
        if (h.ok) h.b.turns.forEach(function (t) { line('user', t.message); line('agent', shown(t.output)); });
        box.setAttribute('data-state', 'ready');
        var auto = tag.getAttribute('data-autosend');
        if (auto) send(auto);
      });
    })
    .catch(function (e) { fail('could not reach the agent: ' + e.message); });
})();
`;
