package hub

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"testing"

	fprint "github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/snapfile"
)

// A clustered node whose snapshot file had one byte of a score changed so
// that it still decodes (its CRC made right: bit rot before the write, or
// whoever changed the file) never serves it where no checkpoint the
// cluster agreed with vouches for the file (a fresh cluster: the tenant
// never reached one): it replays the stream from its first event, and its
// first answer is the right standing. The same file on a single node
// (no cluster to check against) is loaded: the case's control, which shows
// the flip is one the file's own checks pass.
func TestUnvouchedFileNotServed(t *testing.T) {
	url := startNATS(t)
	dir := t.TempDir()
	v, _ := clusteredHubIn(t, url, dir, &published{got: map[uint64]fprint.Checkpoint{}})
	mustPut(t, v, "t1", "b", Settings{})
	for i := range 3 { // seq 2..4: no checkpoint (every 5), nothing agreed or shared
		mustSubmit(t, v, "t1", "b", Item{Member: fmt.Sprint("m", i), Score: float64(100+i) + 0.5})
	}
	want := top(t, v, Loc{Tenant: "t1", Board: "b"})
	v.Close() // its file: the state at 4
	path := snapfile.In(dir).Path("t1")
	good := mustRead(t, path)
	flipScoreIn(t, path, 101.5)

	v, _ = clusteredHubIn(t, url, dir, &published{got: map[uint64]fprint.Checkpoint{}})
	if got := top(t, v, Loc{Tenant: "t1", Board: "b"}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the restarted node serves %v, want %v", got, want)
	}
	if st := v.Stats(); len(st) != 1 || st[0].Start != 0 || st[0].Applied != 4 {
		t.Fatalf("restarted from %+v, want the stream's first event, caught up to 4", st)
	}
	v.Close()

	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	flipScoreIn(t, path, 101.5)
	single := startHub(t, Config{NATSURL: url, DataDir: dir, SnapshotEvery: 5})
	if got := top(t, single, Loc{Tenant: "t1", Board: "b"}); fmt.Sprint(got) == fmt.Sprint(want) {
		t.Fatalf("a node without the cluster's comparison did not load the flipped file (%v): the test proves nothing", got)
	}
}

// flipScoreIn changes one byte of the score old (not an integer: a board
// keeps it as 8 bytes) wherever the snapshot file at path holds it, and
// makes the CRCs right again (each board's, then the file's); it fails the
// test unless the file still decodes, to another state at the same
// sequence.
func flipScoreIn(t *testing.T, path string, old float64) {
	t.Helper()
	data := mustRead(t, path)
	before, err := ledger.Decode(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	boards := boardSpans(data)
	pattern := binary.LittleEndian.AppendUint64(nil, math.Float64bits(old))
	if len(boards) == 0 || !bytes.Contains(data, pattern) {
		t.Fatalf("no board or no score %v in the snapshot", old)
	}
	for i := bytes.Index(data, pattern); i >= 0; i = bytes.Index(data, pattern) {
		data[i+5] ^= 0x01 // a low bit of the mantissa: 101.5 becomes 101.515625, still in order, so it decodes
	}
	for _, b := range boards {
		binary.LittleEndian.PutUint32(data[b[1]:], crc32.Checksum(data[b[0]:b[1]], castagnoli))
	}
	body := data[:len(data)-4]
	binary.LittleEndian.PutUint32(data[len(body):], crc32.Checksum(body, castagnoli))
	after, err := ledger.Decode(data, nil)
	if err != nil {
		t.Fatalf("the flipped snapshot does not decode: %v", err)
	}
	if after.Seq() != before.Seq() || bytes.Equal(encode(t, after), encode(t, before)) {
		t.Fatal("the flip changed nothing, or the sequence")
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// boardSpans returns where each board encoding in a snapshot starts (its
// magic) and where its CRC is: the first 4 bytes after it that are the
// CRC-32C of what precedes them.
func boardSpans(data []byte) [][2]int {
	var spans [][2]int
	for from := 0; ; {
		i := bytes.Index(data[from:], []byte("RWB\x01"))
		if i < 0 {
			return spans
		}
		start := from + i
		for end := start + 8; end+4 <= len(data); end++ {
			if crc32.Checksum(data[start:end], castagnoli) == binary.LittleEndian.Uint32(data[end:]) {
				spans = append(spans, [2]int{start, end})
				break
			}
		}
		from = start + 4
	}
}
