// ocnb: the origin policy's allowed requests continued inside Playwright's driver, not in Python.
//
// Loaded by Node before Playwright's driver, beside driver_requests.js (ocnb/browser/driver.py). The
// origin policy's browser-level guard (ocnb/browser/fetch_guard.py) has Chromium pause requests with
// DevTools `Fetch` on the browser's own session. With an allow-list that is every request (`Fetch`
// patterns cannot say "not these origins"), and each one went Chromium -> driver -> Python -> driver
// -> Chromium before it could leave.
//
// This file gives each DevTools session Python opens (a `CDPSession` dispatcher) one more command,
// `Ocnb.continueAllowed {refusable: <JavaScript regex source> | null}`: while a regex is set, a
// paused request that is not a document and whose URL the regex does not match is continued here at
// once and never sent to Python. Python sets the regex to the union of the registered policies'
// `OriginPolicy.suspects()`, which matches every URL a policy might refuse (and more), so a request
// continued here is one every policy allows; documents (navigations, each redirect hop, popups,
// frames) still go to Python, which gates a new target's workers before its first document. The
// command answers `{continued: n}`, the requests continued here so far on that session.
//
// It wraps two methods of Playwright's `CDPSession` dispatcher, reached through the one name the
// bundle exports that every dispatcher passes through (`server.DispatcherConnection.registerDispatcher`).
// If that name is gone it changes nothing and says so on stderr; Python then sees the command fail and
// judges every paused request itself, as before. Tests: tests/security/test_driver_fetch.py.
"use strict";

(() => {
  const cli = process.argv[1];
  if (!cli || !process.argv.includes("run-driver")) return;
  const path = require("path");
  let server;
  try {
    require(path.join(path.dirname(cli), "lib", "bootstrap")); // the order cli.js loads them in
    server = require(path.join(path.dirname(cli), "lib", "coreBundle")).server;
  } catch (error) {
    process.stderr.write(`ocnb: Playwright's driver bundle did not load (${error}); allowed requests go through Python\n`);
    return;
  }
  const connection = server && server.DispatcherConnection && server.DispatcherConnection.prototype;
  if (!connection || typeof connection.registerDispatcher !== "function") {
    process.stderr.write("ocnb: Playwright's driver changed (no DispatcherConnection.registerDispatcher); "
      + "allowed requests go through Python\n");
    return;
  }
  const COMMAND = "Ocnb.continueAllowed";
  const patched = new WeakSet();
  const register = connection.registerDispatcher;
  connection.registerDispatcher = function registerDispatcher(dispatcher) {
    if (dispatcher && dispatcher._type === "CDPSession") patch(Object.getPrototypeOf(dispatcher));
    return register.call(this, dispatcher);
  };

  function patch(proto) {
    if (patched.has(proto)) return;
    patched.add(proto);
    const send = proto.send;
    const dispatchEvent = proto._dispatchEvent;
    if (typeof send !== "function" || typeof dispatchEvent !== "function") return;
    proto.send = async function sendOrContinueAllowed(params, progress) {
      if (!params || params.method !== COMMAND) return send.call(this, params, progress);
      const source = params.params && params.params.refusable;
      if (source !== undefined) this._ocnbRefusable = typeof source === "string" ? new RegExp(source, "i") : null;
      return { result: { continued: this._ocnbContinued || 0 } };
    };
    proto._dispatchEvent = function dispatchOrContinue(method, params) {
      const refusable = this._ocnbRefusable;
      if (refusable && method === "event" && params && params.method === "Fetch.requestPaused") {
        const event = params.params || {};
        const url = event.request && event.request.url;
        if (typeof url === "string" && event.resourceType !== "Document" && event.responseStatusCode === undefined
            && event.responseErrorReason === undefined && !refusable.test(url)) {
          this._ocnbContinued = (this._ocnbContinued || 0) + 1;
          this._object._send("Fetch.continueRequest", { requestId: event.requestId }).catch(() => {});
          return;
        }
      }
      return dispatchEvent.call(this, method, params);
    };
  }
})();
