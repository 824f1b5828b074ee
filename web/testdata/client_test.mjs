// Unit tests of web/static/client.js: the pure protocol logic, and the client
// against a fake WebSocket. They run in Chromium (web's TestClientLogic loads
// this module in a page) and in Node (`node web/testdata/client_test.mjs`).
import {
  applyMessage, emptyView, sortedRows, backoffDelay, tokenClaims, refreshDelay,
  closeAction, wsURL, RankwireClient, limitDelay, failedTriesHint, connectHint,
  streamURL, streamQuery, parseEvents, refusalClose,
} from "../static/client.js";

function eq(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

const row = (rank, member, score) => ({ rank, member, score, subscore: 0 });
const b64url = (o) => btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
const jwt = (claims) => `${b64url({ alg: "HS256" })}.${b64url(claims)}.sig`;

// until polls cond every 5 ms for up to 2 s: no bare sleeps as synchronisation.
async function until(cond, what) {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// FakeWS records what the client sends and lets a test play the server.
class FakeWS {
  static all = [];
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.readyState = 0;
    FakeWS.all.push(this);
    queueMicrotask(() => { this.readyState = 1; this.onopen?.(); });
  }
  send(s) { this.sent.push(JSON.parse(s)); }
  close() { this.readyState = 3; }
  serverSends(m) { this.onmessage?.({ data: JSON.stringify(m) }); }
  serverCloses(code, reason = "") { this.readyState = 3; this.onclose?.({ code, reason }); }
  subs() { return this.sent.filter((m) => m.type === "subscribe"); }
}

const fastBackoff = { base: 1, max: 1 };

// FakeClock is an injected timer: it records what the client schedules, and
// a test fires the next timer when it chooses. No wall-clock waits.
class FakeClock {
  constructor() { this.pending = []; this.n = 0; }
  set(fn, ms) { const t = ++this.n; this.pending.push({ t, fn, ms }); return t; }
  clear(t) { this.pending = this.pending.filter((p) => p.t !== t); }
  delays() { return this.pending.map((p) => p.ms); }
  fire() { const p = this.pending.shift(); if (!p) throw new Error("no timer pending"); p.fn(); }
  // fireWhere fires the first pending timer whose delay satisfies pred.
  fireWhere(pred) {
    const p = this.pending.find((x) => pred(x.ms));
    if (!p) throw new Error(`no such timer pending: ${JSON.stringify(this.delays())}`);
    this.clear(p.t);
    p.fn();
  }
}

// FlakyWS is a WebSocket behind a proxy that refuses the upgrade (close
// 1006 before open) while FlakyWS.refuse is set.
class FlakyWS {
  static refuse = true;
  static all = [];
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.readyState = 0;
    FlakyWS.all.push(this);
    const refuse = FlakyWS.refuse;
    queueMicrotask(() => {
      if (this.readyState === 3) return;
      this.readyState = refuse ? 3 : 1;
      if (refuse) this.onclose?.({ code: 1006, reason: "" });
      else this.onopen?.();
    });
  }
  send(s) { this.sent.push(JSON.parse(s)); }
  close() { this.readyState = 3; }
  subs() { return this.sent.filter((m) => m.type === "subscribe"); }
}

// fakeStreams plays the gateway's GET /v1/stream: each request is recorded
// with its URL, and the test writes its events or cuts it; refused maps a
// board to the HTTP refusal {status, body} it gets instead.
function fakeStreams(refused = {}) {
  const reqs = [];
  const enc = new TextEncoder();
  const fetch = async (url, init) => {
    const u = new URL(url);
    const r = refused[u.searchParams.get("board")];
    if (r) return new Response(JSON.stringify(r.body), { status: r.status, headers: { "Content-Type": "application/json" } });
    let ctl;
    const body = new ReadableStream({ start(c) { ctl = c; } });
    const req = {
      url: u, init,
      id: u.searchParams.get("id"),
      send: (m) => ctl.enqueue(enc.encode(`id: ${m.seq}\nevent: ${m.type}\ndata: ${JSON.stringify(m)}\n\n: ping\n\n`)),
      end: (m) => { ctl.enqueue(enc.encode(`event: ${m.type}\ndata: ${JSON.stringify(m)}\n\n`)); ctl.close(); },
      close: (code, reason) => { ctl.enqueue(enc.encode(`event: close\ndata: ${JSON.stringify({ code, reason })}\n\n`)); ctl.close(); },
      cut: () => ctl.error(new TypeError("network error")),
    };
    init.signal.addEventListener("abort", () => { try { ctl.error(new DOMException("aborted", "AbortError")); } catch {} });
    reqs.push(req);
    return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
  };
  return { fetch, reqs };
}

// connected makes a client on a fake socket and clock with one subscription
// that got a snapshot at seq 3; it returns the client, the clock and the
// state events seen.
async function connected(opts = {}) {
  FakeWS.all = [];
  const clock = new FakeClock();
  const c = new RankwireClient({ url: "http://h", token: "t", WebSocket: FakeWS, timers: clock, random: () => 0.5, ...opts });
  const states = [];
  c.addEventListener("state", (e) => states.push(e.detail));
  c.subscribe({ board: "b", view: { kind: "top" } });
  await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
  FakeWS.all[0].serverSends({ type: "snapshot", id: FakeWS.all[0].subs()[0].id, seq: 3, total: 0, rows: [] });
  return { c, clock, states, last: () => FakeWS.all[FakeWS.all.length - 1] };
}

export const tests = {
  "snapshot replaces state"() {
    const s = applyMessage(emptyView(), { type: "snapshot", id: "a", seq: 5, total: 3, rows: [row(2, "b", 8), row(1, "a", 9)] });
    eq(s.seq, 5, "seq");
    eq(sortedRows(s).map((r) => r.member), ["a", "b"], "rows in rank order");
  },
  "diff drops gone ranks then puts rows"() {
    let s = applyMessage(emptyView(), { type: "snapshot", seq: 5, total: 3, rows: [row(1, "a", 9), row(2, "b", 8), row(3, "c", 7)] });
    s = applyMessage(s, { type: "diff", seq: 9, prev: 5, total: 2, rows: [row(1, "c", 10), row(2, "a", 9)], gone: [3, 2] });
    eq(s.total, 2, "total");
    eq(sortedRows(s).map((r) => [r.rank, r.member]), [[1, "c"], [2, "a"]], "rows");
  },
  "diff with a gap is refused"() {
    const s = applyMessage(emptyView(), { type: "snapshot", seq: 5, total: 1, rows: [row(1, "a", 9)] });
    eq(applyMessage(s, { type: "diff", seq: 9, prev: 6, total: 1, rows: [] }), null, "gap");
    eq(applyMessage(emptyView(), { type: "diff", seq: 9, prev: 6, total: 1, rows: [] }), null, "diff before snapshot");
  },
  "input state is not modified"() {
    const s = applyMessage(emptyView(), { type: "snapshot", seq: 1, total: 1, rows: [row(1, "a", 9)] });
    applyMessage(s, { type: "diff", seq: 2, prev: 1, total: 0, rows: [], gone: [1] });
    eq(s.rows.size, 1, "old state rows");
  },
  "backoff grows, is jittered and capped"() {
    eq(backoffDelay(0, { random: () => 0.999 }) <= 250, true, "first ceiling");
    eq(backoffDelay(3, { random: () => 0.5 }), 1000, "half of 2000");
    eq(backoffDelay(50, { random: () => 0.999 }) <= 8000, true, "cap");
    eq(backoffDelay(5, { random: () => 0 }), 50, "floor");
  },
  "token claims and refresh time"() {
    eq(tokenClaims(jwt({ sub: "p42", exp: 1000 })).sub, "p42", "sub");
    eq(tokenClaims("garbage"), {}, "garbage");
    eq(refreshDelay(1000, 0), 940_000, "a minute early");
    eq(refreshDelay(10, 0), 8_000, "a fifth early for short tokens");
    eq(refreshDelay(undefined), null, "no exp");
  },
  "close codes"() {
    eq([4001, 4003, 4008, 1001, 1006, 1009, 4029].map(closeAction),
      ["refresh", "fatal", "retry", "failover", "retry", "too-large", "limit"], "actions");
  },
  "4029 backoff: 1 s doubling to 60 s, jittered"() {
    eq([0, 1, 2, 5, 6, 30].map((n) => limitDelay(n, { random: () => 0.5 })), [1000, 2000, 4000, 32000, 60000, 60000], "middle of each step");
    eq(limitDelay(0, { random: () => 0 }), 750, "lowest draw");
    eq(limitDelay(10, { random: () => 0.999 }), 60000, "never past 60 s");
  },
  "ws url"() {
    eq(wsURL("https://rank.example.com"), "wss://rank.example.com/v1/ws", "https");
    eq(wsURL("http://h:8080/v1/ws?x=1"), "ws://h:8080/v1/ws", "already the endpoint");
  },

  "stream url, query and events"() {
    eq(streamURL(wsURL("https://rank.example.com/base")), "https://rank.example.com/base/v1/stream", "https");
    eq(streamURL("ws://h:8080/v1/ws"), "http://h:8080/v1/stream", "ws");
    eq(streamQuery({ board: "b", id: "c1-2", window: "week", view: { kind: "members", members: ["p1", "p2"] }, since: 7 }, "tok"),
      "board=b&id=c1-2&window=week&kind=members&members=p1&members=p2&since=7&access_token=tok", "query");
    eq(streamQuery({ board: "b", id: "c1-3", window: "day", follow: true, view: { kind: "top", limit: 5 } }, "tok"),
      "board=b&id=c1-3&window=day&follow=true&kind=top&limit=5&access_token=tok", "a following view");
    const { events, rest } = parseEvents("id: 4\r\nevent: snapshot\r\ndata: {\"seq\":4}\r\n\r\n: ping\n\nevent: diff\nda");
    eq(events, [{ event: "snapshot", data: "{\"seq\":4}" }], "events, comment dropped");
    eq(rest, "event: diff\nda", "incomplete rest kept");
  },
  "stream refusals in the WebSocket's terms"() {
    const expired = jwt({ exp: 1 }), live = jwt({ exp: 4e9 });
    const body = (message) => ({ error: { message } });
    eq([
      refusalClose(401, body("token: expired"), expired), refusalClose(401, body("token: bad signature"), live),
      refusalClose(403, body("token: role not granted"), live), refusalClose(403, body("Origin: \"x\" may not open streams"), live),
      refusalClose(403, body("board: \"x\" is not among the token's boards"), live), refusalClose(404, body("board"), live),
      refusalClose(400, body("limit: 1000 is not in 1..100"), live), refusalClose(429, body("cap"), live), refusalClose(502, null, live),
    ], [4001, 4003, 4003, 4003, 0, 0, 0, 4029, 1006], "codes");
  },

  async "after failed WebSocket opens the views stream over SSE, resume a cut stream from their seq, and go back to a WebSocket"() {
    FlakyWS.all = [];
    FlakyWS.refuse = true;
    const clock = new FakeClock();
    const streams = fakeStreams();
    const c = new RankwireClient({ url: "http://h", token: "t", WebSocket: FlakyWS, fetch: streams.fetch, timers: clock, random: () => 0.5, retryWebSocket: 30_000 });
    const transports = [];
    c.addEventListener("transport", (e) => transports.push(e.detail.transport));
    const seen = [];
    c.subscribe({ board: "b", view: { kind: "top", limit: 3 } }, { update: (v) => seen.push(v.seq) });
    for (let i = 1; i <= 2; i++) { // two refused upgrades, each retried after its backoff
      await until(() => FlakyWS.all.length === i && FlakyWS.all[i - 1].readyState === 3 && c.state === "reconnecting", `refused upgrade ${i}`);
      clock.fireWhere((ms) => ms !== 30_000);
    }
    eq(transports, ["sse"], "moved to SSE after 2 refused upgrades");
    await until(() => streams.reqs.length === 1, "stream request");
    const q = streams.reqs[0].url.searchParams;
    eq([streams.reqs[0].url.pathname, q.get("board"), q.get("kind"), q.get("limit"), q.get("access_token"), q.has("since")],
      ["/v1/stream", "b", "top", "3", "t", false], "stream query");
    streams.reqs[0].send({ type: "snapshot", id: streams.reqs[0].id, seq: 3, total: 0, rows: [] });
    streams.reqs[0].send({ type: "diff", id: streams.reqs[0].id, seq: 5, prev: 3, total: 1, rows: [row(1, "a", 9)], gone: [] });
    await until(() => seen.length === 2, "snapshot and diff over SSE");
    eq([seen, c.state], [[3, 5], "open"], "applied");

    streams.reqs[0].cut();
    await until(() => c.state === "reconnecting", "reconnecting after the cut");
    clock.fireWhere((ms) => ms !== 30_000);
    await until(() => streams.reqs.length === 2, "stream reopened");
    eq(streams.reqs[1].url.searchParams.get("since"), "5", "resumes from the last seq applied");
    streams.reqs[1].send({ type: "diff", id: streams.reqs[1].id, seq: 6, prev: 5, total: 1, rows: [row(1, "a", 10)], gone: [] });
    await until(() => seen.length === 3, "diff after resume");

    FlakyWS.refuse = false; // the network lets WebSockets through again
    clock.fireWhere((ms) => ms === 30_000);
    await until(() => FlakyWS.all.at(-1).subs().length === 1, "resubscribed on a WebSocket");
    eq([transports, FlakyWS.all.at(-1).subs()[0].since, streams.reqs[1].init.signal.aborted], [["sse", "websocket"], 6, true], "back on a WebSocket, resumed, stream ended");
    c.close();
  },

  async "a stream refused for its view ends that subscription; a close event acts as a WebSocket close"() {
    const streams = fakeStreams({ nope: { status: 404, body: { error: { code: "not_found", message: "board: not found" } } } });
    const clock = new FakeClock();
    const c = new RankwireClient({ url: "http://h", token: "t", transport: "sse", fetch: streams.fetch, timers: clock, random: () => 0.5 });
    let err = null, fatal = null;
    c.subscribe({ board: "nope", view: { kind: "top" } }, { error: (e) => { err = e; } });
    c.subscribe({ board: "ok", view: { kind: "top" } }, { error: (e) => { fatal = e; } });
    await until(() => err !== null && streams.reqs.length === 1, "refusal and stream");
    eq(err, { code: "not_found", message: "board: not found" }, "the view's error");
    streams.reqs[0].close(4003, "key removed");
    await until(() => fatal !== null, "refused connection");
    eq([fatal.code, fatal.close, fatal.fatal, c.state], ["forbidden", 4003, true, "error"], "4003 close event ends it for good");
  },

  async "a stream's error event (its board deleted) ends that view alone, then its stream, with no reconnect"() {
    const streams = fakeStreams();
    const clock = new FakeClock();
    const c = new RankwireClient({ url: "http://h", token: "t", transport: "sse", fetch: streams.fetch, timers: clock, random: () => 0.5 });
    let err = null;
    const other = [];
    c.subscribe({ board: "weekly", view: { kind: "top" } }, { error: (e) => { err = e; } });
    c.subscribe({ board: "daily", view: { kind: "top" } }, { update: (v) => other.push(v.seq) });
    await until(() => streams.reqs.length === 2, "two streams");
    const [weekly, daily] = streams.reqs[0].url.searchParams.get("board") === "weekly" ? streams.reqs : [...streams.reqs].reverse();
    weekly.send({ type: "snapshot", id: weekly.id, seq: 3, total: 0, rows: [] });
    daily.send({ type: "snapshot", id: daily.id, seq: 1, total: 0, rows: [] });
    await until(() => other.length === 1 && c.state === "open", "snapshots");
    weekly.end({ type: "error", id: weekly.id, code: "not_found", message: "board: \"weekly\" was deleted" });
    await until(() => err !== null, "the deleted board's error");
    eq(err, { code: "not_found", message: "board: \"weekly\" was deleted" }, "the view's error");
    daily.send({ type: "diff", id: daily.id, seq: 2, prev: 1, total: 1, rows: [row(1, "a", 9)], gone: [] });
    await until(() => other.length === 2, "the other view goes on");
    eq([c.state, streams.reqs.length, clock.pending.length === 0 || clock.delays().every((ms) => ms > 1000)], ["open", 2, true], "no reconnect, no new stream");
    c.close();
  },

  async "a board message reaches the subscription's board handler, before its snapshot"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: "t", WebSocket: FakeWS, timers: new FakeClock() });
    const seen = [];
    c.subscribe({ board: "cup", view: { kind: "top" } }, { board: (b) => seen.push(["board", b.ends_at, b.prizes.length]), update: (v) => seen.push(["update", v.seq]) });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    const id = FakeWS.all[0].subs()[0].id;
    FakeWS.all[0].serverSends({ type: "board", id: "someone-else", board: "cup", ends_at: "x", prizes: [] });
    FakeWS.all[0].serverSends({ type: "board", id, board: "cup", ends_at: "2099-01-01T00:00:00.000Z", prizes: [{ from: 1, to: 1, prize: "€5" }] });
    FakeWS.all[0].serverSends({ type: "snapshot", id, seq: 4, total: 0, rows: [] });
    eq(seen, [["board", "2099-01-01T00:00:00.000Z", 1], ["update", 4]], "board then update, for its own id only");
    c.close();
  },

  async "client authenticates, subscribes, applies"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: jwt({ sub: "me", exp: 4e9 }), WebSocket: FakeWS });
    const seen = [];
    c.subscribe({ board: "weekly", view: { kind: "top", limit: 2 } }, { update: (v) => seen.push(v.seq) });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    const ws = FakeWS.all[0];
    eq(ws.sent[0].type, "auth", "auth first");
    const id = ws.subs()[0].id;
    ws.serverSends({ type: "snapshot", id, seq: 1, total: 1, rows: [row(1, "me", 5)] });
    ws.serverSends({ type: "diff", id, seq: 2, prev: 1, total: 1, rows: [row(1, "me", 6)], gone: [] });
    eq(seen, [1, 2], "updates");
    eq(c.state, "open", "state");
    eq(c.subject, "me", "subject");
    c.close();
  },
  async "client resubscribes on a gap, from its seq"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: jwt({ exp: 4e9 }), WebSocket: FakeWS });
    c.subscribe({ board: "b", view: { kind: "top" } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    const ws = FakeWS.all[0];
    const id = ws.subs()[0].id;
    ws.serverSends({ type: "snapshot", id, seq: 1, total: 0, rows: [] });
    ws.serverSends({ type: "diff", id, seq: 5, prev: 3, total: 0, rows: [] });
    const again = ws.subs()[1];
    eq([again.since, again.id !== id], [1, true], "resubscribed with since under a new id");
    eq(ws.sent.some((m) => m.type === "unsubscribe" && m.id === id), true, "old id unsubscribed");
    c.close();
  },
  async "client reconnects and resumes with since"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: jwt({ exp: 4e9 }), WebSocket: FakeWS, backoff: fastBackoff });
    c.subscribe({ board: "b", window: "day", view: { kind: "rank", rank: 100 } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    const id = FakeWS.all[0].subs()[0].id;
    FakeWS.all[0].serverSends({ type: "snapshot", id, seq: 7, total: 0, rows: [] });
    FakeWS.all[0].serverCloses(1001, "server shutting down");
    eq(c.state, "reconnecting", "state after 1001");
    await until(() => FakeWS.all[1]?.subs().length === 1, "resubscribe");
    const s = FakeWS.all[1].subs()[0];
    eq([s.since, s.window, s.view.rank], [7, "day", 100], "resumed");
    c.close();
  },
  async "4003 and 1009 are fatal: no reconnect"() {
    for (const [code, want] of [[4003, "forbidden"], [1009, "too_large"]]) {
      FakeWS.all = [];
      const c = new RankwireClient({ url: "http://h", token: "bad", WebSocket: FakeWS, backoff: fastBackoff });
      let err = null;
      c.addEventListener("error", (e) => { err = e.detail; });
      c.subscribe({ board: "b", view: { kind: "top" } });
      await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
      FakeWS.all[0].serverCloses(code, "no");
      eq([c.state, err?.fatal, err?.code, err?.message], ["error", true, want, "no"], `after ${code}`);
      await new Promise((r) => setTimeout(r, 20));
      eq(FakeWS.all.length, 1, `no reconnect after ${code}`);
    }
  },
  async "4001 without getToken asks the page, then reconnects with setToken"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: jwt({ n: 1, exp: 4e9 }), WebSocket: FakeWS, backoff: fastBackoff });
    let asked = 0;
    c.addEventListener("tokenexpired", () => asked++);
    c.subscribe({ board: "b", view: { kind: "top" } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    FakeWS.all[0].serverCloses(4001, "token expired");
    eq([c.state, asked], ["expired", 1], "waiting for a token");
    await new Promise((r) => setTimeout(r, 20));
    eq(FakeWS.all.length, 1, "no reconnect without a token");
    c.setToken(jwt({ n: 2, exp: 4e9 }));
    await until(() => FakeWS.all[1]?.subs().length === 1, "reconnect");
    eq(tokenClaims(FakeWS.all[1].sent[0].token).n, 2, "the page's new token");
    c.close();
  },
  async "1001 fails over to the next URL and resumes"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: ["http://a", "http://b"], token: "t", WebSocket: FakeWS, backoff: fastBackoff });
    c.subscribe({ board: "b", view: { kind: "top" } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    const id = FakeWS.all[0].subs()[0].id;
    FakeWS.all[0].serverSends({ type: "snapshot", id, seq: 3, total: 0, rows: [] });
    FakeWS.all[0].serverCloses(1001, "server shutting down");
    await until(() => FakeWS.all[1]?.subs().length === 1, "reconnect");
    eq([FakeWS.all[0].url, FakeWS.all[1].url, FakeWS.all[1].subs()[0].since], ["ws://a/v1/ws", "ws://b/v1/ws", 3], "second URL, resumed");
    c.close();
  },
  async "a resume answered with an older snapshot is shown only once the view passes the seq shown"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: ["http://a", "http://b"], token: "t", WebSocket: FakeWS, backoff: fastBackoff });
    const seen = [];
    c.subscribe({ board: "b", view: { kind: "top" } }, { update: (v) => seen.push(v.seq) });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    const row = (member, score) => ({ rank: 1, member, score, subscore: 0 });
    FakeWS.all[0].serverSends({ type: "snapshot", id: FakeWS.all[0].subs()[0].id, seq: 450, total: 1, rows: [row("a", 2)] });
    FakeWS.all[0].serverCloses(1001, "server shutting down");
    await until(() => FakeWS.all[1]?.subs().length === 1, "reconnect");
    const b = FakeWS.all[1], id = b.subs()[0].id;
    eq(b.subs()[0].since, 450, "resumed from the seq shown");
    // The gateway behind has applied up to 448: its snapshot, then its chain.
    b.serverSends({ type: "snapshot", id, seq: 448, total: 1, rows: [row("a", 1)] });
    b.serverSends({ type: "diff", id, seq: 449, prev: 448, total: 1, rows: [row("a", 1.5)] });
    b.serverSends({ type: "diff", id, seq: 450, prev: 449, total: 1, rows: [row("a", 2)] });
    eq([seen, FakeWS.all.length], [[450], 2], "nothing older or again shown; the chain held, no reconnect");
    b.serverSends({ type: "diff", id, seq: 451, prev: 450, total: 1, rows: [row("a", 3)] });
    eq(seen, [450, 451], "shown once past the seq shown");
    c.close();
  },
  async "a stale heartbeat moves to the next URL and resumes; unwritable everywhere stays"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: ["http://a", "http://b"], token: "t", WebSocket: FakeWS, backoff: fastBackoff });
    c.subscribe({ board: "b", view: { kind: "top" } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    const id = FakeWS.all[0].subs()[0].id;
    FakeWS.all[0].serverSends({ type: "snapshot", id, seq: 3, total: 0, rows: [] });
    FakeWS.all[0].serverSends({ type: "heartbeat", seq: 90, writable: true, stale: false, at: "2026-11-27T01:02:03.456Z" });
    eq(FakeWS.all.length, 1, "a fresh, writable gateway is kept");
    FakeWS.all[0].serverSends({ type: "heartbeat", seq: 90, writable: true, stale: true, at: "2026-11-27T01:02:05.456Z" });
    await until(() => FakeWS.all[1]?.subs().length === 1, "moved");
    eq([FakeWS.all[0].readyState, FakeWS.all[1].url, FakeWS.all[1].subs()[0].since], [3, "ws://b/v1/ws", 3], "left a, resumed on b");
    // Every gateway says it cannot take writes: after one round, it stays.
    FakeWS.all[1].serverSends({ type: "heartbeat", seq: 95, writable: false, stale: false, at: "2026-11-27T01:02:07.456Z" });
    await until(() => FakeWS.all[2]?.subs().length === 1, "moved on unwritable");
    FakeWS.all[2].serverSends({ type: "heartbeat", seq: 95, writable: false, stale: false, at: "2026-11-27T01:02:09.456Z" });
    await until(() => FakeWS.all[3]?.subs().length === 1, "moved on unwritable again");
    FakeWS.all[3].serverSends({ type: "heartbeat", seq: 95, writable: false, stale: false, at: "2026-11-27T01:02:11.456Z" });
    eq([FakeWS.all.length, FakeWS.all[3].readyState], [4, 1], "every gateway unwritable: stays");
    c.close();
  },
  async "the unwritable count outlives a gateway that is down; only writable true resets it"() {
    // The Go SDK's Watch keeps the same rule (client/liveness.go,
    // countUnwritable): a cluster without a majority, one node gone, the
    // others unwritable: after one round the client stays.
    FakeWS.all = [];
    const c = new RankwireClient({ url: ["http://a", "http://b", "http://c"], token: "t", WebSocket: FakeWS, backoff: fastBackoff });
    c.subscribe({ board: "b", view: { kind: "top" } });
    const beat = (ws, writable) => ws.serverSends({ type: "heartbeat", seq: 95, writable, stale: false, at: "2026-11-27T01:02:07.456Z" });
    const at = async (i, url) => {
      await until(() => FakeWS.all[i]?.subs().length === 1, `connection ${i}`);
      eq(FakeWS.all[i].url, url, `connection ${i}'s URL`);
      return FakeWS.all[i];
    };
    beat(await at(0, "ws://a/v1/ws"), false); // 1 unwritable
    (await at(1, "ws://b/v1/ws")).serverCloses(1006, ""); // b is down
    beat(await at(2, "ws://c/v1/ws"), false); // 2
    beat(await at(3, "ws://a/v1/ws"), false); // 3: every live gateway said so
    (await at(4, "ws://b/v1/ws")).serverCloses(1006, "");
    const last = await at(5, "ws://c/v1/ws");
    beat(last, false);
    eq([FakeWS.all.length, last.readyState], [6, 1], "one round said unwritable, b down between: stays on c");
    beat(last, true);
    beat(last, false);
    await until(() => FakeWS.all[6]?.subs().length === 1, "moved after writable true reset the count");
    c.close();
  },
  async "4029 reconnects slowly, saying why"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: "t", WebSocket: FakeWS, backoff: fastBackoff });
    const states = [];
    c.addEventListener("state", (e) => states.push(e.detail));
    c.subscribe({ board: "b", view: { kind: "top" } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    FakeWS.all[0].serverCloses(4029, "tenant connection limit");
    const last = states[states.length - 1];
    eq([last.state, last.code, last.reason], ["reconnecting", 4029, "tenant connection limit"], "state event");
    await new Promise((r) => setTimeout(r, 50));
    eq(FakeWS.all.length, 1, "not back within 50 ms (at least 750 ms)");
    c.close();
  },
  async "after failed tries in a row the state says what to check"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: "t", WebSocket: FakeWS, backoff: fastBackoff });
    const hints = [];
    c.addEventListener("state", (e) => hints.push(e.detail.hint));
    c.subscribe({ board: "b", view: { kind: "top" } });
    for (let i = 0; i < failedTriesHint; i++) {
      await until(() => FakeWS.all[i]?.readyState === 1, `attempt ${i}`);
      FakeWS.all[i].serverCloses(1006, "");
    }
    eq(hints.slice(0, -1).every((h) => h === undefined), true, "no hint before");
    eq(hints[hints.length - 1], connectHint, "hint after");
    c.close();
  },
  async "4029 waits 1 s doubling to 60 s (injected clock), resumes with since, never hints"() {
    const { c, clock, states, last } = await connected();
    const waits = [];
    for (let i = 0; i < 8; i++) {
      last().serverCloses(4029, "tenant connection limit");
      waits.push(...clock.delays());
      eq(states[states.length - 1], { state: "reconnecting", code: 4029, reason: "tenant connection limit" }, `state after close ${i}`);
      const n = FakeWS.all.length;
      clock.fire();
      await until(() => FakeWS.all.length === n + 1 && last().subs().length === 1, `reconnect ${i}`);
      eq(last().subs()[0].since, 3, `resumed with since after close ${i}`);
    }
    eq(waits, [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000], "waits");
    c.close();
  },
  async "4029 jitter spreads widgets out: 75 % to 125 %"() {
    for (const [r, want] of [[0, 750], [0.999, 1249]]) {
      const { c, clock, last } = await connected({ random: () => r });
      last().serverCloses(4029, "");
      eq(clock.delays(), [want], `random ${r}`);
      c.close();
    }
  },
  async "4008 backs off briefly and resumes with since"() {
    const { c, clock, states, last } = await connected();
    last().serverCloses(4008, "too slow: bytes unsent past the slow timeout");
    eq(clock.delays(), [125], "half of the first 250 ms step");
    eq([states.at(-1).state, states.at(-1).code, states.at(-1).hint], ["reconnecting", 4008, undefined], "state");
    clock.fire();
    await until(() => FakeWS.all.length === 2 && last().subs().length === 1, "reconnect");
    eq(last().subs()[0].since, 3, "since");
    c.close();
  },
  async "4008 with two gateways resumes on the other one"() {
    const { c, clock, last } = await connected({ url: ["http://a", "http://b"] });
    last().serverCloses(4008, "too slow");
    clock.fire();
    await until(() => FakeWS.all.length === 2 && last().subs().length === 1, "reconnect");
    eq([last().url, last().subs()[0].since], ["ws://b/v1/ws", 3], "the other gateway, resumed");
    c.close();
  },
  async "1006: backoff grows to 8 s, the next URL each time; after three tries the hint"() {
    const { c, clock, states, last } = await connected({ url: ["http://a", "http://b"], random: () => 0.999 });
    const waits = [];
    const urls = [];
    let hintAt = -1;
    for (let i = 0; i < 7; i++) {
      last().serverCloses(1006, "");
      if (hintAt < 0 && states.at(-1).hint === connectHint) hintAt = i;
      waits.push(...clock.delays());
      clock.fire();
      const n = i + 2;
      await until(() => FakeWS.all.length === n && last().readyState === 1, `attempt ${n}`);
      urls.push(last().url);
    }
    eq(waits, [249, 499, 999, 1998, 3996, 7992, 7992], "waits");
    eq(urls.map((u) => u[5]), ["b", "a", "b", "a", "b", "a", "b"], "the other URL after every failure");
    eq([hintAt, states.at(-1).hint], [failedTriesHint - 1, connectHint], "the hint from the third failed try in a row on");
    c.close();
  },
  async "4003 reaches the state event with its reason and schedules nothing"() {
    const { c, clock, states, last } = await connected();
    last().serverCloses(4003, "origin refused: https://evil.example");
    eq(states.at(-1), { state: "error", code: "forbidden", reason: "origin refused: https://evil.example" }, "state");
    eq(clock.delays(), [], "no timer");
    c.close();
  },
  async "4003 and 1009 call every subscription's error handler once, with the code and reason"() {
    for (const [close, code] of [[4003, "forbidden"], [1009, "too_large"]]) {
      FakeWS.all = [];
      const c = new RankwireClient({ url: "http://h", token: "t", WebSocket: FakeWS, backoff: fastBackoff });
      const got = { a: [], b: [] };
      for (const name of ["a", "b"]) {
        c.subscribe({ board: name, view: { kind: "top" } }, { error: (e) => { got[name].push(e); } });
      }
      await until(() => FakeWS.all[0]?.subs().length === 2, "two subscribes");
      FakeWS.all[0].serverCloses(close, "origin refused: https://evil.example");
      const want = [{ code, message: "origin refused: https://evil.example", fatal: true, close }];
      eq(got, { a: want, b: want }, `handlers after ${close}`);
      eq(c.state, "error", `state after ${close}`);
      // The subscriptions ended: closing them sends nothing and calls nothing again.
      c.close();
      eq([got.a.length, got.b.length], [1, 1], `handlers after close() following ${close}`);
    }
  },
  async "a fatal close calls error handlers without a reason too"() {
    const { c, last } = await connected();
    let err = null;
    c.subscribe({ board: "b2", view: { kind: "top" } }, { error: (e) => { err = e; } });
    last().serverCloses(4003);
    eq(err, { code: "forbidden", message: "access refused", fatal: true, close: 4003 }, "default reason");
    c.close();
  },
  async "1009 reports too_large and schedules nothing"() {
    const { c, clock, states, last } = await connected();
    last().serverCloses(1009, "message too big");
    eq([states.at(-1).state, states.at(-1).code], ["error", "too_large"], "state");
    eq(clock.delays(), [], "no timer");
    c.close();
  },
  async "4001 with getToken fetches a new token and reconnects"() {
    FakeWS.all = [];
    let n = 0;
    const c = new RankwireClient({ url: "http://h", getToken: async () => jwt({ n: ++n, exp: 4e9 }), WebSocket: FakeWS, backoff: fastBackoff });
    c.subscribe({ board: "b", view: { kind: "top" } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    FakeWS.all[0].serverCloses(4001, "token expired");
    await until(() => FakeWS.all[1]?.subs().length === 1, "reconnect");
    eq(tokenClaims(FakeWS.all[1].sent[0].token).n, 2, "the second token");
    c.close();
  },
  async "a view the gateway cannot answer yet (unavailable) is asked again through the next gateway"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: ["http://a", "http://b"], token: "t", WebSocket: FakeWS, backoff: fastBackoff });
    let err = null;
    c.subscribe({ board: "late", view: { kind: "top" } }, { error: (e) => { err = e; } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    FakeWS.all[0].serverSends({ type: "error", id: FakeWS.all[0].subs()[0].id, code: "unavailable", message: "this gateway has not applied its tenant's latest changes yet; retry, or ask another gateway" });
    await until(() => FakeWS.all[1]?.subs().length === 1, "subscribed again");
    eq([FakeWS.all[0].readyState, FakeWS.all[1].url, FakeWS.all[1].subs()[0].board, err], [3, "ws://b/v1/ws", "late", null], "left a, asked b, no error");
    const id = FakeWS.all[1].subs()[0].id;
    FakeWS.all[1].serverSends({ type: "snapshot", id, seq: 4, total: 0, rows: [] });
    eq(c.state, "open", "the view opened on b");
    c.close();
  },
  async "a refused view reports its error and ends"() {
    FakeWS.all = [];
    const c = new RankwireClient({ url: "http://h", token: "t", WebSocket: FakeWS });
    let err = null;
    c.subscribe({ board: "nope", view: { kind: "top" } }, { error: (e) => { err = e; } });
    await until(() => FakeWS.all[0]?.subs().length === 1, "subscribe");
    FakeWS.all[0].serverSends({ type: "error", id: FakeWS.all[0].subs()[0].id, code: "not_found", message: "board nope" });
    eq(err, { code: "not_found", message: "board nope" }, "error");
    c.close();
  },
};

// run runs every test and returns {passed, failures}.
export async function run() {
  const failures = [];
  let passed = 0;
  for (const [name, fn] of Object.entries(tests)) {
    try {
      await fn();
      passed++;
    } catch (e) {
      failures.push(`${name}: ${e.message}`);
    }
  }
  return { passed, failures };
}

if (typeof process !== "undefined" && process.argv?.[1]?.endsWith("client_test.mjs")) {
  const { passed, failures } = await run();
  for (const f of failures) console.log("FAIL", f);
  console.log(`${passed} passed, ${failures.length} failed`);
  process.exitCode = failures.length ? 1 : 0;
}
