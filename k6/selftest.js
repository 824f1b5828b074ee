// selftest.js checks the scripts' view checker (lib/rankwire.js, TopView)
// without a gateway: it feeds one view a made-up message sequence with one
// gap, one inconsistent state, one resync and two new probes, and its
// thresholds demand exactly those counts. k6_test.go runs it.
import { TopView, PROBE_BASE } from './lib/rankwire.js';

export const options = {
  iterations: 1,
  vus: 1,
  thresholds: {
    rw_gaps: ['count==1'],
    rw_view_inconsistent: ['count==1'],
    rw_resyncs: ['count==1'],
    rw_probes_received: ['count==2'],
    rw_submit_to_receive: ['max<=50'],
  },
};

const row = (rank, score, subscore) => ({ rank: rank, member: 'm' + rank, score: score, subscore: subscore || 0 });

export default function () {
  const v = new TopView(3);
  v.subscribeMsg('b');
  const now = Date.now();
  const old = PROBE_BASE + now - 5000; // in the snapshot: marked, never measured
  v.handle({ type: 'snapshot', id: 's1', seq: 5, total: 2, rows: [row(1, old), row(2, 10)] }, now);
  // a new probe at rank 1 pushes the old one to rank 2: one measurement (20 ms)
  v.handle({ type: 'diff', id: 's1', seq: 7, prev: 5, total: 3, rows: [row(1, PROBE_BASE + now - 20), row(2, old), row(3, 10)] }, now);
  // prev 8 is not the last seq 7: a gap; another new probe (5 ms)
  v.handle({ type: 'diff', id: 's1', seq: 9, prev: 8, total: 3, rows: [row(1, PROBE_BASE + now - 5, 1)] }, now);
  // rank 3 gone while total stays 3: an inconsistent state
  v.handle({ type: 'diff', id: 's1', seq: 10, prev: 9, total: 3, rows: [], gone: [3] }, now);
  // a later snapshot: a resync, and the state is whole again
  v.handle({ type: 'snapshot', id: 's1', seq: 12, total: 3, rows: [row(1, 30), row(2, 20), row(3, 10)] }, now);
}
