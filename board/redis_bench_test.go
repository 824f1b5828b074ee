package board_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// redisCtx is the context of every Redis command. A benchmark has no
// deadline of its own; the client's read timeout catches a hung server.
var redisCtx = context.Background()

// pipeLen is how many commands the pipelined Redis peer sends per round trip.
const pipeLen = 1000

var errNoRedis = errors.New("redis-server is not on PATH (Debian: apt-get install redis-server): skipping the Redis peer")

// redisServer is a redis-server process this test binary started and owns.
type redisServer struct {
	cmd     *exec.Cmd
	log     string        // the server's log file
	done    chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's result, set before done closes
	rdb     *redis.Client
}

// startRedis starts a redis-server on a free loopback port, with persistence
// off and its files in a temporary directory, and waits until it answers.
// top's cleanup kills it.
func startRedis(top *testing.B) (*redisServer, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errNoRedis
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := top.TempDir()
	s := &redisServer{log: filepath.Join(dir, "redis.log"), done: make(chan struct{})}
	s.cmd = exec.Command(path, "--bind", "127.0.0.1", "--port", port,
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", dir, "--logfile", s.log)
	dieWithParent(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	top.Cleanup(s.stop) // after TempDir's, so it runs before the removal
	s.rdb = redis.NewClient(&redis.Options{
		Addr:                     net.JoinHostPort("127.0.0.1", port),
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		PoolSize:                 1, // one command or pipeline at a time
		ReadTimeout:              time.Minute,
	})
	if err := s.waitReady(10 * time.Second); err != nil {
		return nil, fmt.Errorf("%w\nredis-server log:\n%s", err, s.logText())
	}
	return s, nil
}

// dieWithParent asks the kernel to kill cmd's process when this process dies
// without running its cleanups (a panic, or go test killing it). Only Linux has
// SysProcAttr.Pdeathsig; elsewhere the cleanup alone stops the server.
func dieWithParent(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{}
	if f := reflect.ValueOf(attr).Elem().FieldByName("Pdeathsig"); f.IsValid() {
		f.SetInt(int64(syscall.SIGKILL))
	}
	cmd.SysProcAttr = attr
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// waitReady polls PING until the server answers, exits or timeout passes.
func (s *redisServer) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := s.rdb.Ping(redisCtx).Err()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("redis-server exited: %v", s.waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not answer within %v: %w", timeout, err)
		}
	}
}

// stop kills the server by its PID and waits for it to exit.
func (s *redisServer) stop() {
	s.rdb.Close()
	s.cmd.Process.Kill() // an error means it has already exited
	<-s.done
}

func (s *redisServer) logText() string {
	data, err := os.ReadFile(s.log)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// usedMemory returns used_memory from INFO memory.
func (s *redisServer) usedMemory() (int64, error) {
	info, err := s.rdb.Info(redisCtx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, errors.New("INFO memory has no used_memory")
}

// load fills the sorted set key with members 1..n and peerScores(n), in ZADDs
// of 1000 members.
func (s *redisServer) load(key string, n int) error {
	next := peerScores(n)
	zs := make([]redis.Z, 0, 1000)
	for m := 1; m <= n; m++ {
		zs = append(zs, redis.Z{Score: next(), Member: strconv.Itoa(m)})
		if len(zs) == cap(zs) || m == n {
			if err := s.rdb.ZAdd(redisCtx, key, zs...).Err(); err != nil {
				return err
			}
			zs = zs[:0]
		}
	}
	return nil
}

// server returns the env's Redis server, starting it on first use; b skips
// where redis-server is not installed.
func (env *peerEnv) server(b *testing.B) *redisServer {
	if env.redis == nil && env.redisErr == nil {
		env.redis, env.redisErr = startRedis(env.top)
	}
	if errors.Is(env.redisErr, errNoRedis) {
		b.Skip(env.redisErr)
	}
	if env.redisErr != nil {
		b.Fatal(env.redisErr)
	}
	return env.redis
}

// redisPeer holds the key of a sorted set of n members on the env's server,
// shared by the redis and redis-pipelined impls.
type redisPeer struct {
	rdb *redis.Client
	key string
	n   int
}

func (env *peerEnv) redisPeer(b *testing.B, n int) *redisPeer {
	s := env.server(b)
	key, ok := env.redisSet[n]
	if !ok {
		key = fmt.Sprintf("rankwire:peers:%d", n)
		if err := s.load(key, n); err != nil {
			b.Fatalf("load %d members into Redis: %v", n, err)
		}
		env.redisSet[n] = key
	}
	return &redisPeer{rdb: s.rdb, key: key, n: n}
}

func loadRedisPeer(env *peerEnv, b *testing.B, n int) peerOps {
	p := env.redisPeer(b, n)
	return peerOps{
		"update": p.update, "insert": p.insert, "rank": p.rank,
		"at": p.at, "top100": p.top100, "around5": p.around5,
	}
}

func loadRedisPipelinedPeer(env *peerEnv, b *testing.B, n int) peerOps {
	p := env.redisPeer(b, n)
	return peerOps{
		"update": p.updatePipelined, "insert": p.insertPipelined, "rank": p.rankPipelined,
		"at": p.atPipelined, "top100": p.top100Pipelined, "around5": p.around5Pipelined,
	}
}

func member(m uint32) string { return strconv.FormatUint(uint64(m), 10) }

// removeInserted is insertBatches' remove for both Redis impls.
func (p *redisPeer) removeInserted(b *testing.B) func(first uint32, k int) {
	return func(first uint32, k int) {
		names := make([]any, k)
		for i := range names {
			names[i] = member(first + uint32(i))
		}
		if err := p.rdb.ZRem(redisCtx, p.key, names...).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// One command per round trip: ZADD, ZREVRANK, ZREVRANGE … WITHSCORES.

func (p *redisPeer) zadd(c redis.Cmdable, m uint32, r *rand.Rand) *redis.IntCmd {
	return c.ZAdd(redisCtx, p.key, redis.Z{Score: randScore(r), Member: member(m)})
}

func (p *redisPeer) update(b *testing.B, r *rand.Rand) {
	for range b.N {
		if err := p.zadd(p.rdb, randMember(r, p.n), r).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func (p *redisPeer) insert(b *testing.B, r *rand.Rand) {
	insertBatches(b, p.n, func(first uint32, k int) {
		for m := range uint32(k) {
			if err := p.zadd(p.rdb, first+m, r).Err(); err != nil {
				b.Fatal(err)
			}
		}
	}, p.removeInserted(b))
}

func (p *redisPeer) rank(b *testing.B, r *rand.Rand) {
	for range b.N {
		if err := p.rdb.ZRevRank(redisCtx, p.key, member(randMember(r, p.n))).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func (p *redisPeer) at(b *testing.B, r *rand.Rand) {
	for range b.N {
		i := int64(r.IntN(p.n))
		if err := p.rdb.ZRevRangeWithScores(redisCtx, p.key, i, i).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func (p *redisPeer) top100(b *testing.B, _ *rand.Rand) {
	for range b.N {
		if err := p.rdb.ZRevRangeWithScores(redisCtx, p.key, 0, 99).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// around5 takes two round trips: the rank, then the range around it.
func (p *redisPeer) around5(b *testing.B, r *rand.Rand) {
	for range b.N {
		rank, err := p.rdb.ZRevRank(redisCtx, p.key, member(randMember(r, p.n))).Result()
		if err != nil {
			b.Fatal(err)
		}
		if err := p.rdb.ZRevRangeWithScores(redisCtx, p.key, max(rank-5, 0), rank+5).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// The same commands in pipelines of pipeLen: b.N commands in ⌈b.N/pipeLen⌉
// round trips, so ns/op is the time per command.

// pipelined times b.N commands, queue adding one to pipe, sent pipeLen at a time.
func (p *redisPeer) pipelined(b *testing.B, queue func(pipe redis.Pipeliner)) {
	pipe := p.rdb.Pipeline()
	for done := 0; done < b.N; {
		k := min(pipeLen, b.N-done)
		for range k {
			queue(pipe)
		}
		if _, err := pipe.Exec(redisCtx); err != nil {
			b.Fatal(err)
		}
		done += k
	}
}

func (p *redisPeer) updatePipelined(b *testing.B, r *rand.Rand) {
	p.pipelined(b, func(pipe redis.Pipeliner) { p.zadd(pipe, randMember(r, p.n), r) })
}

// insertPipelined sends each batch of new members (at most pipeLen) in one
// pipeline.
func (p *redisPeer) insertPipelined(b *testing.B, r *rand.Rand) {
	pipe := p.rdb.Pipeline()
	insertBatches(b, p.n, func(first uint32, k int) {
		for m := range uint32(k) {
			p.zadd(pipe, first+m, r)
		}
		if _, err := pipe.Exec(redisCtx); err != nil {
			b.Fatal(err)
		}
	}, p.removeInserted(b))
}

func (p *redisPeer) rankPipelined(b *testing.B, r *rand.Rand) {
	p.pipelined(b, func(pipe redis.Pipeliner) {
		pipe.ZRevRank(redisCtx, p.key, member(randMember(r, p.n)))
	})
}

func (p *redisPeer) atPipelined(b *testing.B, r *rand.Rand) {
	p.pipelined(b, func(pipe redis.Pipeliner) {
		i := int64(r.IntN(p.n))
		pipe.ZRevRangeWithScores(redisCtx, p.key, i, i)
	})
}

func (p *redisPeer) top100Pipelined(b *testing.B, _ *rand.Rand) {
	p.pipelined(b, func(pipe redis.Pipeliner) { pipe.ZRevRangeWithScores(redisCtx, p.key, 0, 99) })
}

// around5Pipelined sends pipeLen ZREVRANKs, then the pipeLen ZREVRANGEs
// around the ranks they returned: two round trips per pipeLen ops.
func (p *redisPeer) around5Pipelined(b *testing.B, r *rand.Rand) {
	pipe := p.rdb.Pipeline()
	ranks := make([]*redis.IntCmd, 0, pipeLen)
	for done := 0; done < b.N; {
		k := min(pipeLen, b.N-done)
		ranks = ranks[:0]
		for range k {
			ranks = append(ranks, pipe.ZRevRank(redisCtx, p.key, member(randMember(r, p.n))))
		}
		if _, err := pipe.Exec(redisCtx); err != nil {
			b.Fatal(err)
		}
		for _, c := range ranks {
			rank := c.Val()
			pipe.ZRevRangeWithScores(redisCtx, p.key, max(rank-5, 0), rank+5)
		}
		if _, err := pipe.Exec(redisCtx); err != nil {
			b.Fatal(err)
		}
		done += k
	}
}

// redisPerMember times b.N loads of n members into an empty key and reports
// the used_memory that the first one added, per member.
func (env *peerEnv) redisPerMember(b *testing.B, n int) {
	s := env.server(b)
	const key = "rankwire:memory"
	b.ReportAllocs()
	var held int64
	for i := range b.N {
		b.StopTimer()
		if err := s.rdb.Del(redisCtx, key).Err(); err != nil {
			b.Fatal(err)
		}
		before, err := s.usedMemory()
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := s.load(key, n); err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.StopTimer()
			after, err := s.usedMemory()
			if err != nil {
				b.Fatal(err)
			}
			held = after - before
			b.StartTimer()
		}
	}
	b.StopTimer()
	if err := s.rdb.Del(redisCtx, key).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(held)/float64(n), "B/member")
}
