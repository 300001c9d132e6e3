// ocnb: a lower bound on the requests and responses Playwright's driver keeps for a client.
//
// Loaded by Node before Playwright's driver (`node --require <this file> cli.js run-driver`, started by
// ocnb/browser/driver.py). The driver creates a `Request` (and `Response`) object for its client for
// every navigation, and for every request once the client listens to `request` or `response` events;
// it keeps each one, in itself and in the client (Python's `Connection._objects`), until the page
// closes or, per connection, until a kind passes 10,000 (then it disposes the oldest tenth with
// reason "gc", which the client handles: a collected object says so when used). An open tab thus
// kept ~14 KB of Python memory per request, up to 10,000 requests and 10,000 responses.
//
// This file makes the same "gc" disposal start at OCNB_DRIVER_REQUESTS_KEPT (set by driver.py) for
// the `Request` and `Response` kinds only; every other kind keeps Playwright's own limit. It uses two
// names Playwright exports from its bundle for its own tests (`server.setMaxDispatchersForTest`,
// `server.DispatcherConnection`): if either is gone it changes nothing and says so on stderr.
// Tests: tests/browser/test_driver_requests.py (the shape, and a tab's live requests staying bounded).
"use strict";

(() => {
  const kept = Number.parseInt(process.env.OCNB_DRIVER_REQUESTS_KEPT || "", 10);
  const cli = process.argv[1];
  if (!(kept > 0) || !cli || !process.argv.includes("run-driver")) return;
  const path = require("path");
  let server;
  try {
    require(path.join(path.dirname(cli), "lib", "bootstrap")); // the order cli.js loads them in
    server = require(path.join(path.dirname(cli), "lib", "coreBundle")).server;
  } catch (error) {
    process.stderr.write(`ocnb: Playwright's driver bundle did not load (${error}); its request limit stays\n`);
    return;
  }
  const proto = server && server.DispatcherConnection && server.DispatcherConnection.prototype;
  const setMax = server && server.setMaxDispatchersForTest;
  if (!proto || typeof proto.maybeDisposeStaleDispatchers !== "function" || typeof setMax !== "function") {
    process.stderr.write("ocnb: Playwright's driver changed (no DispatcherConnection.maybeDisposeStaleDispatchers "
      + "or setMaxDispatchersForTest); its request limit stays\n");
    return;
  }
  const kinds = new Set(["Request", "Response"]);
  const original = proto.maybeDisposeStaleDispatchers;
  proto.maybeDisposeStaleDispatchers = function maybeDisposeStaleDispatchers(bucket) {
    if (!kinds.has(bucket)) return original.call(this, bucket);
    setMax(kept); // read synchronously by the original, for this one call
    try {
      return original.call(this, bucket);
    } finally {
      setMax(undefined);
    }
  };
})();
