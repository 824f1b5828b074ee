package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Redis peer builds the fan-out a user would build without rankwire:
// writers ZADD into a sorted set, read the top N back and PUBLISH it as
// JSON when it changed; every subscriber holds a PSUBSCRIBE connection and
// gets the whole top N each time. Only the shared top-N view exists:
// Redis cannot push a per-player view.

// redisTop is the JSON the publisher sends and the subscribers decode.
type redisTop struct {
	Rows []redisRow `json:"rows"`
}

// redisRow is one row of a published view.
type redisRow struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

func redisChannel(board string) string { return "rwload.top." + board }

func newRedis(addr, srcIP string, pool int) *redis.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if srcIP != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(srcIP)}
	}
	return redis.NewClient(&redis.Options{Addr: addr, PoolSize: pool, DialerRetries: 1,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}})
}

// runRedisSubscribers starts subscribers [cfg.From, cfg.To) on Redis
// pub/sub. They run until ctx ends; wg waits for them.
func runRedisSubscribers(ctx context.Context, cfg workerConfig, stats *wsStats, sem chan struct{}, wg *sync.WaitGroup) error {
	if err := checkLoopback("http://" + cfg.URL); err != nil {
		return err
	}
	rc := newRedis(cfg.URL, cfg.SrcIP, 4)
	wg.Go(func() { <-ctx.Done(); rc.Close() })
	for i := range cfg.To - cfg.From {
		c := &wsConn{stats: stats, shard: i % statShards, subs: []wsSub{{kind: 0}}}
		wg.Go(func() { c.runRedis(ctx, rc, redisChannel(cfg.Board), sem) })
	}
	return nil
}

// runRedis is a connection with one subscription, to channel.
func (c *wsConn) runRedis(ctx context.Context, rc *redis.Client, channel string, sem chan struct{}) {
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	ps := rc.PSubscribe(ctx, channel)
	_, err := ps.Receive(ctx) // the subscription's confirmation
	<-sem
	if err != nil {
		c.stats.dialErrors.Add(1)
		c.stats.failed.Add(1)
		c.stats.count(c.stats.errors, "psubscribe: "+shortErr(err))
		ps.Close()
		return
	}
	s := &c.subs[0]
	s.joined = time.Now()
	c.stats.connected.Add(1)
	c.stats.connections.Add(1)
	defer c.stats.connected.Add(-1)
	defer c.stats.connections.Add(-1)
	stop := context.AfterFunc(ctx, func() { ps.Close() }) // unblocks ReceiveMessage
	defer stop()
	for ctx.Err() == nil {
		msg, err := ps.ReceiveMessage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.stats.count(c.stats.closes, "redis:"+err.Error())
			}
			return
		}
		now := time.Now()
		c.buf = append(c.buf[:0], msg.Payload...)
		c.counted(len(c.buf))
		// The subscribers' decoder reads a redisTop as a message with rows
		// and no type.
		if decodeWSMessage(c.buf, &c.msg) != nil {
			c.stats.count(c.stats.errors, "decode")
			continue
		}
		for _, r := range c.msg.Rows {
			c.observe(s, r.Member, r.Score, now)
		}
	}
}

// redisSink is the peer's writer: ZADD the batch, read the top N, and
// PUBLISH it where it differs from the last one published. Safe for
// concurrent use.
type redisSink struct {
	rc      *redis.Client
	key     string
	channel string
	limit   int
	// publish, where set, sends the top N instead of Redis's PUBLISH (the
	// Centrifugo peer's server API).
	publish func(ctx context.Context, data []byte) error
	// around, where set, takes the batches instead: the Centrifugo peer's
	// around views (fanout_around.go).
	around *aroundApp
	// views, where set, takes the batches instead: the Centrifugo peer's
	// rank-line and members views (fanout_views.go).
	views *viewsApp

	mu   sync.Mutex // guards last
	last string
}

func (r *redisSink) submit(ctx context.Context, items []score) (int, string) {
	if r.around != nil {
		return r.around.submit(ctx, items)
	}
	if r.views != nil {
		return r.views.submit(ctx, items)
	}
	zs := make([]redis.Z, len(items))
	for i, it := range items {
		zs[i] = redis.Z{Score: it.Score, Member: it.Member}
	}
	if err := r.rc.ZAdd(ctx, r.key, zs...).Err(); err != nil {
		return 0, "zadd"
	}
	markAck(ctx) // Redis took the write: the app would answer its client here
	top, err := r.rc.ZRevRangeWithScores(ctx, r.key, 0, int64(r.limit-1)).Result()
	if err != nil {
		return 0, "zrevrange"
	}
	var msg redisTop
	for _, z := range top {
		msg.Rows = append(msg.Rows, redisRow{fmt.Sprint(z.Member), z.Score})
	}
	body, _ := json.Marshal(msg) // cannot fail
	r.mu.Lock()
	changed := string(body) != r.last
	if changed {
		r.last = string(body)
	}
	r.mu.Unlock()
	if !changed {
		return len(items), ""
	}
	if r.publish != nil {
		if r.publish(ctx, body) != nil {
			return len(items), "publish"
		}
	} else if r.rc.Publish(ctx, r.channel, body).Err() != nil {
		return len(items), "publish"
	}
	return len(items), ""
}

// preload fills the sorted set with members m0 … m<n-1> at their slots'
// base scores, 1,000 per ZADD, unless it holds n already.
func (r *redisSink) preload(ctx context.Context, n int) error {
	if have, err := r.rc.ZCard(ctx, r.key).Result(); err != nil || have >= int64(n) {
		return err
	}
	for from := 0; from < n; from += 1000 {
		zs := make([]redis.Z, 0, 1000)
		for j := from; j < min(from+1000, n); j++ {
			zs = append(zs, redis.Z{Score: float64(j) * scoreSlot, Member: "m" + strconv.Itoa(j)})
		}
		if err := r.rc.ZAdd(ctx, r.key, zs...).Err(); err != nil {
			return fmt.Errorf("loadtest: redis preload: %w", err)
		}
	}
	return nil
}
