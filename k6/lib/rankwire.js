// Shared parts of the k6 scripts: configuration from the environment,
// tokens, the board, submissions and live top-N views (PROTOCOL.md).
//
// Submit-to-receive latency uses probes: a probe submits score
// PROBE_BASE + its send time in ms, above every filler score, so it enters
// the top of the board and the first diff row carrying it tells the receiver
// when it was sent (the scripts and their subscribers share one clock).
import http from 'k6/http';
import { check, fail, sleep } from 'k6';
import { Counter, Trend } from 'k6/metrics';
import { WebSocket } from 'k6/websockets';
import { setTimeout, clearTimeout } from 'k6/timers';
import { decodeSecret, mintHS256 } from './jwt.js';

// PROBE_BASE lifts probe scores above fillers (< FILLER_MAX) while keeping
// them exact float64 integers: 1e13 + a ms timestamp < 2^53.
export const PROBE_BASE = 1e13;
export const FILLER_MAX = 1e6;

export const metrics = {
  submitToReceive: new Trend('rw_submit_to_receive', true), // probe sent -> first push carrying it
  snapshotWait: new Trend('rw_snapshot_wait', true), // connect -> first snapshot
  probesReceived: new Counter('rw_probes_received'),
  itemsAcked: new Counter('rw_items_acked'),
  submitErrors: new Counter('rw_submit_errors'),
  pushes: new Counter('rw_pushes'), // snapshots and diffs received
  gaps: new Counter('rw_gaps'), // a diff whose prev is not the last seq seen
  resyncs: new Counter('rw_resyncs'), // a snapshot after the first on a view
  inconsistent: new Counter('rw_view_inconsistent'), // a view state that is not ranks 1..n in order
  wsErrors: new Counter('rw_ws_errors'), // failed connects, error messages, unexpected closes
};

// envStr, envInt and envDuration read __ENV with a default.
export function envStr(name, def) {
  const v = __ENV[name];
  return v === undefined || v === '' ? def : v;
}

export function envInt(name, def) {
  const v = envStr(name, '');
  if (v === '') return def;
  const n = parseInt(v, 10);
  if (!(n >= 0)) throw new Error(`${name}: want a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
}

// envDuration returns a k6-style duration ("90s", "30m", "1h30m") in seconds.
export function envDuration(name, def) {
  const v = envStr(name, def);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600 };
  let total = 0;
  let used = 0;
  for (let m = re.exec(v); m !== null; m = re.exec(v)) {
    total += parseFloat(m[1]) * unit[m[2]];
    used += m[0].length;
  }
  if (used !== v.length || total <= 0) throw new Error(`${name}: want a duration like 90s or 1h30m, got ${JSON.stringify(v)}`);
  return total;
}

// config is what every script needs: the gateway's base URL and the board.
export function config(defaultBoard) {
  return {
    url: envStr('RANKWIRE_URL', 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    board: envStr('BOARD', defaultBoard),
  };
}

// tokens returns {admin, submit, read} for setup() to hand to the VUs: minted
// from RANKWIRE_SECRET (+ RANKWIRE_KID, RANKWIRE_TENANT) to live ttlSeconds,
// or taken from RANKWIRE_ADMIN_TOKEN, RANKWIRE_SUBMIT_TOKEN, RANKWIRE_READ_TOKEN
// (the last two default to the admin token, since admin implies both roles).
export function tokens(ttlSeconds) {
  const secret = envStr('RANKWIRE_SECRET', '');
  if (secret !== '') {
    const tnt = envStr('RANKWIRE_TENANT', '');
    const kid = envStr('RANKWIRE_KID', '');
    if (tnt === '' || kid === '') fail('RANKWIRE_SECRET needs RANKWIRE_TENANT and RANKWIRE_KID');
    const key = decodeSecret(secret);
    const exp = Math.floor(Date.now() / 1000) + Math.ceil(ttlSeconds);
    const mint = (sub, role) => mintHS256(key, kid, { tnt: tnt, sub: sub, roles: [role], exp: exp });
    return { admin: mint('k6-admin', 'admin'), submit: mint('k6-writer', 'submit'), read: mint('k6-viewer', 'read') };
  }
  const admin = envStr('RANKWIRE_ADMIN_TOKEN', '');
  if (admin === '') {
    fail('set RANKWIRE_ADMIN_TOKEN, or RANKWIRE_SECRET with RANKWIRE_KID and RANKWIRE_TENANT');
  }
  return { admin: admin, submit: envStr('RANKWIRE_SUBMIT_TOKEN', admin), read: envStr('RANKWIRE_READ_TOKEN', admin) };
}

function params(token, name) {
  return {
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    tags: { name: name },
  };
}

// putBoard creates (or re-asserts) cfg.board with a desc, best-score setting
// and, where RESET=1, empties its all window; it aborts the run on failure.
export function putBoard(cfg, token) {
  const body = JSON.stringify({ order: 'desc', subscore_order: 'desc', policy: 'best', windows: ['all'] });
  const res = http.put(`${cfg.url}/v1/boards/${cfg.board}`, body, params(token, 'put_board'));
  if (res.status !== 200 && res.status !== 201) {
    fail(`PUT /v1/boards/${cfg.board}: ${res.status} ${res.body}`);
  }
  if (envStr('RESET', '') === '1') {
    const r = http.post(`${cfg.url}/v1/boards/${cfg.board}/reset`, null, params(token, 'reset_board'));
    if (r.status >= 300) fail(`POST reset: ${r.status} ${r.body}`);
  }
}

// filler is a submission of a random member (of members) with a random score
// below every probe.
export function filler(members) {
  return {
    member: 'p' + Math.floor(Math.random() * members),
    score: Math.floor(Math.random() * FILLER_MAX),
  };
}

// submit posts one item (as a single submission) or several (as a batch),
// checks the reply and counts acknowledged items and errors.
export function submit(cfg, token, items) {
  const single = items.length === 1;
  const body = single ? items[0] : { scores: items };
  const res = http.post(`${cfg.url}/v1/boards/${cfg.board}/scores`, JSON.stringify(body),
    params(token, single ? 'submit_single' : 'submit_batch'));
  const ok = check(res, {
    'submit 200': (r) => r.status === 200,
    'submit results match': (r) => r.status === 200 && resultCount(r) === items.length,
  });
  if (ok) {
    metrics.itemsAcked.add(items.length);
  } else {
    metrics.submitErrors.add(1, { status: String(res.status) });
  }
  return ok;
}

function resultCount(res) {
  try {
    return res.json('results').length;
  } catch (e) {
    return -1;
  }
}

let probeCount = 0;

// probe submits one probe for member (see the file comment). Its subscore
// makes the (score, subscore) pair unique across VUs.
// mixedWrites returns a writer iteration: one submission request, a batch
// of batchSize every batchEvery-th (0: never), else a single filler score.
// Each VU keeps its own iteration count.
export function mixedWrites(cfg, batchEvery, batchSize, members) {
  let iter = 0;
  return (data) => {
    iter++;
    const n = batchEvery > 0 && iter % batchEvery === 0 ? batchSize : 1;
    const items = [];
    for (let i = 0; i < n; i++) items.push(filler(members));
    submit(cfg, data.tok.submit, items);
  };
}

export function probe(cfg, token, member) {
  probeCount++;
  return submit(cfg, token, [{ member: member, score: PROBE_BASE + Date.now(), subscore: __VU * 1e7 + probeCount }]);
}

// TopView is the client side of one top-N subscription, kept across
// reconnects: its state by rank, the seq chain, and the probes seen.
export class TopView {
  constructor(limit) {
    this.limit = limit;
    this.seq = null; // seq of the last message; null before the first snapshot
    this.rows = new Map(); // rank -> row
    this.seen = new Map(); // probe key -> score, for probes already measured
    this.floor = 0; // probe scores below this count as seen (pruned)
    this.settled = false; // false until the first message after (re)subscribing
  }

  // subscribeMsg is the subscribe message for board; it resumes with since
  // after a reconnect.
  subscribeMsg(board) {
    this.settled = false;
    const m = { type: 'subscribe', id: 's1', board: board, view: { kind: 'top', limit: this.limit } };
    if (this.seq !== null) m.since = this.seq;
    return m;
  }

  // handle applies one server message received at now (ms).
  handle(msg, now) {
    if (msg.type === 'error') {
      metrics.wsErrors.add(1, { reason: 'message', code: String(msg.code) });
      console.warn(`ws error message: ${msg.code}: ${msg.message}`);
      return;
    }
    if (msg.type !== 'snapshot' && msg.type !== 'diff') return;
    metrics.pushes.add(1, { type: msg.type });
    if (msg.type === 'snapshot') {
      if (this.seq !== null) metrics.resyncs.add(1);
      this.rows = new Map();
    } else if (this.seq === null || msg.prev !== this.seq) {
      metrics.gaps.add(1);
      console.warn(`gap: diff prev ${msg.prev} after seq ${this.seq}`);
    }
    for (const rank of msg.gone || []) this.rows.delete(rank);
    for (const row of msg.rows || []) this.rows.set(row.rank, row);
    if (this.seq !== null && msg.seq < this.seq) metrics.inconsistent.add(1, { reason: 'seq' });
    this.seq = msg.seq;
    this.checkState(msg.total);
    this.noteProbes(msg.rows || [], now, this.settled);
    this.settled = true;
  }

  // checkState verifies that the state is ranks 1..min(limit, total) with
  // non-increasing (score, subscore).
  checkState(total) {
    if (typeof total !== 'number') return;
    const n = Math.min(this.limit, total);
    let ok = this.rows.size === n;
    for (let r = 1; ok && r <= n; r++) {
      const row = this.rows.get(r);
      const prev = this.rows.get(r - 1);
      ok = row !== undefined && (prev === undefined || prev.score > row.score ||
        (prev.score === row.score && prev.subscore >= row.subscore));
    }
    if (!ok) {
      metrics.inconsistent.add(1, { reason: 'state' });
      console.warn(`inconsistent view at seq ${this.seq}: ${this.rows.size} rows, total ${total}`);
    }
  }

  // noteProbes records the latency of each probe row not seen before; with
  // measure false (the first message after subscribing) it only marks them.
  noteProbes(rows, now, measure) {
    for (const row of rows) {
      if (row.score < PROBE_BASE || row.score < this.floor) continue;
      const key = row.score + ':' + row.subscore;
      if (this.seen.has(key)) continue;
      this.seen.set(key, row.score);
      if (measure) {
        metrics.submitToReceive.add(Math.max(0, now - (row.score - PROBE_BASE)));
        metrics.probesReceived.add(1);
      }
    }
    if (this.seen.size > 4096) this.prune();
  }

  // prune forgets probes more than a minute older than the newest seen; any
  // row below the new floor counts as seen, so nothing is measured twice.
  prune() {
    let max = 0;
    for (const s of this.seen.values()) max = Math.max(max, s);
    this.floor = max - 60000;
    for (const [k, s] of this.seen) if (s < this.floor) this.seen.delete(k);
  }
}

// wsURL turns the gateway's http(s) base URL into its WebSocket endpoint.
export function wsURL(cfg, token) {
  return cfg.url.replace(/^http/, 'ws') + '/v1/ws?access_token=' + encodeURIComponent(token);
}

// watch opens one WebSocket, subscribes view to cfg.board, and closes after
// holdMs. The VU's iteration lasts until the socket is closed. A failed
// connect, an error message or a close the script did not ask for is an error.
export function watch(cfg, token, view, holdMs) {
  const opened = Date.now();
  let first = true;
  let done = false;
  const ws = new WebSocket(wsURL(cfg, token), null, { tags: { name: 'ws' } });
  const timer = setTimeout(() => {
    done = true;
    ws.close();
  }, holdMs);
  ws.onopen = () => ws.send(JSON.stringify(view.subscribeMsg(cfg.board)));
  ws.onmessage = (e) => {
    const now = Date.now();
    let msg;
    try {
      msg = JSON.parse(e.data);
    } catch (err) {
      metrics.wsErrors.add(1, { reason: 'json' });
      return;
    }
    if (first && msg.type === 'snapshot') metrics.snapshotWait.add(now - opened);
    first = false;
    view.handle(msg, now);
  };
  ws.onerror = (e) => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    metrics.wsErrors.add(1, { reason: 'error' });
    console.warn(`ws error: ${e.error}`);
  };
  ws.onclose = (e) => {
    clearTimeout(timer);
    if (done) return;
    done = true;
    metrics.wsErrors.add(1, { reason: 'close', code: String(e.code) });
    console.warn(`ws closed by the server: ${e.code} ${e.reason}`);
  };
}

// holdFor is how long a connection opened now may stay open: hold seconds,
// cut to end before the run's end (ms since the epoch). Where nothing is
// left it sleeps a second, so a looping VU does not spin, and returns 0.
export function holdFor(holdSeconds, end) {
  const ms = Math.min(holdSeconds * 1000, end - Date.now());
  if (ms < 1000) {
    sleep(1);
    return 0;
  }
  return ms;
}
