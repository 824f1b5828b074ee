// The <rankwire-board> element's shadow styles. Every colour and font is a
// custom property on the element, so a lobby restyles it from outside:
//   rankwire-board { --rw-accent: #e6b422; --rw-font: "Montserrat", sans-serif; }
// Custom properties inherit into the shadow tree; the defaults below apply
// only where the page sets none.
export const styles = `
:host {
  --rw-bg: #ffffff;
  --rw-fg: #1b1d24;
  --rw-muted: #6b7080;
  --rw-accent: #5b3df5;
  --rw-me-bg: color-mix(in srgb, var(--rw-accent) 14%, var(--rw-bg));
  --rw-row-alt: color-mix(in srgb, var(--rw-fg) 4%, var(--rw-bg));
  --rw-border: color-mix(in srgb, var(--rw-fg) 12%, transparent);
  --rw-up: #15803d;
  --rw-down: #c0262d;
  --rw-font: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  --rw-radius: 12px;
  --rw-row-height: 2.5rem;
  --rw-flash: 1.2s;
  display: block;
  container-type: inline-size;
  color: var(--rw-fg);
  font-family: var(--rw-font);
}
@media (prefers-color-scheme: dark) {
  :host(:not([theme="light"])) {
    --rw-bg: #15161c; --rw-fg: #eceef4; --rw-muted: #9a9fb0; --rw-accent: #8b7bff;
    --rw-up: #4ade80; --rw-down: #f87171;
  }
}
:host([theme="dark"]) {
  --rw-bg: #15161c; --rw-fg: #eceef4; --rw-muted: #9a9fb0; --rw-accent: #8b7bff;
  --rw-up: #4ade80; --rw-down: #f87171;
}
:host([hidden]) { display: none; }
.frame {
  background: var(--rw-bg);
  border: 1px solid var(--rw-border);
  border-radius: var(--rw-radius);
  overflow: hidden;
  position: relative;
}
table { width: 100%; border-collapse: collapse; table-layout: fixed; font-variant-numeric: tabular-nums; }
caption {
  text-align: start; padding: .75rem 1rem .5rem; font-weight: 700; font-size: 1.05rem;
  color: var(--rw-fg); caption-side: top;
}
caption .total { font-weight: 400; font-size: .8rem; color: var(--rw-muted); margin-inline-start: .5rem; }
th, td { padding: 0 1rem; height: var(--rw-row-height); text-align: start; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
thead th { font-size: .72rem; letter-spacing: .06em; text-transform: uppercase; color: var(--rw-muted);
  height: 2rem; font-weight: 600; border-bottom: 1px solid var(--rw-border); }
.rank { width: 5.5rem; }
.prize { width: 6rem; text-align: end; color: var(--rw-accent); font-weight: 600; }
:host([prizes]) .score { width: 22%; }
:host([prizes]) .rank { width: 4.5rem; }
caption .countdown { display: block; font-weight: 500; font-size: .8rem; color: var(--rw-muted); margin-top: .15rem; }
caption .countdown[hidden] { display: none; }
/* The player cell: avatar, name, "you" and the review marker on one line;
   only the name gives way (with an ellipsis), the rest keep their size. */
.who { display: flex; align-items: center; min-width: 0; }
.who > * { flex: none; }
.who > [hidden] { display: none; }
.who .name { flex: 0 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
.avatar { width: 1.25rem; height: 1.25rem; border-radius: 50%; object-fit: cover;
  margin-inline-end: .45rem; background: var(--rw-border); }
th .review { margin-inline-start: .4rem; font-size: .75rem; color: var(--rw-muted); opacity: .8; }
tbody tr.review th .name { color: var(--rw-muted); }
.prize-under { display: none; }
.score { width: 30%; text-align: end; }
tbody th { font-weight: 500; }
tbody tr { background: var(--rw-bg); position: relative; }
tbody tr:nth-child(even) { background: var(--rw-row-alt); }
tbody tr.me { background: var(--rw-me-bg); box-shadow: inset 4px 0 0 var(--rw-accent); }
tbody tr.me th { font-weight: 700; }
th .you { font-size: .72rem; font-weight: 600; color: var(--rw-accent);
  margin-inline-start: .4rem; text-transform: uppercase; letter-spacing: .05em; }
tbody tr.enter { animation: rw-enter var(--rw-flash) ease-out; }
tbody tr.moved-up { animation: rw-up var(--rw-flash) ease-out; }
tbody tr[data-podium] .pos { color: var(--rw-accent); font-weight: 700; }
.pos { display: inline-block; min-width: 2.2em; }
.mark { display: inline-block; font-size: .7rem; margin-inline-start: .25rem; animation: rw-fade 4s ease-in forwards; }
.mark.up { color: var(--rw-up); }
.mark.down { color: var(--rw-down); }
.status { margin: 0; padding: .9rem 1rem; color: var(--rw-muted); font-size: .9rem; }
.status:empty { display: none; }
:host([state="error"]) .status { color: var(--rw-down); }
:host([state="reconnecting"]) tbody { opacity: .55; }
:host([state="loading"]) tbody:empty::after { content: ""; }
.badge { position: absolute; top: .7rem; inset-inline-end: .8rem; font-size: .7rem; font-weight: 600;
  letter-spacing: .06em; text-transform: uppercase; color: var(--rw-muted); display: flex; align-items: center; gap: .35rem; }
.badge::before { content: ""; width: .5rem; height: .5rem; border-radius: 50%; background: var(--rw-muted); }
:host([state="live"]) .badge::before { background: var(--rw-up); box-shadow: 0 0 0 0 var(--rw-up); animation: rw-pulse 2s infinite; }
:host([state="reconnecting"]) .badge::before { background: #e0a100; }
:host([state="error"]) .badge::before { background: var(--rw-down); }
:host([state="final"]) .badge::before { background: var(--rw-accent); }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
/* A row new to the view flashes rather than fading in: on a busy rank (the
   prize line) a new row arrives with every push, and must stay readable. */
@keyframes rw-enter { from { background-color: color-mix(in srgb, var(--rw-accent) 28%, var(--rw-bg)); } }
@keyframes rw-up { from { background-color: color-mix(in srgb, var(--rw-up) 22%, var(--rw-bg)); } }
@keyframes rw-fade { 0%, 70% { opacity: 1; } 100% { opacity: 0; } }
@keyframes rw-pulse { 0% { box-shadow: 0 0 0 0 color-mix(in srgb, var(--rw-up) 60%, transparent); }
  100% { box-shadow: 0 0 0 6px transparent; } }
@media (prefers-reduced-motion: reduce) {
  tbody tr.enter, tbody tr.moved-up, .mark, :host([state="live"]) .badge::before { animation: none; }
}
/* A phone, or a narrow lobby column: the name keeps the room. Narrow rank
   and score columns, the move marker under the rank, the prize under the
   name instead of in a column of its own. */
@container (max-width: 480px) {
  th, td { padding: 0 .4rem; }
  th:first-child, td:first-child { padding-inline-start: .7rem; }
  /* Content widths (padding comes on top): a rank up to 99,999 and its
     ▲12 under it; a score up to 1,234,567 at this size. */
  .rank, :host([prizes]) .rank { width: 3.1rem; }
  .score, :host([prizes]) .score { width: 4.75rem; }
  thead th { font-size: .66rem; letter-spacing: .04em; }
  .prize { display: none; }
  .prize-under:not([hidden]) { display: block; font-size: .72rem; font-weight: 600; color: var(--rw-accent);
    line-height: 1.2; overflow: hidden; text-overflow: ellipsis; }
  td.rank { white-space: normal; line-height: 1.1; font-size: .85rem; }
  th .you { font-size: .62rem; margin-inline-start: .3rem; letter-spacing: .03em; }
  .pos { min-width: 0; }
  .mark { display: block; margin: 0; font-size: .62rem; }
  tbody { font-size: .9rem; }
  caption { font-size: .95rem; padding: .6rem .75rem .4rem; }
  caption .total { display: block; margin: .1rem 0 0; }
  .badge span { display: none; }
}
`;
