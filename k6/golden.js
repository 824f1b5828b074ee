// golden.js feeds the scripts' view checker (lib/rankwire.js, TopView) the
// protocol's golden messages (wire/testdata, generated from the Go package
// wire): a field renamed in wire fails here, not in a load run. Its
// thresholds demand every comparison passed, two pushes and the one error
// message. k6_test.go runs it; it needs no gateway.
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import { TopView } from './lib/rankwire.js';

const golden = (name) => JSON.parse(open(`../wire/testdata/${name}.json`));
const msgs = {};
for (const name of ['subscribe_top', 'board', 'snapshot', 'diff', 'error']) msgs[name] = golden(name);

const passed = new Counter('golden_passed');
const CHECKS = 6;

export const options = {
  iterations: 1,
  vus: 1,
  thresholds: {
    golden_passed: [`count==${CHECKS}`],
    checks: ['rate==1'],
    rw_pushes: ['count==2'],
    rw_ws_errors: ['count==1'],
  },
};

// ok records one comparison.
function ok(what, cond) {
  if (check(null, { [what]: () => cond })) passed.add(1);
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const rowsOf = (v) => [...v.rows.keys()].sort((a, b) => a - b).map((r) => v.rows.get(r));

export default function () {
  const v = new TopView(3);
  const sub = v.subscribeMsg(msgs.subscribe_top.board);
  const want = msgs.subscribe_top;
  ok('subscribe: the golden fields and kind', sub.type === want.type && sub.view.kind === want.view.kind &&
    Object.keys(sub).every((k) => k in want) && Object.keys(sub.view).every((k) => k in want.view));
  v.handle(msgs.board, 0);
  ok('board: no state', v.seq === null && v.rows.size === 0);
  v.handle(msgs.snapshot, 0);
  ok('snapshot: its rows and seq', v.seq === msgs.snapshot.seq && same(rowsOf(v), msgs.snapshot.rows));
  v.handle(msgs.diff, 0);
  ok('diff: follows the snapshot', msgs.diff.prev === msgs.snapshot.seq);
  ok('diff: its rows and seq', v.seq === msgs.diff.seq && same(rowsOf(v), msgs.diff.rows));
  v.handle(msgs.error, 0); // counted in rw_ws_errors
  ok('error: leaves the state', v.seq === msgs.diff.seq);
}
