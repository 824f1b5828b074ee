// lobby.js: many viewers of one top-10 view, the fan-out a game lobby makes.
//
// VIEWERS connections (CONNS_PER_VU per VU) ramp up over RAMP and all watch
// the same board's top 10 until the end of HOLD_FOR. Meanwhile probes at
// RATE per second each take rank 1, so every push interval every viewer gets
// a diff, and the first row carrying each probe gives its submit-to-receive
// latency; BATCH_RATE batches of BATCH_SIZE fillers per second grow the board
// below the top.
import { config, envDuration, envInt, filler, holdFor, probe, putBoard, submit, tokens, TopView, watch } from './lib/rankwire.js';
import { setTimeout } from 'k6/timers';

const cfg = config('k6-lobby');
const VIEWERS = envInt('VIEWERS', 1000);
const CONNS_PER_VU = Math.max(1, envInt('CONNS_PER_VU', 50));
const RATE = Math.max(1, envInt('RATE', 10));
const BATCH_RATE = envInt('BATCH_RATE', 1);
const BATCH_SIZE = Math.min(Math.max(1, envInt('BATCH_SIZE', 100)), 1000);
const MEMBERS = envInt('MEMBERS', 100000);
const RAMP = envDuration('RAMP', '30s');
const HOLD_FOR = envDuration('HOLD_FOR', '1m');
const P99_MS = envInt('P99_MS', 500);

const total = RAMP + HOLD_FOR;
const vus = Math.max(1, Math.ceil(VIEWERS / CONNS_PER_VU));

const scenarios = {
  viewers: {
    executor: 'ramping-vus',
    exec: 'viewer',
    startVUs: 0,
    stages: [
      { target: vus, duration: `${RAMP}s` },
      { target: vus, duration: `${HOLD_FOR}s` },
    ],
    gracefulRampDown: '5s',
    gracefulStop: '5s',
  },
  probe: {
    executor: 'constant-arrival-rate',
    exec: 'prober',
    rate: RATE,
    timeUnit: '1s',
    duration: `${total}s`,
    preAllocatedVUs: 2,
    maxVUs: 20,
  },
};
if (BATCH_RATE > 0) {
  scenarios.fill = {
    executor: 'constant-arrival-rate',
    exec: 'grow',
    rate: BATCH_RATE,
    timeUnit: '1s',
    duration: `${total}s`,
    preAllocatedVUs: 2,
    maxVUs: 10,
  };
}

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: scenarios,
  thresholds: {
    'http_req_failed{scenario:probe}': ['rate<0.01'],
    rw_submit_to_receive: ['p(99)<' + P99_MS],
    rw_probes_received: ['count>0'],
    rw_snapshot_wait: ['p(95)<1000'],
    ws_connecting: ['p(95)<1000'],
    rw_gaps: ['count==0'],
    rw_view_inconsistent: ['count==0'],
    rw_ws_errors: ['count==0'],
    rw_submit_errors: ['count==0'],
  },
};

export function setup() {
  const tok = tokens(total + 600);
  putBoard(cfg, tok.admin);
  return { tok: tok, end: Date.now() + total * 1000 };
}

// viewer opens CONNS_PER_VU views, spread over a second, held to the end.
// Timers stagger them: sleep() would stall the VU's event loop and delay
// the messages of the views already open.
export function viewer(data) {
  if (holdFor(total, data.end) === 0) return;
  for (let i = 0; i < CONNS_PER_VU; i++) {
    setTimeout(() => {
      const ms = data.end - Date.now();
      if (ms > 1000) watch(cfg, data.tok.read, new TopView(10), ms);
    }, (i * 1000) / CONNS_PER_VU);
  }
}

// prober submits one probe, which takes rank 1.
export function prober(data) {
  probe(cfg, data.tok.submit, `probe-${__VU}`);
}

// grow submits one batch of fillers below the probes.
export function grow(data) {
  const items = [];
  for (let i = 0; i < BATCH_SIZE; i++) items.push(filler(MEMBERS));
  submit(cfg, data.tok.submit, items);
}
