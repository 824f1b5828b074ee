// rankwire client: one WebSocket to the gateway's /v1/ws carrying any number
// of live views, written against docs/PROTOCOL.md ("Live views over
// WebSocket"). Dependency-free; the <rankwire-board> element in rankwire.js
// is built on it, and pages may use it directly.
//
//   const client = new RankwireClient({ getToken: () => fetchTokenFromMyBackEnd() });
//   const sub = client.subscribe({ board: "weekly", view: { kind: "top", limit: 10 } }, {
//     update(view, msg) { /* view.rows: rows in rank order, view.total, view.seq */ },
//     error(err) { /* {code, message, fatal, close}: the subscription ended */ },
//   });
//   client.addEventListener("state", (e) => e.detail.state); // connecting | open | reconnecting | error | closed
//   sub.close(); client.close();

// The pure parts (applying messages, backoff, token expiry, close codes)
// are exported on their own so they can be tested without a socket.

/** emptyView is a view's state before its first snapshot. */
export function emptyView() {
  return { seq: null, total: 0, rows: new Map() };
}

/**
 * applyMessage applies a snapshot or diff to a view's state (rows keyed by
 * rank) and returns the new state, or null when the message does not follow
 * on from state: a gap (its `prev` is not our `seq`), after which the caller
 * must resubscribe. The input state is not modified.
 */
export function applyMessage(state, msg) {
  if (msg.type === "snapshot") {
    const rows = new Map();
    for (const r of msg.rows || []) rows.set(r.rank, r);
    return { seq: msg.seq, total: msg.total, rows };
  }
  if (msg.type !== "diff" || state.seq === null || msg.prev !== state.seq) return null;
  const rows = new Map(state.rows);
  // Order matters: drop first, then put. A rank can be both gone and put.
  for (const rank of msg.gone || []) rows.delete(rank);
  for (const r of msg.rows || []) rows.set(r.rank, r);
  return { seq: msg.seq, total: msg.total, rows };
}

/** sortedRows returns a view's rows in rank order. */
export function sortedRows(state) {
  return [...state.rows.values()].sort((a, b) => a.rank - b.rank);
}

/**
 * backoffDelay is the wait in ms before reconnect attempt n (0-based):
 * "full jitter", a uniform draw below min(max, base·2^n), so that thousands of
 * lobbies dropped by one gateway restart do not all come back in one instant.
 */
export function backoffDelay(n, { base = 250, max = 8000, random = Math.random } = {}) {
  const ceiling = Math.min(max, base * 2 ** Math.min(n, 20));
  return Math.max(50, Math.floor(random() * ceiling));
}

/** tokenClaims decodes a JWT's payload without verifying it (the server verifies). */
export function tokenClaims(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const json = atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), "="));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
  } catch {
    return {};
  }
}

/**
 * refreshDelay is how long after now (ms since epoch) to fetch a new token
 * for one that expires at exp (seconds since epoch): a minute early, or a
 * fifth of its remaining life for short-lived ones. Null: never (no exp).
 */
export function refreshDelay(exp, now = Date.now()) {
  if (typeof exp !== "number") return null;
  const left = exp * 1000 - now;
  return Math.max(0, left - Math.min(60_000, left / 5));
}

/**
 * closeAction says what a close code means for the client (the protocol's
 * close-code table):
 * "refresh" (4001: the token expired: ask for a new one, reconnect with it),
 * "fatal" (4003: this token or page may not connect: stop),
 * "too-large" (1009: a message we sent was over 64 KiB: a bug here; stop),
 * "limit" (4029: over a limit of the tenant: reconnect slowly, limitDelay),
 * "failover" (1001: the gateway shuts down: the next URL at once, resume),
 * "retry" (anything else: 4008 too slow, 1006 network: the next URL where
 * there are several, back off, resume).
 */
export function closeAction(code) {
  switch (code) {
    case 4001: return "refresh";
    case 4003: return "fatal";
    case 1009: return "too-large";
    case 4029: return "limit";
    case 1001: return "failover";
    default: return "retry";
  }
}

/**
 * limitDelay is the wait in ms before reconnect attempt n (0-based) after a
 * 4029 close: 1 s doubling to 60 s, each drawn from 75–125 % of that, so
 * widgets over a tenant's connection cap come back slowly and spread out.
 */
export function limitDelay(n, { random = Math.random } = {}) {
  const base = Math.min(60_000, 1000 * 2 ** Math.min(n, 6));
  return Math.min(60_000, Math.floor(base * (0.75 + 0.5 * random())));
}

/** failedTriesHint is how many connection attempts in a row may fail before
 * the state event carries connectHint: a page or widget then says what to
 * check instead of "reconnecting" forever. */
export const failedTriesHint = 3;
export const connectHint = "cannot connect: check the gateway URL, the token and the gateway's allowed origins";

/**
 * wsURL turns the gateway's base URL (http(s):// or ws(s)://, with or
 * without /v1/ws) into the WebSocket endpoint. Without a base it is the
 * origin this module was served from: the gateway serves the widget itself.
 */
export function wsURL(base) {
  const u = new URL(base || "/", (base && globalThis.location?.href) || import.meta.url);
  u.protocol = u.protocol === "https:" || u.protocol === "wss:" ? "wss:" : "ws:";
  if (!u.pathname.endsWith("/v1/ws")) u.pathname = u.pathname.replace(/\/?$/, "/v1/ws");
  u.search = "";
  u.hash = "";
  return u.toString();
}

let clientCount = 0;

/**
 * RankwireClient keeps one WebSocket open while it has subscriptions,
 * re-authenticates before the token expires (with getToken), reconnects with
 * jittered backoff and resumes every view with `since`, and resubscribes a
 * view whose prev/seq chain broke. Events: "state" (detail {state, code,
 * reason, hint}), "error" (detail {code, message, fatal}) and "tokenexpired"
 * (the token expired and there is no getToken: call setToken with a new one).
 * States: idle, connecting, open, reconnecting, expired, error, closed.
 */
export class RankwireClient extends EventTarget {
  /**
   * @param {object} opts
   * @param {string|string[]} [opts.url] gateway base URL, or several (tried in
   *   turn: another one first after a 1001 close); default: where this module came from
   * @param {string} [opts.token] a read token (JWT)
   * @param {() => Promise<string>} [opts.getToken] returns a fresh token; called
   *   before the current one expires and after a 4001 close
   * @param {() => number} [opts.random] the jitter's source, [0, 1); default Math.random
   * @param {{set(fn: () => void, ms: number): any, clear(t: any): void}} [opts.timers]
   *   the clock that schedules reconnects and refreshes; default setTimeout
   */
  constructor({ url, token, getToken, WebSocket: WS = globalThis.WebSocket, backoff, random = Math.random, timers } = {}) {
    super();
    this.urls = (Array.isArray(url) ? url : [url]).map((u) => wsURL(u));
    this.url = this.urls[0];
    this._random = random;
    // timers: {set(fn, ms), clear(t)}; a test injects its own clock here.
    this._clock = timers || { set: (fn, ms) => setTimeout(fn, ms), clear: (t) => clearTimeout(t) };
    this._failed = 0; // connection attempts in a row that never got a message through
    this._limited = 0; // 4029 closes in a row: the exponent of limitDelay
    this.token = token || null;
    this.getToken = getToken || null;
    this.state = "idle";
    this._WS = WS;
    this._backoff = backoff || {};
    this._subs = new Map(); // wire id → subscription
    this._prefix = `c${++clientCount}`;
    this._next = 0;
    this._attempt = 0;
    this._ws = null;
    this._timers = new Set();
  }

  /** subject is the token's `sub`: the viewer's member id, or "". */
  get subject() {
    return this.token ? tokenClaims(this.token).sub || "" : "";
  }

  /**
   * subscribe starts a live view: spec is {board, window, at, follow, view} as in the
   * protocol's subscribe message. handlers.update(view, msg) runs after every
   * snapshot or diff; handlers.error(err) once when the view ends: the
   * server refused it ({code, message}), or the connection ended for good
   * ({code, message, fatal: true, close}: a 4003 refusal or a 1009 close,
   * whose code is close; no close where there was no token). Not called on
   * sub.close() or client.close().
   * Returns {close()}.
   */
  subscribe(spec, handlers = {}) {
    const sub = { spec, handlers, view: emptyView(), wire: null, closed: false };
    this._sendSubscribe(sub, false);
    this._ensureOpen();
    return { close: () => this._unsubscribe(sub) };
  }

  /**
   * setToken replaces the token: on an open connection it is sent as an
   * auth message (the server narrows the subscriptions to its scope); after
   * a 4001 close ("expired" state) it reconnects with it.
   */
  setToken(token) {
    this.token = token || null;
    if (this.state === "expired" && this.token) {
      this._setState("connecting");
      return this._ensureOpen();
    }
    if (this._ws && this._authed && this.token) this._ws.send(JSON.stringify({ type: "auth", token: this.token }));
  }

  /** close ends every subscription and the connection. */
  close() {
    for (const sub of this._subs.values()) sub.closed = true;
    this._subs.clear();
    this._shutdown("closed");
  }

  _unsubscribe(sub) {
    if (sub.closed) return;
    sub.closed = true;
    this._subs.delete(sub.wire);
    this._write({ type: "unsubscribe", id: sub.wire });
    if (this._subs.size === 0) this._shutdown("idle");
  }

  // _sendSubscribe gives sub a fresh wire id (so late messages of its old
  // id are recognisably stale) and subscribes, resuming from its seq.
  _sendSubscribe(sub, resume) {
    if (sub.wire !== null) this._subs.delete(sub.wire);
    sub.wire = `${this._prefix}-${++this._next}`;
    this._subs.set(sub.wire, sub);
    const msg = { type: "subscribe", id: sub.wire, board: sub.spec.board, view: sub.spec.view };
    if (sub.spec.window) msg.window = sub.spec.window;
    if (sub.spec.at) msg.at = sub.spec.at;
    // A following view moves to each new window (its seq starts over):
    // the gateway ignores since for it, and its first message is a snapshot.
    if (sub.spec.follow) msg.follow = true;
    else if (resume && sub.view.seq !== null) msg.since = sub.view.seq;
    this._write(msg);
  }

  _write(msg) {
    if (this._ws && this._ws.readyState === 1 && this._authed) this._ws.send(JSON.stringify(msg));
  }

  // _setState reports a new state, or the same state with a new reason,
  // code or hint (a page shows why it is still reconnecting).
  _setState(state, detail = {}) {
    const key = `${state}|${detail.code}|${detail.reason}|${detail.hint}`;
    if (this._stateKey === key) return;
    this._stateKey = key;
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: { state, ...detail } }));
  }

  // _fail ends the connection for good (a refusal, a message too large, no
  // token): the "error" event, then every subscription's error handler with
  // the same detail (each view has ended: its handler is how a page that
  // only holds subscriptions learns it), then the "error" state.
  // close is the WebSocket close code where a close decided it.
  _fail(code, message, close) {
    const detail = { code, message, fatal: true };
    if (close !== undefined) detail.close = close;
    this.dispatchEvent(new CustomEvent("error", { detail }));
    const subs = [...this._subs.values()];
    this._subs.clear();
    for (const sub of subs) {
      sub.closed = true;
      sub.handlers.error?.({ ...detail });
    }
    this._shutdown("error", { code, reason: message });
  }

  _later(fn, ms) {
    const t = this._clock.set(() => {
      this._timers.delete(t);
      fn();
    }, ms);
    this._timers.add(t);
  }

  _shutdown(state, detail) {
    for (const t of this._timers) this._clock.clear(t);
    this._timers.clear();
    const ws = this._ws;
    this._ws = null;
    if (ws) ws.close(1000, "client done");
    this._setState(state, detail);
  }

  async _ensureOpen() {
    if (this._ws || this._opening || this._subs.size === 0) return;
    if (this.state === "expired" && !this.token) return; // waiting for setToken
    this._opening = true;
    try {
      if (!this.token && this.getToken) this.token = await this.getToken();
    } catch (e) {
      this._opening = false;
      return this._retry(this._attempt++, `getting a token: ${e.message || e}`);
    }
    this._opening = false;
    if (!this.token) return this._fail("unauthorized", "no token: set token or getToken");
    if (this._subs.size === 0 || this._ws) return;
    this._connect();
  }

  _connect() {
    if (this.state !== "reconnecting") this._setState("connecting"); // a reconnect keeps its reason and hint
    const ws = new this._WS(this.url);
    this._ws = ws;
    this._authed = false;
    ws.onopen = () => {
      // The token travels in the first message, not the URL: URLs end up
      // in proxy and access logs.
      ws.send(JSON.stringify({ type: "auth", token: this.token }));
      this._authed = true;
      for (const sub of [...this._subs.values()]) this._sendSubscribe(sub, true);
      this._scheduleRefresh();
    };
    ws.onmessage = (e) => this._onMessage(e.data);
    ws.onclose = (e) => {
      if (this._ws !== ws) return; // a socket we already replaced or closed
      this._ws = null;
      this._onClose(e.code, e.reason);
    };
  }

  _onMessage(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return;
    }
    if (msg.type === "error") return this._onError(msg);
    if (msg.type === "heartbeat") return this._onHeartbeat(msg);
    if (msg.type === "board") {
      // A tournament board's times and prizes, before the first snapshot.
      const sub = this._subs.get(msg.id);
      if (sub && !sub.closed) sub.handlers.board?.(msg);
      return;
    }
    if (msg.type !== "snapshot" && msg.type !== "diff") return; // a newer server's message
    const sub = this._subs.get(msg.id);
    if (!sub || sub.closed) return; // stale: an id we replaced
    this._attempt = 0; // a message got through: the connection works
    this._failed = 0;
    this._limited = 0;
    if (this.state !== "open") this._setState("open");
    const next = applyMessage(sub.view, msg);
    if (next === null) {
      // A gap in the prev/seq chain: resume from what we hold; if the server
      // cannot, it answers with a snapshot.
      this._write({ type: "unsubscribe", id: sub.wire });
      this._sendSubscribe(sub, msg.type === "diff" && sub.view.seq !== null);
      return;
    }
    sub.view = next;
    sub.handlers.update?.(next, msg);
  }

  // _onHeartbeat leaves a gateway whose heartbeat says it is stale (its
  // replica trails past its bound, or it was paused), or that it cannot take
  // the tenant's writes unless every gateway has just said so (a cluster
  // without a majority: moving would only go round); the views resume on
  // the next URL with since. With one URL there is nowhere to go.
  _onHeartbeat(msg) {
    if (msg.writable) this._unwritable = 0;
    if (this.urls.length < 2) return;
    const unwritable = !msg.writable && (this._unwritable || 0) < this.urls.length;
    if (!msg.stale && !unwritable) return;
    if (!msg.stale) this._unwritable = (this._unwritable || 0) + 1;
    const ws = this._ws;
    this._ws = null; // its close event is ours: ignored
    if (ws) ws.close(1000, "moving to another gateway");
    for (const t of this._timers) this._clock.clear(t);
    this._timers.clear();
    this._nextURL();
    this._retry(0, msg.stale ? "the gateway is stale" : "the gateway cannot take writes");
  }

  _onError(msg) {
    const sub = msg.id != null ? this._subs.get(msg.id) : null;
    const err = { code: msg.code, message: msg.message };
    if (sub) {
      // The server refused this view (not_found board, forbidden...): it ends.
      sub.closed = true;
      this._subs.delete(sub.wire);
      sub.handlers.error?.(err);
      return;
    }
    if (msg.id != null) return; // an error about an id we already dropped
    this.dispatchEvent(new CustomEvent("error", { detail: { ...err, fatal: false } }));
  }

  _onClose(code, reason) {
    for (const t of this._timers) this._clock.clear(t);
    this._timers.clear();
    if (this._subs.size === 0) return this._setState("idle");
    switch (closeAction(code)) {
      case "fatal":
        return this._fail("forbidden", reason || "access refused", code);
      case "too-large":
        return this._fail("too_large", reason || "a message over 64 KiB", code);
      case "refresh":
        return this._refreshAfterExpiry(reason);
      case "limit":
        // The gateway answered and said why: URL, token and origin work, so
        // this is no failed try towards the hint; its own slow backoff.
        this._failed = 0;
        this._setState("reconnecting", this._detail(code, reason || "over a limit"));
        return this._later(() => this._ensureOpen(), limitDelay(this._limited++, { random: this._random }));
      case "failover":
        this._nextURL();
        return this._retry(0, reason, code); // another gateway is up: come back at once
      default:
        // 1006 (the node or the network went away), 4008 (too slow here)
        // and the rest: with several gateways, the next one, since the one
        // that dropped us may be the one that is down or overloaded.
        this._failed++;
        this._nextURL();
        return this._retry(this._attempt++, reason, code);
    }
  }

  // _refreshAfterExpiry gets a new token after a 4001 close: from getToken
  // where there is one, else from the page (a "tokenexpired" event, then
  // setToken).
  _refreshAfterExpiry(reason) {
    this.token = null;
    if (this.getToken) return this._retry(0, reason, 4001); // _ensureOpen fetches a new one
    this._setState("expired", { code: 4001, reason: reason || "token expired" });
    this.dispatchEvent(new CustomEvent("tokenexpired", { detail: { reason } }));
  }

  _nextURL() {
    const i = this.urls.indexOf(this.url);
    this.url = this.urls[(i + 1) % this.urls.length];
  }

  // _detail is a state event's detail, with the hint once too many
  // attempts in a row failed.
  _detail(code, reason) {
    const d = { code, reason };
    if (this._failed >= failedTriesHint) d.hint = connectHint;
    return d;
  }

  _retry(n, reason, code) {
    this._setState("reconnecting", this._detail(code, reason));
    this._later(() => this._ensureOpen(), backoffDelay(n, { random: this._random, ...this._backoff }));
  }

  // _scheduleRefresh sends a new token on the open connection before the
  // current one expires, so the server never closes it with 4001.
  _scheduleRefresh() {
    if (!this.getToken) return;
    const delay = refreshDelay(tokenClaims(this.token).exp);
    if (delay === null) return;
    const ws = this._ws;
    this._later(async () => {
      let token;
      try {
        token = await this.getToken();
      } catch {
        return; // keep the old token; a 4001 close will try again
      }
      if (this._ws !== ws || !token) return;
      this.token = token;
      ws.send(JSON.stringify({ type: "auth", token }));
      this._scheduleRefresh();
    }, Math.min(delay, 2 ** 31 - 1));
  }
}
