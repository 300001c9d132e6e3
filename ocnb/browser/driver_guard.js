// ocnb: the origin policy's two hands inside Playwright's driver.
//
// Loaded by Node before Playwright's driver, beside driver_requests.js (ocnb/browser/driver.py). It
// gives each DevTools session Python opens (a `CDPSession` dispatcher) three commands, on the browser's
// own session that the origin policy's browser-level guard holds (ocnb/browser/fetch_guard.py):
//
// 1. `Ocnb.continueAllowed {refusable: <JavaScript regex source> | null}` — allowed requests continued
//    here, not in Python. With an allow-list the guard has Chromium pause every request (DevTools
//    `Fetch` patterns cannot say "not these origins"), and each one went Chromium -> driver -> Python
//    -> driver -> Chromium before it could leave. While a regex is set, a paused request that is not a
//    document and whose URL the regex does not match is continued here at once and never sent to
//    Python. Python sets it to the union of the registered policies' `OriginPolicy.suspects()`, which
//    matches every URL a policy might refuse (and more), so a request continued here is one every
//    policy allows; documents (navigations, each redirect hop, popups, frames) still go to Python,
//    which gates a new target's workers before its first document. It answers `{continued: n}`, the
//    requests continued here so far on that session. Tests: tests/security/test_driver_fetch.py.
//
// 2. `Ocnb.holdSharedWorkers` and 3. `Ocnb.releaseSharedWorker {targetId}` — a shared worker runs only
//    once ocnb's worker gate is ready for it. Under a policy ocnb holds every shared worker at its
//    start and stops it before its first script, to put in the gate that refuses its WebSockets to a
//    refused origin (ocnb/browser/ws_guard.py). The driver auto-attaches the same worker, has nothing
//    to do with it, and lets it go at once (`Runtime.runIfWaitingForDebugger`, then detach); on a
//    loaded machine that came before ocnb's breakpoint was in place, and the worker ran ungated. After
//    `holdSharedWorkers`, on that browser's connection, the driver's letting go of a shared worker that
//    waits at its start waits for `releaseSharedWorker` of its target (ocnb's breakpoint is in, or its
//    context has no policy); a worker that goes away is released too. Tests: tests/security/test_ws_guard.py.
//
// It wraps `send` and `_dispatchEvent` of the `CDPSession` dispatcher and `_onMessage` and `detach` of
// Playwright's `CRSession` (reached through such a dispatcher's own session), found through the one
// name the bundle exports that every dispatcher passes through
// (`server.DispatcherConnection.registerDispatcher`). If that is gone it changes nothing and says so on
// stderr: Python's commands then fail, every paused request goes to Python, and shared workers are gated
// as before (a race ocnb can lose).
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
    process.stderr.write(`ocnb: Playwright's driver bundle did not load (${error}); the origin policy's driver hooks are off\n`);
    return;
  }
  const connection = server && server.DispatcherConnection && server.DispatcherConnection.prototype;
  if (!connection || typeof connection.registerDispatcher !== "function") {
    process.stderr.write("ocnb: Playwright's driver changed (no DispatcherConnection.registerDispatcher); "
      + "the origin policy's driver hooks are off\n");
    return;
  }
  const CONTINUE = "Ocnb.continueAllowed";
  const HOLD = "Ocnb.holdSharedWorkers";
  const RELEASE = "Ocnb.releaseSharedWorker";
  const patched = new WeakSet();
  const register = connection.registerDispatcher;
  connection.registerDispatcher = function registerDispatcher(dispatcher) {
    if (dispatcher && dispatcher._type === "CDPSession") patchDispatcher(Object.getPrototypeOf(dispatcher));
    return register.call(this, dispatcher);
  };

  function patchDispatcher(proto) {
    if (patched.has(proto)) return;
    const { send, _dispatchEvent: dispatchEvent } = proto;
    if (typeof send !== "function" || typeof dispatchEvent !== "function") return;
    patched.add(proto);
    proto.send = async function sendOrOcnb(params, progress) {
      const method = params && params.method;
      if (method === CONTINUE) {
        const source = params.params && params.params.refusable;
        if (source !== undefined) this._ocnbRefusable = typeof source === "string" ? new RegExp(source, "i") : null;
        return { result: { continued: this._ocnbContinued || 0 } };
      }
      if (method === HOLD || method === RELEASE) {
        const session = this._object && this._object._session;
        if (!session || !session._connection || !patchSession(Object.getPrototypeOf(session))) {
          throw new Error("ocnb: Playwright's CRSession changed; shared workers are not held");
        }
        const state = workersOf(session._connection);
        if (method === HOLD) state.holding = true;
        else release(state, String((params.params || {}).targetId || ""));
        return { result: {} };
      }
      return send.call(this, params, progress);
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

  /** What one browser connection holds: the shared workers the driver would let go, and ocnb's word. */
  function workersOf(crConnection) {
    if (!crConnection.__ocnbSharedWorkers) {
      crConnection.__ocnbSharedWorkers = { holding: false, held: new Map(), waiters: new Map(), released: new Set() };
    }
    return crConnection.__ocnbSharedWorkers;
  }
  function release(state, targetId) {
    const waiter = state.waiters.get(targetId);
    if (waiter) {
      state.waiters.delete(targetId);
      waiter();
    } else {
      state.released.add(targetId);
    }
  }
  function released(state, targetId) {
    if (state.released.delete(targetId)) return Promise.resolve();
    return new Promise((resolve) => state.waiters.set(targetId, resolve));
  }

  function patchSession(proto) {
    if (patched.has(proto)) return true;
    const { _onMessage: onMessage, detach } = proto;
    if (typeof onMessage !== "function" || typeof detach !== "function") return false;
    patched.add(proto);
    proto._onMessage = function noteSharedWorkers(object) {
      const state = this._connection && this._connection.__ocnbSharedWorkers;
      if (state && !this._parentSession && object && !object.id) {
        const params = object.params || {};
        const info = params.targetInfo || {};
        if (object.method === "Target.attachedToTarget" && state.holding && info.type === "shared_worker"
            && params.waitingForDebugger) {
          state.held.set(params.sessionId, info.targetId);
        } else if (object.method === "Target.detachedFromTarget" && state.held.has(params.sessionId)) {
          release(state, state.held.get(params.sessionId)); // gone: nothing left to wait for
        }
      }
      return onMessage.call(this, object);
    };
    proto.detach = async function detachOnceReleased() {
      const state = this._connection && this._connection.__ocnbSharedWorkers;
      const targetId = state && state.held.get(this._sessionId);
      if (targetId !== undefined) {
        await released(state, targetId);
        state.held.delete(this._sessionId);
      }
      return detach.call(this);
    };
    return true;
  }
})();
