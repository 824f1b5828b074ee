package loadtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	fdelta "github.com/shadowspore/fossil-delta"
)

// Centrifugo's delta option (its docs, "Delta compression in channels"):
// a subscriber that subscribes with "delta": "fossil" to a channel whose
// options allow it (allowed_delta_types, and in Centrifugo OSS history
// with positioning, since the server computes a delta against the
// channel's previous publication in its history) receives, for a
// publication the app sends with "delta": true, a Fossil delta against
// the previous publication it received in that channel, flagged
// "delta": true; the first one after subscribing, and any whose delta
// would not be shorter, whole. In the JSON protocol the data of every
// publication on such a subscription is a JSON string (a delta's bytes, or
// the document's), not the document itself. The subscriber keeps the last
// document per subscription (wsSub.base) to apply the next delta to.

var (
	errCentrifugoPush = errors.New("loadtest: centrifugo push without a publication's data")
	errDeltaNoBase    = errors.New("loadtest: centrifugo delta before any whole publication")
)

// centrifugoDeltaFlag marks a publication whose data is a delta.
var centrifugoDeltaFlag = []byte(`"delta":true`)

// centrifugoDoc is the document a push line's publication carries for s:
// its data as sent on a plain subscription; on a delta subscription (the
// data a JSON string) the string's bytes, or where the publication is
// flagged a delta (delta true), that delta applied to s's last document.
// The result becomes s's last document where it came from a string.
func (s *wsSub) centrifugoDoc(line []byte) (doc []byte, delta bool, err error) {
	data, before, after, ok := centrifugoData(line)
	if !ok {
		return nil, false, errCentrifugoPush
	}
	if len(data) == 0 || data[0] != '"' {
		return data, false, nil
	}
	var str string
	if err := json.Unmarshal(data, &str); err != nil {
		return nil, false, fmt.Errorf("loadtest: centrifugo delta data: %w", err)
	}
	doc = []byte(str)
	delta = bytes.Contains(before, centrifugoDeltaFlag) || bytes.Contains(after, centrifugoDeltaFlag)
	if delta {
		if s.base == nil {
			return nil, true, errDeltaNoBase
		}
		full, err := fdelta.Apply(s.base, doc)
		if err != nil {
			return nil, true, fmt.Errorf("loadtest: centrifugo fossil delta: %w", err)
		}
		doc = full
	}
	s.base = doc
	return doc, delta, nil
}
