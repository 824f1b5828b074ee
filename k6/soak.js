// soak.js: steady load for a long run (DURATION, default 30m).
//
// Writers send RATE submission requests per second (every BATCH_EVERY-th a
// batch of BATCH_SIZE); SUBSCRIBERS connections (CONNS_PER_VU per VU) watch
// the board's top 10 for the whole run, reconnecting every RECONNECT and
// resuming with "since" so the prev/seq chain is checked across reconnects;
// probes at PROBE_RATE per second measure submit-to-receive latency. Minted
// tokens live DURATION plus 10 minutes; tokens given in the environment must
// outlive the run, or the gateway closes the sockets with 4001.
import { config, envDuration, envInt, holdFor, mixedWrites, probe, putBoard, tokens, TopView, watch } from './lib/rankwire.js';

const cfg = config('k6-soak');
const DURATION = envDuration('DURATION', '30m');
const RATE = envInt('RATE', 50);
const BATCH_EVERY = envInt('BATCH_EVERY', 10);
const BATCH_SIZE = Math.min(envInt('BATCH_SIZE', 100), 1000);
const MEMBERS = envInt('MEMBERS', 100000);
const SUBSCRIBERS = envInt('SUBSCRIBERS', 100);
const CONNS_PER_VU = Math.max(1, envInt('CONNS_PER_VU', 10));
const PROBE_RATE = Math.max(1, envInt('PROBE_RATE', 2));
const RECONNECT = envDuration('RECONNECT', '5m');
const P99_MS = envInt('P99_MS', 250);

const duration = `${DURATION}s`;

export const options = {
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    submit: {
      executor: 'constant-arrival-rate',
      exec: 'writer',
      rate: Math.max(1, RATE),
      timeUnit: '1s',
      duration: duration,
      preAllocatedVUs: envInt('WRITER_VUS', 10),
      maxVUs: envInt('MAX_WRITER_VUS', 50),
    },
    probe: {
      executor: 'constant-arrival-rate',
      exec: 'prober',
      rate: PROBE_RATE,
      timeUnit: '1s',
      duration: duration,
      preAllocatedVUs: 2,
      maxVUs: 10,
    },
    subscribe: {
      executor: 'constant-vus',
      exec: 'subscriber',
      vus: Math.max(1, Math.ceil(SUBSCRIBERS / CONNS_PER_VU)),
      duration: duration,
      gracefulStop: '5s',
    },
  },
  thresholds: {
    'http_req_failed{scenario:submit}': ['rate<0.001'],
    'http_req_duration{name:submit_single}': ['p(99)<500'],
    'http_req_duration{name:submit_batch}': ['p(99)<1000'],
    rw_submit_to_receive: ['p(99)<' + P99_MS],
    rw_probes_received: ['count>0'],
    rw_gaps: ['count==0'],
    rw_view_inconsistent: ['count==0'],
    rw_ws_errors: ['count==0'],
    rw_submit_errors: ['count==0'],
  },
};

export function setup() {
  const tok = tokens(DURATION + 600);
  putBoard(cfg, tok.admin);
  return { tok: tok, end: Date.now() + DURATION * 1000 };
}

// writer sends one submission request: a batch every BATCH_EVERY-th, else single.
export const writer = mixedWrites(cfg, BATCH_EVERY, BATCH_SIZE, MEMBERS);

export function prober(data) {
  probe(cfg, data.tok.submit, `probe-${__VU}`);
}

// views outlive iterations: each reconnect resumes its view with since.
const views = [];

export function subscriber(data) {
  const ms = holdFor(RECONNECT, data.end);
  for (let i = 0; ms > 0 && i < CONNS_PER_VU; i++) {
    if (views.length <= i) views.push(new TopView(10));
    watch(cfg, data.tok.read, views[i], ms);
  }
}
