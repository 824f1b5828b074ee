package ledger

import (
	"strconv"
	"testing"
)

// personalState is buildState(n) with a profile and a linked e-mail alias
// for every member: the most personal data a snapshot can hold per member.
func personalState(n int) *State {
	st := buildState(n)
	seq := st.Seq()
	for m := range n {
		id := "m" + strconv.Itoa(m)
		seq++
		st.Apply(seq, &Event{Kind: EvProfile, Member: id, Profile: &Profile{Name: "Player " + id, Country: "MT"}})
		seq++
		st.Apply(seq, &Event{Kind: EvLink, Member: id, Aliases: []string{"email:" + id + "@mail.example"}})
	}
	return st
}

// BenchmarkSnapshotPersonal times a snapshot's encoding and decoding in
// the layout before personal data was sealed (RWSNAP7, in clear) and in
// RWSNAP8 (records, the identity index masked) with a Keyring that costs
// nothing (fakeRing), at N members with no personal data and at N members
// that all have a profile and an alias: the layout's own cost. The real
// keys' cost (AES-GCM and a derived nonce per member) is internal/shred's
// BenchmarkSnapshotRing.
//
//	go test ./internal/ledger -run '^$' -bench 'SnapshotPersonal' -count 5
func BenchmarkSnapshotPersonal(b *testing.B) {
	for _, n := range []struct {
		name string
		st   *State
	}{{"N=1e5/personal=none", buildState(100_000)}, {"N=1e5/personal=all", personalState(100_000)}} {
		st := n.st
		enc := map[string]func() ([]byte, error){
			"v7": func() ([]byte, error) { return st.encode(&snapWriter{buf: []byte(snapMagicV7), v7: true}) },
			"v8": func() ([]byte, error) { return st.Encode(&fakeRing{}) },
		}
		for _, layout := range []string{"v7", "v8"} {
			b.Run(n.name+"/encode/"+layout, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := enc[layout](); err != nil {
						b.Fatal(err)
					}
				}
			})
			data, _ := enc[layout]()
			b.Run(n.name+"/decode/"+layout, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Decode(data, &fakeRing{}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
