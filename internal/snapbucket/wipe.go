package snapbucket

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/shred"
)

// Wipe overwrites the chunks of tenant's object through js
// (internal/shred.Wipe: secure delete), for an object that holds erased
// personal data and is about to be replaced. Bounded by Timeout. A
// failure is logged: the replacement purges the chunks all the same, if
// not on disk. Without an object (or js) it does nothing.
func (b *Bucket) Wipe(js jetstream.JetStream, tenant string) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	subject, ok := b.Chunks(ctx, tenant)
	if !ok || js == nil {
		return
	}
	n, err := shred.Wipe(ctx, js, "OBJ_"+Name, subject)
	if err != nil {
		b.log.Warn("hub: old shared snapshot not wiped", "tenant", tenant, "err", err)
		return
	}
	b.log.Debug("hub: old shared snapshot wiped", "tenant", tenant, "chunks", n)
}
