// The protocol's golden messages (wire/testdata, generated from the Go
// package wire) read by client.js and checked against client.d.ts, with
// Node's own test runner:
//   node --test web/testdata/wire_golden.test.mjs
// A field renamed in wire fails here as well as in Go.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { applyMessage, emptyView, sortedRows, closeAction, RankwireClient } from "../static/client.js";

const golden = (name) => JSON.parse(readFileSync(new URL(`../../wire/testdata/${name}.json`, import.meta.url), "utf8"));

test("the golden snapshot and diff make the view the diff describes", () => {
  const snap = golden("snapshot"), diff = golden("diff");
  let v = applyMessage(emptyView(), snap);
  assert.equal(v.seq, snap.seq);
  assert.equal(v.total, snap.total);
  assert.deepEqual(sortedRows(v), snap.rows);
  v = applyMessage(v, diff);
  assert.notEqual(v, null, "the diff's prev is the snapshot's seq");
  assert.equal(v.seq, diff.seq);
  assert.equal(v.total, diff.total);
  assert.deepEqual(sortedRows(v), diff.rows); // it moves every row and drops the rest
});

test("the golden close is final", () => {
  const c = golden("close");
  assert.equal(closeAction(c.code), "fatal");
});

// FakeWS plays the server: it records what the client sends.
class FakeWS {
  static last = null;
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.readyState = 0;
    FakeWS.last = this;
    queueMicrotask(() => { this.readyState = 1; this.onopen?.(); });
  }
  send(s) { this.sent.push(JSON.parse(s)); }
  close() { this.readyState = 3; }
  serverSends(m) { this.onmessage?.({ data: JSON.stringify(m) }); }
}

async function until(cond, what) {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

test("the client sends the golden subscribe and takes the golden board, snapshot, diff and error", async () => {
  const want = golden("subscribe_top");
  const seen = { board: null, updates: [], error: null };
  const client = new RankwireClient({ url: "http://gw.test", token: "t", WebSocket: FakeWS, timers: { set() {}, clear() {} } });
  client.subscribe({ board: want.board, window: want.window, at: want.at, view: want.view }, {
    board: (m) => { seen.board = m; },
    update: (v) => seen.updates.push(sortedRows(v)),
    error: (e) => { seen.error = e; },
  });
  await until(() => FakeWS.last?.sent.length === 2, "auth and subscribe");
  const ws = FakeWS.last;
  assert.deepEqual(ws.sent[0], { type: "auth", token: "t" });
  const sub = ws.sent[1];
  const { since, ...first } = want; // a first subscribe has no since to resume from
  assert.equal(typeof since, "number");
  assert.deepEqual(sub, { ...first, id: sub.id });
  for (const name of ["board", "snapshot", "diff", "error"]) ws.serverSends({ ...golden(name), id: sub.id });
  assert.deepEqual(seen.board, { ...golden("board"), id: sub.id });
  assert.deepEqual(seen.updates, [golden("snapshot").rows, golden("diff").rows]);
  const e = golden("error");
  assert.deepEqual(seen.error, { code: e.code, message: e.message });
  client.close();
});

// fields returns the property names of interface name in client.d.ts.
function fields(dts, name) {
  const m = dts.match(new RegExp(`export interface ${name} \\{([^}]*)\\}`));
  assert.ok(m, `client.d.ts has no interface ${name}`);
  return m[1].split(/[;\n]/).map((p) => p.trim().match(/^([a-z_]+)\??:/)).filter(Boolean).map((f) => f[1]).sort();
}

test("client.d.ts declares exactly the golden messages' fields", () => {
  const dts = readFileSync(new URL("../static/client.d.ts", import.meta.url), "utf8").replace(/\/\*\*[^]*?\*\//g, "");
  const keys = (...objs) => [...new Set(objs.flatMap((o) => Object.keys(o)))].sort();
  const snap = golden("snapshot"), diff = golden("diff"), board = golden("board");
  assert.deepEqual(fields(dts, "SnapshotMessage"), keys(snap));
  assert.deepEqual(fields(dts, "DiffMessage"), keys(diff));
  assert.deepEqual(fields(dts, "ErrorMessage"), keys(golden("error")));
  assert.deepEqual(fields(dts, "BoardMessage"), keys(board));
  assert.deepEqual(fields(dts, "Row"), keys(...snap.rows, ...diff.rows));
  assert.deepEqual(fields(dts, "Prize"), keys(...board.prizes));
  assert.deepEqual(fields(dts, "SubscribeSpec"), keys(golden("subscribe_top"), golden("subscribe_around")).filter((k) => !["type", "id", "since"].includes(k)));
});

test("a following view sends the golden follow subscribe, and a new window's snapshot replaces its rows", async () => {
  const want = golden("subscribe_around");
  const updates = [];
  const client = new RankwireClient({ url: "http://gw.test", token: "t", WebSocket: FakeWS, timers: { set() {}, clear() {} } });
  client.subscribe({ board: want.board, window: want.window, follow: want.follow, view: want.view }, {
    update: (v) => updates.push(sortedRows(v)),
  });
  await until(() => FakeWS.last?.sent.length === 2, "auth and subscribe");
  const ws = FakeWS.last;
  const sub = ws.sent[1];
  assert.deepEqual(sub, { ...want, id: sub.id });
  const snap = golden("snapshot");
  ws.serverSends({ ...snap, id: sub.id });
  // At the turnover: the new window's snapshot, with a lower seq, under the same id.
  ws.serverSends({ type: "snapshot", id: sub.id, seq: 1, total: 0, rows: [] });
  assert.deepEqual(updates, [snap.rows, []]);
  client.close();
});
