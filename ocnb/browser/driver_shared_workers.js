// ocnb: Playwright's driver lets a shared worker run only once ocnb's worker gate is ready for it.
//
// Loaded by Node before Playwright's driver, beside driver_requests.js and driver_fetch.js
// (ocnb/browser/driver.py). Under an origin policy ocnb holds every shared worker at its start and stops
// it before its first script, to put in the gate that refuses its WebSockets to a refused origin
// (ocnb/browser/ws_guard.py). Playwright's driver auto-attaches the same worker, has nothing to do with
// it, and lets it go at once (`Runtime.runIfWaitingForDebugger`, then detach). On a loaded machine that
// came before ocnb's breakpoint was in place, and the worker ran ungated: its WebSocket reached a
// refused origin.
//
// Two commands on a DevTools session Python opens (a `CDPSession` dispatcher):
// - `Ocnb.holdSharedWorkers`: from now on, on that browser's connection, Playwright's letting go of a
//   shared worker that waits at its start waits for ocnb;
// - `Ocnb.releaseSharedWorker {targetId}`: ocnb's breakpoint is in place (or the worker's context has
//   no policy): Playwright may let that worker go. A worker that goes away is released too.
// It wraps three methods of Playwright's `CRSession` (reached through a `CDPSession` dispatcher's own
// session) and `send` of the `CDPSession` dispatcher, found through the one name the bundle exports
// that every dispatcher passes through (`server.DispatcherConnection.registerDispatcher`). If that is
// gone it changes nothing and says so on stderr: Python's commands then fail and ocnb gates shared
// workers as before (a race it can lose). Tests: tests/security/test_ws_guard.py.
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
    process.stderr.write(`ocnb: Playwright's driver bundle did not load (${error}); shared workers are not held\n`);
    return;
  }
  const connection = server && server.DispatcherConnection && server.DispatcherConnection.prototype;
  if (!connection || typeof connection.registerDispatcher !== "function") {
    process.stderr.write("ocnb: Playwright's driver changed (no DispatcherConnection.registerDispatcher); "
      + "shared workers are not held\n");
    return;
  }
  const HOLD = "Ocnb.holdSharedWorkers";
  const RELEASE = "Ocnb.releaseSharedWorker";
  const patched = new WeakSet();
  const register = connection.registerDispatcher;
  connection.registerDispatcher = function registerDispatcher(dispatcher) {
    if (dispatcher && dispatcher._type === "CDPSession") patchDispatcher(Object.getPrototypeOf(dispatcher));
    return register.call(this, dispatcher);
  };

  /** What one browser connection holds: the shared workers Playwright would let go, and ocnb's word. */
  function stateOf(crConnection) {
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

  function patchDispatcher(proto) {
    if (patched.has(proto)) return;
    patched.add(proto);
    const send = proto.send;
    if (typeof send !== "function") return;
    proto.send = async function sendOrHold(params, progress) {
      const method = params && params.method;
      if (method !== HOLD && method !== RELEASE) return send.call(this, params, progress);
      const session = this._object && this._object._session;
      if (!session || !session._connection || !patchSession(Object.getPrototypeOf(session))) {
        throw new Error("ocnb: Playwright's CRSession changed; shared workers are not held");
      }
      const state = stateOf(session._connection);
      if (method === HOLD) state.holding = true;
      else release(state, String((params.params || {}).targetId || ""));
      return { result: {} };
    };
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
