// Types of rankwire.js: the <rankwire-board> element. See docs/EMBED.md.
import type { RankwireClient, Row } from "./client.js";
export { RankwireClient } from "./client.js";
export type { Row, ViewState, SubscribeSpec, ViewSpec, ClientOptions, ClientState } from "./client.js";

export type BoardState = "loading" | "live" | "empty" | "error" | "reconnecting" | "expired" | "final";

export interface BoardStrings {
  rank: string; player: string; score: string; players: string; you: string;
  loading: string; empty: string; reconnecting: string; live: string; error: string; expired: string;
  refused: string; limited: string; cannotConnect: string;
  prize: string; final: string; finalStandings: string; review: string;
  yourRank(rank: string, moved: string): string;
  up(n: string): string;
  down(n: string): string;
  endsIn(t: string): string;
  startsIn(t: string): string;
}

/** The <rankwire-board> element: a live, accessible leaderboard table. */
export class RankwireBoard extends HTMLElement {
  /** The client it subscribes through; set one to share a connection between elements. */
  client: RankwireClient;
  /** Returns a fresh token; the element refreshes before expiry. */
  getToken: (() => Promise<string>) | null;
  strings: BoardStrings;
  readonly state: BoardState;
  /** The rows in rank order. */
  readonly rows: Row[];
  readonly total: number;
  readonly seq: number | null;
}

declare global {
  interface HTMLElementTagNameMap {
    "rankwire-board": RankwireBoard;
  }
  interface HTMLElementEventMap {
    "rankwire-state": CustomEvent<{ state: BoardState; previous: BoardState; reason?: string; code?: number | string; hint?: string }>;
    "rankwire-update": CustomEvent<{ type: "snapshot" | "diff"; seq: number; total: number; rows: Row[] }>;
    "rankwire-error": CustomEvent<{ code: string; message: string; fatal?: boolean }>;
    "rankwire-rank": CustomEvent<{ member: string; rank: number; previous: number }>;
    "rankwire-token-expired": CustomEvent<{ reason?: string }>;
  }
}
