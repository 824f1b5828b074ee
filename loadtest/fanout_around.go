package loadtest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// The Centrifugo peer's around-me app: every watched player has a channel
// of its own, and a submission must reach each player whose neighbourhood
// (the members within radius of its rank) it changed. The app knows who
// watches (the players it serves); per batch it makes two Redis round
// trips and one Centrifugo request:
//
//  1. a pipeline of ZADD (the batch) and a ZREVRANK of each submitted
//     member; its reply is the app's acknowledgement (the moment it
//     would answer its client: Redis took the write; markAck);
//  2. a pipeline of one ZREVRANGE … WITHSCORES per submitted member, of
//     2·radius on either side of its rank: that window holds every member
//     within radius of it and, for each of those, its whole neighbourhood;
//  3. the affected watchers (a watched member within radius of a submitted
//     one, each once per batch) with their neighbourhoods cut from the
//     windows, published in one POST /api/batch, a publish to each
//     watcher's channel of its whole neighbourhood (full state, as the
//     top-N app sends).

// aroundChannel is the channel of member's around view on board (no colon:
// that would name a Centrifugo namespace).
func aroundChannel(board, member string) string { return "rwload.around." + board + "." + member }

// aroundApp is the app's around-me fan-out. Safe for concurrent use: its
// fields are read only.
type aroundApp struct {
	rc      *redis.Client
	key     string // the sorted set
	radius  int64
	watched map[string]string // watched member → its channel
	publish func(ctx context.Context, pubs []channelData) error
}

// newAroundApp serves the around views of plan's subscriptions [0, subs)
// on board.
func newAroundApp(rc *redis.Client, key, board string, plan viewPlan, subs int, publish func(context.Context, []channelData) error) *aroundApp {
	a := &aroundApp{rc: rc, key: key, radius: int64(plan.Radius), watched: map[string]string{}, publish: publish}
	for i := range subs {
		if v, kind := plan.view(i); kind == 1 {
			a.watched[v.Member] = aroundChannel(board, v.Member)
		}
	}
	return a
}

func (a *aroundApp) submit(ctx context.Context, items []score) (int, string) {
	zs := make([]redis.Z, len(items))
	for i, it := range items {
		zs[i] = redis.Z{Score: it.Score, Member: it.Member}
	}
	pipe := a.rc.Pipeline()
	pipe.ZAdd(ctx, a.key, zs...)
	ranks := make([]*redis.IntCmd, len(items))
	for i, it := range items {
		ranks[i] = pipe.ZRevRank(ctx, a.key, it.Member)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, "zadd"
	}
	markAck(ctx) // Redis took the write (the ZADD's reply, with the ranks): the app would answer here
	wins := make([]aroundWindow, len(items))
	cmds := make([]*redis.ZSliceCmd, len(items))
	pipe = a.rc.Pipeline()
	for i, rc := range ranks {
		r := rc.Val()
		wins[i] = aroundWindow{rank: r, start: max(r-2*a.radius, 0)}
		cmds[i] = pipe.ZRevRangeWithScores(ctx, a.key, wins[i].start, r+2*a.radius)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return len(items), "zrevrange"
	}
	for i, c := range cmds {
		wins[i].rows = c.Val()
	}
	if a.publish(ctx, affectedWatchers(wins, a.radius, a.watched)) != nil {
		return len(items), "publish"
	}
	return len(items), ""
}

// aroundWindow is a submitted member's rank (0-based, best first) and the
// rows read around it, from rank start on.
type aroundWindow struct {
	rank, start int64
	rows        []redis.Z
}

// affectedWatchers returns a publication for each watched member within
// radius of a window's rank, in the order found and each once: its
// channel and its neighbourhood (the rows within radius of its own rank
// that the window holds, as {"rows":[…]}). A window must hold the rows
// from its start to 2·radius past its rank, or to the board's end.
func affectedWatchers(wins []aroundWindow, radius int64, watched map[string]string) []channelData {
	var out []channelData
	done := map[string]bool{}
	for _, w := range wins {
		for p := max(w.rank-radius, 0); p <= w.rank+radius && p-w.start < int64(len(w.rows)); p++ {
			m := fmt.Sprint(w.rows[p-w.start].Member)
			ch, ok := watched[m]
			if !ok || done[m] {
				continue
			}
			done[m] = true
			lo, hi := max(p-radius, 0)-w.start, min(p+radius+1-w.start, int64(len(w.rows)))
			out = append(out, channelData{channel: ch, data: neighbourhoodJSON(w.rows[lo:hi])})
		}
	}
	return out
}

// neighbourhoodJSON is rows as the app publishes them: {"rows":[{"member","score"}…]},
// the top-N app's document (redisTop).
func neighbourhoodJSON(rows []redis.Z) []byte {
	var msg redisTop
	msg.Rows = make([]redisRow, len(rows))
	for i, z := range rows {
		msg.Rows[i] = redisRow{Member: fmt.Sprint(z.Member), Score: z.Score}
	}
	body, _ := json.Marshal(msg) // cannot fail
	return body
}
