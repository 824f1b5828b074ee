// burst.js: a submission burst while WebSocket subscribers ramp up and churn.
//
// Four stages of STAGE each: warm up to a tenth of RATE, ramp to RATE, hold,
// ramp down. Writers send RATE submission requests per second at the peak
// (every BATCH_EVERY-th a batch of BATCH_SIZE, the rest single); subscribers
// ramp to SUBSCRIBERS connections (CONNS_PER_VU per VU) watching the board's
// top 10, each reconnecting every HOLD; probes at PROBE_RATE per second
// measure submit-to-receive latency. See README.md, "Load testing with k6".
import { config, envDuration, envInt, holdFor, mixedWrites, probe, putBoard, tokens, TopView, watch } from './lib/rankwire.js';

const cfg = config('k6-burst');
const RATE = envInt('RATE', 200);
const BATCH_EVERY = envInt('BATCH_EVERY', 10);
const BATCH_SIZE = Math.min(envInt('BATCH_SIZE', 100), 1000);
const MEMBERS = envInt('MEMBERS', 100000);
const SUBSCRIBERS = envInt('SUBSCRIBERS', 200);
const CONNS_PER_VU = Math.max(1, envInt('CONNS_PER_VU', 10));
const PROBE_RATE = Math.max(1, envInt('PROBE_RATE', 5));
const STAGE = envDuration('STAGE', '30s');
const HOLD = envDuration('HOLD', '20s');
const P99_MS = envInt('P99_MS', 250);

const subVUs = Math.max(1, Math.ceil(SUBSCRIBERS / CONNS_PER_VU));
const stage = `${STAGE}s`;
const total = 4 * STAGE;

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    submit: {
      executor: 'ramping-arrival-rate',
      exec: 'writer',
      startRate: 1,
      timeUnit: '1s',
      preAllocatedVUs: envInt('WRITER_VUS', 20),
      maxVUs: envInt('MAX_WRITER_VUS', 100),
      stages: [
        { target: Math.max(1, Math.ceil(RATE / 10)), duration: stage },
        { target: RATE, duration: stage },
        { target: RATE, duration: stage },
        { target: 1, duration: stage },
      ],
    },
    probe: {
      executor: 'constant-arrival-rate',
      exec: 'prober',
      rate: PROBE_RATE,
      timeUnit: '1s',
      duration: `${total}s`,
      preAllocatedVUs: 2,
      maxVUs: 10,
    },
    subscribe: {
      executor: 'ramping-vus',
      exec: 'subscriber',
      startVUs: 0,
      stages: [
        { target: Math.max(1, Math.ceil(subVUs / 4)), duration: stage },
        { target: subVUs, duration: stage },
        { target: subVUs, duration: stage },
        { target: 0, duration: stage },
      ],
      gracefulRampDown: `${HOLD + 2}s`, // let ramped-down VUs close their sockets themselves
      gracefulStop: '3s',
    },
  },
  thresholds: {
    'http_req_failed{scenario:submit}': ['rate<0.01'],
    'http_req_duration{name:submit_single}': ['p(95)<250', 'p(99)<500'],
    'http_req_duration{name:submit_batch}': ['p(95)<500'],
    rw_submit_to_receive: ['p(99)<' + P99_MS],
    rw_probes_received: ['count>0'],
    rw_snapshot_wait: ['p(95)<500'],
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

// writer sends one submission request: a batch every BATCH_EVERY-th, else single.
export const writer = mixedWrites(cfg, BATCH_EVERY, BATCH_SIZE, MEMBERS);

// prober submits one probe; each probe VU is its own member at the top.
export function prober(data) {
  probe(cfg, data.tok.submit, `probe-${__VU}`);
}

// subscriber opens CONNS_PER_VU fresh top-10 views for up to HOLD.
export function subscriber(data) {
  const ms = holdFor(HOLD, data.end);
  for (let i = 0; ms > 0 && i < CONNS_PER_VU; i++) watch(cfg, data.tok.read, new TopView(10), ms);
}
