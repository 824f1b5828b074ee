// rankwire client: one WebSocket to the gateway's /v1/ws carrying any number
// of live views, written against docs/PROTOCOL.md ("Live views over
// WebSocket"), and where WebSockets cannot open, one Server-Sent Events
// stream per view (GET /v1/stream, StreamSocket). Dependency-free; the <rankwire-board> element in rankwire.js
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

/**
 * streamURL turns a WebSocket endpoint (wsURL's) into the Server-Sent
 * Events endpoint of the same gateway: http(s)://…/v1/stream.
 */
export function streamURL(ws) {
  const u = new URL(ws);
  u.protocol = u.protocol === "wss:" || u.protocol === "https:" ? "https:" : "http:";
  u.pathname = u.pathname.replace(/\/v1\/ws$/, "").replace(/\/?$/, "/v1/stream");
  u.search = "";
  u.hash = "";
  return u.toString();
}

/**
 * streamQuery is the query of GET /v1/stream for a subscribe message: its
 * fields, its view's flattened, members repeated, the token last
 * (PROTOCOL.md, "Live views over Server-Sent Events").
 */
export function streamQuery(msg, token) {
  const q = new URLSearchParams({ board: msg.board, id: msg.id });
  for (const k of ["window", "at"]) if (msg[k]) q.set(k, msg[k]);
  if (msg.follow) q.set("follow", "true");
  for (const [k, v] of Object.entries(msg.view || {})) {
    if (k === "members") for (const m of v || []) q.append("members", m);
    else if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  if (msg.since !== undefined && msg.since !== null) q.set("since", String(msg.since));
  q.set("access_token", token);
  return q.toString();
}

/**
 * parseEvents splits buf (text of an event stream) into complete events
 * ({event, data}; comments and id lines dropped: the client resumes from
 * the seq it applied) and returns them with the incomplete rest.
 */
export function parseEvents(buf) {
  const events = [];
  const text = buf.replace(/\r\n?/g, "\n");
  const blocks = text.split("\n\n");
  const rest = blocks.pop();
  for (const block of blocks) {
    let event = "message";
    const data = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length) events.push({ event, data: data.join("\n") });
  }
  return { events, rest };
}

/**
 * refusalClose is what an HTTP refusal of a stream means in the
 * WebSocket's terms: a close code for the whole connection (401: 4001 for
 * an expired token, else 4003; a 403 of the token's role or the page's
 * origin: 4003; 429: 4029; anything else: 1006, retried), or 0 where the
 * refusal is of the view alone (400, 404, a 403 whose message names the
 * board: outside the token's patterns): the subscription's error.
 */
export function refusalClose(status, body, token, now = Date.now()) {
  const msg = body?.error?.message || "";
  if (status === 401) {
    const exp = tokenClaims(token).exp;
    return typeof exp === "number" && exp * 1000 <= now ? 4001 : 4003;
  }
  if (status === 403) return /^board\b/.test(msg) ? 0 : 4003;
  if (status === 429) return 4029;
  if (status === 400 || status === 404) return 0;
  return 1006;
}

/**
 * StreamSocket carries a client's views over Server-Sent Events (one
 * fetch-streamed GET /v1/stream per view) behind the WebSocket's shape, so
 * that RankwireClient runs the same protocol on either: send takes the
 * client's auth, subscribe and unsubscribe messages; onmessage gets the
 * server's messages, the same JSON; an HTTP refusal of one view is that
 * view's error message, as a WebSocket's subscribe refusal; a stream's close
 * event, a refusal of the token, or a stream cut ends them all with onclose
 * and the close code a WebSocket would have had. fetch rather than
 * EventSource: a refusal's status and body are readable, and it never
 * reconnects behind the client's back. The token travels as access_token:
 * the one way a browser's stream request can carry it without a CORS
 * preflight; keep tokens short-lived (they land in access logs).
 */
export class StreamSocket {
  constructor(url, { fetch: f = globalThis.fetch?.bind(globalThis) } = {}) {
    this.url = streamURL(url);
    this.readyState = 0;
    this._fetch = f;
    this._token = "";
    this._streams = new Map(); // subscription id → AbortController
    queueMicrotask(() => {
      if (this.readyState !== 0) return;
      this.readyState = 1;
      this.onopen?.();
    });
  }

  send(text) {
    const msg = JSON.parse(text);
    if (msg.type === "auth") this._token = msg.token; // the next stream's; open ones end at the old one's expiry (4001)
    else if (msg.type === "subscribe") this._open(msg);
    else if (msg.type === "unsubscribe") this._drop(msg.id);
  }

  close() {
    this._end(null);
  }

  _drop(id) {
    this._streams.get(id)?.abort();
    this._streams.delete(id);
  }

  // _end aborts every stream and reports close once (not where the client
  // closed it: it has let go of this socket already).
  _end(close) {
    if (this.readyState === 3) return;
    this.readyState = 3;
    for (const a of this._streams.values()) a.abort();
    this._streams.clear();
    if (close) this.onclose?.(close);
  }

  async _open(msg) {
    this._drop(msg.id);
    const abort = new AbortController();
    this._streams.set(msg.id, abort);
    let res;
    try {
      res = await this._fetch(`${this.url}?${streamQuery(msg, this._token)}`, {
        signal: abort.signal, cache: "no-store", headers: { Accept: "text/event-stream" },
      });
    } catch (e) {
      if (!abort.signal.aborted) this._end({ code: 1006, reason: `stream: ${e.message || e}` });
      return;
    }
    if (abort.signal.aborted) return;
    if (res.status !== 200) return this._refused(msg.id, res);
    await this._read(res.body.getReader(), abort.signal, msg.id);
  }

  // _refused turns an HTTP refusal into the view's error, or the end of all.
  async _refused(id, res) {
    let body = null;
    try {
      body = await res.json();
    } catch {}
    const reason = body?.error?.message || `HTTP ${res.status}`;
    const code = refusalClose(res.status, body, this._token);
    if (code) return this._end({ code, reason });
    this._streams.delete(id);
    this.onmessage?.({ data: JSON.stringify({ type: "error", id, code: body?.error?.code || "bad_request", message: reason }) });
  }

  // _read hands each event's data on until the stream ends: its close
  // event's code, else (cut, or the gateway gone) 1006. An error event
  // ends its view alone (its board was deleted: the gateway ends the
  // stream after it), never the others.
  async _read(reader, signal, id) {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || signal.aborted) break;
        const { events, rest } = parseEvents(buf + dec.decode(value, { stream: true }));
        buf = rest;
        for (const ev of events) {
          if (signal.aborted) return;
          if (ev.event === "error") {
            this.onmessage?.({ data: ev.data });
            if (this._streams.get(id)?.signal === signal) this._streams.delete(id);
            return;
          }
          if (ev.event !== "close") {
            this.onmessage?.({ data: ev.data });
            continue;
          }
          let c = {};
          try {
            c = JSON.parse(ev.data);
          } catch {}
          return this._end({ code: c.code || 1006, reason: c.reason || "" });
        }
      }
    } catch (e) {
      if (!signal.aborted) return this._end({ code: 1006, reason: `stream cut: ${e.message || e}` });
    }
    if (!signal.aborted) this._end({ code: 1006, reason: "stream ended" });
  }
}

let clientCount = 0;

/**
 * RankwireClient keeps one WebSocket open while it has subscriptions,
 * re-authenticates before the token expires (with getToken), reconnects with
 * jittered backoff and resumes every view with `since`, and resubscribes a
 * view whose prev/seq chain broke. A view's update never goes back: a
 * resume answered with a snapshot older than the seq last shown (a gateway
 * that applied less) is held until the view passes that seq. Events: "state" (detail {state, code,
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
   * @param {"auto"|"websocket"|"sse"} [opts.transport] auto (default): a
   *   WebSocket, and Server-Sent Events after fallbackAfter WebSockets in a
   *   row failed to open, a WebSocket again every retryWebSocket ms
   * @param {number} [opts.fallbackAfter] failed WebSocket opens before SSE; default 2
   * @param {number} [opts.openTimeout] ms a WebSocket may take to open before it counts as failed; default 10000
   * @param {number} [opts.retryWebSocket] ms on SSE before a WebSocket is tried again; default 60000
   * @param {typeof fetch} [opts.fetch] the streams' fetch; default globalThis.fetch
   */
  constructor({
    url, token, getToken, WebSocket: WS = globalThis.WebSocket, fetch: f, backoff, random = Math.random, timers,
    transport = "auto", fallbackAfter = 2, openTimeout = 10_000, retryWebSocket = 60_000,
  } = {}) {
    super();
    this.transport = transport === "sse" || !WS ? "sse" : "websocket"; // the one in use
    this._auto = transport === "auto" && !!WS;
    this._fallback = { after: fallbackAfter, openTimeout, retry: retryWebSocket };
    this._wsFailed = 0; // WebSockets in a row that never opened
    this._fetch = f;
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
    const sub = { spec, handlers, view: emptyView(), shown: null, wire: null, closed: false };
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

  // _clearTimers cancels every pending reconnect and refresh.
  _clearTimers() {
    for (const t of this._timers) this._clock.clear(t);
    this._timers.clear();
  }

  // _dropSocket lets go of the connection (onclose then ignores its close
  // event) and of every pending timer.
  _dropSocket(reason) {
    this._clearTimers();
    const ws = this._ws;
    this._ws = null;
    ws?.close(1000, reason);
  }

  _shutdown(state, detail) {
    this._stopProbe();
    this._dropSocket("client done");
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
    const sse = this.transport === "sse";
    const ws = sse ? new StreamSocket(this.url, { fetch: this._fetch }) : new this._WS(this.url);
    this._ws = ws;
    this._authed = false;
    if (sse) this._armProbe();
    else this._watchOpen(ws);
    ws.onopen = () => {
      ws._opened = true;
      if (!sse) this._wsFailed = 0;
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
      if (!sse && !ws._opened) this._openFailed();
      this._onClose(e.code, e.reason);
    };
  }

  // _watchOpen closes a WebSocket as failed (1006) where it has not opened
  // within openTimeout: a proxy that holds an upgrade forever fails as one
  // that refuses it.
  _watchOpen(ws) {
    this._later(() => {
      if (this._ws !== ws || ws._opened || ws.readyState === 1) return;
      this._ws = null;
      ws.onclose = null;
      ws.close();
      this._openFailed();
      this._onClose(1006, "WebSocket did not open in time");
    }, this._fallback.openTimeout);
  }

  // _openFailed counts a WebSocket that never opened; after fallbackAfter
  // in a row (and with transport auto) the client moves to SSE.
  _openFailed() {
    if (++this._wsFailed < this._fallback.after || !this._auto) return;
    this.transport = "sse";
    this._attempt = 0; // a new transport: come back soon
    this.dispatchEvent(new CustomEvent("transport", { detail: { transport: "sse" } }));
  }

  // _armProbe schedules a WebSocket attempt retryWebSocket ms from now,
  // beside the streams: where it opens, the client moves back to
  // WebSockets (every view resumes there from its seq); where not, it tries
  // again later. Its own timer: a reconnect of the streams keeps it.
  _armProbe() {
    if (!this._auto || this._probe) return;
    this._probe = this._clock.set(() => {
      this._probe = null;
      if (this.transport !== "sse" || this._subs.size === 0) return;
      const ws = new this._WS(this.url);
      const giveUp = this._clock.set(() => { // held, neither opened nor refused
        ws.onopen = ws.onclose = null;
        ws.close();
        this._armProbe();
      }, this._fallback.openTimeout);
      ws.onopen = () => {
        this._clock.clear(giveUp);
        ws.onclose = null;
        ws.close(1000, "probe");
        if (this.transport !== "sse" || this._subs.size === 0) return;
        this._backToWebSocket();
      };
      ws.onclose = () => {
        this._clock.clear(giveUp);
        this._armProbe();
      };
    }, this._fallback.retry);
  }

  // _backToWebSocket ends the streams and reconnects on a WebSocket.
  _backToWebSocket() {
    this.transport = "websocket";
    this._wsFailed = 0;
    this.dispatchEvent(new CustomEvent("transport", { detail: { transport: "websocket" } }));
    this._dropSocket("back to WebSocket");
    this._ensureOpen();
  }

  _stopProbe() {
    if (this._probe) this._clock.clear(this._probe);
    this._probe = null;
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
    // Never back: a gateway that applied less than the seq we resumed from
    // (it lagged the one we left) waits until it has, or answers
    // unavailable (_onError moves on); one older than that rule answers
    // with the older snapshot it has.
    // It is our base, the diffs that follow apply to it, and the page sees
    // nothing until the view passes the seq it was last shown (a view's
    // seq only grows; a following view's starts over at a turnover).
    if (!sub.spec.follow && sub.shown !== null && next.seq <= sub.shown) return;
    sub.shown = next.seq;
    sub.handlers.update?.(next, msg);
  }

  // _onHeartbeat leaves a gateway whose heartbeat says it is stale (its
  // replica trails past its bound, or it was paused), or that it cannot take
  // the tenant's writes unless every gateway has just said so (a cluster
  // without a majority: moving would only go round); the views resume on
  // the next URL with since. With one URL there is nowhere to go. The count
  // of gateways that said writable false is reset by a heartbeat saying true
  // only: a dropped or refused connection, or a stale gateway, leaves it (a
  // gateway that is down says nothing about writes), as in the Go SDK's Watch.
  _onHeartbeat(msg) {
    if (msg.writable) this._unwritable = 0;
    if (this.urls.length < 2) return;
    const unwritable = !msg.writable && (this._unwritable || 0) < this.urls.length;
    if (!msg.stale && !unwritable) return;
    if (!msg.stale) this._unwritable = (this._unwritable || 0) + 1;
    this._dropSocket("moving to another gateway");
    this._nextURL();
    this._retry(0, msg.stale ? "the gateway is stale" : "the gateway cannot take writes");
  }

  _onError(msg) {
    const sub = msg.id != null ? this._subs.get(msg.id) : null;
    const err = { code: msg.code, message: msg.message };
    if (sub && !sub.closed && msg.code === "unavailable") {
      // This gateway cannot answer the view yet (it has not applied the
      // tenant's latest changes: PROTOCOL.md, "Not found in a cluster"):
      // the view stays and is asked again, through the next gateway where
      // there is one, as after a 1006 (a stream's 503 is one already).
      this._dropSocket("the gateway is behind");
      this._nextURL();
      return this._retry(this._attempt++, msg.message || "the gateway is behind");
    }
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
    this._clearTimers();
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
