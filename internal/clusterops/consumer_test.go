package clusterops

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natsconf"
	"github.com/rankwire/rankwire/internal/natstest"
)

const testSecret = "a-test-cluster-secret-0123456789"

// CreateLocal gets each server's reader a consumer on that server (a
// random placement gets two of three elsewhere), and leaves no consumer
// it tried and dropped behind.
func TestCreateLocalPlacesOnSelf(t *testing.T) {
	defer func(n int) { localTries = n }(localTries)
	localTries = 60 // (2/3)^60: no call in this test keeps a consumer elsewhere by the bound
	srvs, _ := natstest.Cluster(t, natsconf.Cluster{Name: "local", Secret: testSecret}, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var jss []jetstream.JetStream
	for _, s := range srvs {
		_, js := natstest.Connect(t, s, nats.UserInfo(natsconf.ClientUser, natsconf.ClientPassword(testSecret)))
		jss = append(jss, js)
	}
	await.For(t, 45*time.Second, func() error {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := jss[0].CreateOrUpdateStream(actx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Replicas: 3})
		return err
	})
	cfg := jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, Replicas: 1, MemoryStorage: true}
	var made atomic.Uint64
	for round := range 3 { // placement is random: several rounds make a pass by luck unlikely (1 in 3^9)
		for i, s := range srvs {
			cons, err := CreateLocal(ctx, jss[i], "S", cfg, s.Name(), fmt.Sprintf("c%d_%d_", round, i), &made)
			if err != nil {
				t.Fatal(err)
			}
			if got := cons.CachedInfo().Cluster.Leader; got != s.Name() {
				t.Errorf("round %d: %s's consumer lives on %s", round, s.Name(), got)
			}
		}
	}
	await.For(t, 10*time.Second, func() error {
		st, err := jss[0].Stream(ctx, "S")
		if err != nil {
			return err
		}
		n := 0
		for range st.ConsumerNames(ctx).Name() {
			n++
		}
		if n != 9 {
			return fmt.Errorf("%d consumers of %d made, want the 9 kept", n, made.Load())
		}
		return nil
	})
	t.Logf("%d consumers made for 9 kept", made.Load())
}
