// Unit tests of the client's diff logic with Node's own test runner:
//   node --test web/testdata/diff.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyMessage, emptyView, sortedRows, backoffDelay, closeAction, wsURL, refreshDelay } from "../static/client.js";

const row = (rank, member, score, extra = {}) => ({ rank, member, score, subscore: 0, ...extra });
const snap = (seq, rows, total = rows.length) => applyMessage(emptyView(), { type: "snapshot", id: "s", seq, total, rows });

test("a snapshot replaces the state, rows keyed by rank", () => {
  const s = snap(5, [row(2, "b", 8), row(1, "a", 9)]);
  assert.equal(s.seq, 5);
  assert.deepEqual(sortedRows(s).map((r) => r.member), ["a", "b"]);
});

test("a diff drops the gone ranks first, then puts its rows", () => {
  let s = snap(5, [row(1, "a", 9), row(2, "b", 8), row(3, "c", 7)]);
  s = applyMessage(s, { type: "diff", id: "s", seq: 9, prev: 5, total: 2, rows: [row(1, "c", 10), row(2, "a", 9)], gone: [3, 2] });
  assert.equal(s.seq, 9);
  assert.equal(s.total, 2);
  assert.deepEqual(sortedRows(s).map((r) => [r.rank, r.member]), [[1, "c"], [2, "a"]]);
});

test("a diff that does not follow the state is refused", () => {
  const s = snap(5, [row(1, "a", 9)]);
  assert.equal(applyMessage(s, { type: "diff", id: "s", seq: 9, prev: 6, total: 1, rows: [], gone: [] }), null);
  assert.equal(applyMessage(emptyView(), { type: "diff", id: "s", seq: 9, prev: 6, total: 1, rows: [], gone: [] }), null);
});

test("applying never changes the state it was given", () => {
  const s = snap(1, [row(1, "a", 9)]);
  applyMessage(s, { type: "diff", id: "s", seq: 2, prev: 1, total: 0, rows: [], gone: [1] });
  assert.equal(s.rows.size, 1);
  assert.equal(s.seq, 1);
});

test("profiles and the review marker ride along with the rows", () => {
  let s = snap(1, [row(1, "a", 9, { name: "Ace", country: "MT" })]);
  s = applyMessage(s, { type: "diff", id: "s", seq: 2, prev: 1, total: 1, rows: [row(1, "a", 9, { name: "Ace", review: true })], gone: [] });
  assert.deepEqual(sortedRows(s)[0], row(1, "a", 9, { name: "Ace", review: true }));
});

test("a chain of diffs equals the snapshot of the end state", () => {
  // A model: random moves on ten members, each step sent as the diff of
  // the ranks that changed; the client's state must equal the model's.
  let seq = 1;
  let model = Array.from({ length: 10 }, (_, i) => ({ member: `m${i}`, score: i }));
  const rowsOf = (m) => [...m].sort((a, b) => b.score - a.score).map((e, i) => row(i + 1, e.member, e.score));
  let s = snap(seq, rowsOf(model));
  let rand = 7;
  const next = () => (rand = (rand * 1103515245 + 12345) % 2147483648);
  for (let step = 0; step < 200; step++) {
    const before = rowsOf(model);
    model = model.map((e) => (next() % 4 === 0 ? { ...e, score: next() % 100 } : e));
    const after = rowsOf(model);
    const put = after.filter((r, i) => JSON.stringify(r) !== JSON.stringify(before[i]));
    s = applyMessage(s, { type: "diff", id: "s", seq: seq + 1, prev: seq, total: after.length, rows: put, gone: [] });
    seq++;
    assert.deepEqual(sortedRows(s), after, `step ${step}`);
  }
});

test("backoff is jittered below a doubling ceiling, with a floor", () => {
  assert.ok(backoffDelay(0, { random: () => 0.999 }) <= 250);
  assert.equal(backoffDelay(3, { random: () => 0.5 }), 1000);
  assert.ok(backoffDelay(50, { random: () => 0.999 }) <= 8000);
  assert.equal(backoffDelay(5, { random: () => 0 }), 50);
});

test("close codes decide what the client does", () => {
  assert.deepEqual([4001, 4003, 4008, 1001, 1006, 1009, 4029].map(closeAction),
    ["refresh", "fatal", "retry", "failover", "retry", "too-large", "limit"]);
});

test("URLs and token refresh times", () => {
  assert.equal(wsURL("https://rank.example.com"), "wss://rank.example.com/v1/ws");
  assert.equal(refreshDelay(1000, 0), 940_000);
  assert.equal(refreshDelay(undefined), null);
});
