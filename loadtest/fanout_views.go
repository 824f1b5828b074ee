package loadtest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// The Centrifugo peer's rank-line and members app: the same views as
// rankwire's "rank" (the one row at a rank: the prize line) and "members"
// (a list of members' rows, in rank order), each on a channel of its own,
// published whole (or with the delta option, as Centrifugo's delta of the
// whole) where a submission changed it. A row carries what rankwire's rows
// of those views show: rank (1-based), member and score (rankwire adds the
// subscore, which Redis has not, and its envelope: type, id, seq, prev and
// the board's total). Per batch the app makes two Redis round trips and
// one Centrifugo request:
//
//  1. a pipeline of a ZREVRANK of each submitted member, the ZADD of the
//     batch, and a ZREVRANK of each again (where rank lines are watched:
//     a member moving from rank a to rank b changes every rank line in
//     between, one new to the board every line from b to the end);
//  2. a pipeline of a ZREVRANGE … WITHSCORES of each watched rank line the
//     batch changed, and a ZREVRANK and ZSCORE of every member of each
//     watched members view holding a submitted member;
//  3. those views, whole, in one POST /api/batch.
//
// A members view is published where one of its own members scored; a
// change of rank of its members by another's move is not followed (in the
// benchmarks' boards a score never leaves its member's slot, scoreSlot, so
// no rank moves; a rank line is followed either way).

// rankChannel is the channel of the rank line at rank (1-based) on board.
func rankChannel(board string, rank int) string {
	return "rwload.rank." + board + "." + strconv.Itoa(rank)
}

// membersChannel is the channel of the members view of members on board:
// the same list, the same channel, so that the app publishes a view once
// whatever its watchers (as rankwire encodes a view once). The list is
// named by a 64-bit hash (FNV-1a, base 36), not spelled out: every
// publication carries its channel's name, and an app would name a
// friends list by its owner, in a few bytes, not by its members.
func membersChannel(board string, members []string) string {
	h := fnv.New64a()
	for _, m := range members {
		h.Write([]byte(m))
		h.Write([]byte{0})
	}
	return "rwload.members." + board + "." + strconv.FormatUint(h.Sum64(), 36)
}

// membersView is a watched members view: its channel and members.
type membersView struct {
	channel string
	members []string
}

// viewsApp is the app's rank-line and members fan-out. Safe for
// concurrent use: its fields are read only.
type viewsApp struct {
	rc        *redis.Client
	key       string           // the sorted set
	ranks     []int64          // the watched rank lines, 0-based, ascending
	rankChans map[int64]string // a watched rank line → its channel
	views     []membersView
	byMember  map[string][]int // a member → the views (indices) holding it
	publish   func(ctx context.Context, pubs []channelData) error
}

// newViewsApp serves the rank and members views of plan's subscriptions
// [0, subs) on board.
func newViewsApp(rc *redis.Client, key, board string, plan viewPlan, subs int, publish func(context.Context, []channelData) error) *viewsApp {
	a := &viewsApp{rc: rc, key: key, rankChans: map[int64]string{}, byMember: map[string][]int{}, publish: publish}
	seen := map[string]bool{}
	for i := range subs {
		v, kind := plan.view(i)
		switch kind {
		case 2:
			if _, ok := a.rankChans[int64(v.Rank-1)]; !ok {
				a.rankChans[int64(v.Rank-1)] = rankChannel(board, v.Rank)
				a.ranks = append(a.ranks, int64(v.Rank-1))
			}
		case 3:
			ch := membersChannel(board, v.Members)
			if seen[ch] {
				continue
			}
			seen[ch] = true
			for _, m := range v.Members {
				a.byMember[m] = append(a.byMember[m], len(a.views))
			}
			a.views = append(a.views, membersView{channel: ch, members: v.Members})
		}
	}
	slices.Sort(a.ranks)
	return a
}

func (a *viewsApp) submit(ctx context.Context, items []score) (int, string) {
	zs := make([]redis.Z, len(items))
	for i, it := range items {
		zs[i] = redis.Z{Score: it.Score, Member: it.Member}
	}
	lines := len(a.ranks) > 0
	var before, after []*redis.IntCmd
	pipe := a.rc.Pipeline()
	if lines {
		before = a.revRanks(ctx, pipe, items)
	}
	pipe.ZAdd(ctx, a.key, zs...)
	if lines {
		after = a.revRanks(ctx, pipe, items)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, "zadd"
	}
	var moves []rankMove
	for i := range before {
		moves = append(moves, moveOf(before[i], after[i]))
	}
	pubs, err := a.read(ctx, changedLines(a.ranks, moves), a.touchedViews(items))
	if err != nil {
		return len(items), "zrevrange"
	}
	if a.publish(ctx, pubs) != nil {
		return len(items), "publish"
	}
	return len(items), ""
}

func (a *viewsApp) revRanks(ctx context.Context, pipe redis.Pipeliner, items []score) []*redis.IntCmd {
	out := make([]*redis.IntCmd, len(items))
	for i, it := range items {
		out[i] = pipe.ZRevRank(ctx, a.key, it.Member)
	}
	return out
}

// rankMove is a submitted member's rank (0-based) before and after the
// batch; from is -1 where it was not on the board.
type rankMove struct{ from, to int64 }

func moveOf(before, after *redis.IntCmd) rankMove {
	from, err := before.Result()
	if err != nil { // redis.Nil: new to the board
		from = -1
	}
	return rankMove{from: from, to: after.Val()}
}

// changedLines returns the watched rank lines (0-based, ascending, each
// once) that moves may have changed: those between a move's two ranks,
// both included (the mover's own new and old lines, and every line it
// pushed one up or down), or from its new rank to the end for a member
// new to the board.
func changedLines(ranks []int64, moves []rankMove) []int64 {
	var out []int64
	for _, m := range moves {
		lo, hi := min(m.from, m.to), max(m.from, m.to)
		if m.from < 0 {
			lo, hi = m.to, int64(1)<<62
		}
		i, _ := slices.BinarySearch(ranks, lo)
		for ; i < len(ranks) && ranks[i] <= hi; i++ {
			out = append(out, ranks[i])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// touchedViews returns the watched members views (indices, ascending, each
// once) holding a submitted member.
func (a *viewsApp) touchedViews(items []score) []int {
	var out []int
	for _, it := range items {
		out = append(out, a.byMember[it.Member]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// read fetches the rank lines and members views in one pipeline and
// returns them as publications, rank lines first.
func (a *viewsApp) read(ctx context.Context, lines []int64, views []int) ([]channelData, error) {
	if len(lines)+len(views) == 0 {
		return nil, nil
	}
	pipe := a.rc.Pipeline()
	rows := make([]*redis.ZSliceCmd, len(lines))
	for i, r := range lines {
		rows[i] = pipe.ZRevRangeWithScores(ctx, a.key, r, r)
	}
	type memberCmds struct {
		rank  *redis.IntCmd
		score *redis.FloatCmd
	}
	cmds := make([][]memberCmds, len(views))
	for i, v := range views {
		for _, m := range a.views[v].members {
			cmds[i] = append(cmds[i], memberCmds{pipe.ZRevRank(ctx, a.key, m), pipe.ZScore(ctx, a.key, m)})
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	pubs := make([]channelData, 0, len(lines)+len(views))
	for i, r := range lines {
		var doc []viewRow
		for _, z := range rows[i].Val() {
			doc = append(doc, viewRow{Rank: r + 1, Member: fmt.Sprint(z.Member), Score: z.Score})
		}
		pubs = append(pubs, channelData{channel: a.rankChans[r], data: viewJSON(doc)})
	}
	for i, v := range views {
		var doc []viewRow
		for k, m := range a.views[v].members {
			if rank, err := cmds[i][k].rank.Result(); err == nil {
				doc = append(doc, viewRow{Rank: rank + 1, Member: m, Score: cmds[i][k].score.Val()})
			}
		}
		slices.SortFunc(doc, func(x, y viewRow) int { return int(x.Rank - y.Rank) })
		pubs = append(pubs, channelData{channel: a.views[v].channel, data: viewJSON(doc)})
	}
	return pubs, nil
}

// viewRow is a row of a rank-line or members publication: what rankwire's
// rows of those views show, less the subscore.
type viewRow struct {
	Rank   int64   `json:"rank"`
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

// viewJSON is rows as the app publishes them: {"rows":[{"rank","member","score"}…]}
// ("rows":[] for none: a rank past the board's end, members not on it).
func viewJSON(rows []viewRow) []byte {
	var b []byte
	b = append(b, `{"rows":[`...)
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"rank":`...), r.Rank, 10)
		b = appendJSONString(append(b, `,"member":`...), r.Member)
		b = strconv.AppendFloat(append(b, `,"score":`...), r.Score, 'f', -1, 64)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}
