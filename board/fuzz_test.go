package board

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzOps decodes operations from bytes, four per step, and checks the board
// against the model after every one. The first byte picks the configuration.
func FuzzOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{5, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{9, 0x10, 0x20, 0x30, 0x40, 0x11, 0x21, 0x31, 0x41, 0xe0, 0xf0, 0x12, 0x34})
	f.Add([]byte{15, 7, 7, 7, 7, 7, 7, 7, 7, 0xc0, 0xf7, 0x10, 0x01, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 400 {
			return
		}
		cs := configs()
		h := newHarness(t, cs[int(data[0])%len(cs)])
		for data = data[1:]; len(data) >= 4; data = data[4:] {
			h.step(binary.LittleEndian.Uint32(data))
		}
	})
}

// FuzzDecode feeds arbitrary bytes to Decode, with the checksum repaired so
// that the parser behind it is reached: it must return a valid board or an
// error wrapping ErrCorrupt, never panic.
func FuzzDecode(f *testing.F) {
	for _, cfg := range configs()[:4] {
		h := newHarness(f, cfg)
		for i := range uint32(30) {
			h.step(i * 2654435761)
		}
		snap, _ := h.b.MarshalBinary()
		f.Add(snap, false)
		f.Add(snap, true)
	}
	f.Add([]byte("RWB\x01"), false)
	f.Fuzz(func(t *testing.T, data []byte, fixCRC bool) {
		if fixCRC && len(data) >= 8 {
			end := len(data) - 4
			binary.LittleEndian.PutUint32(data[end:], crc32.Checksum(data[:end], crcTable))
		}
		b, err := Decode(data, Config{CompareMembers: nameOrder})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		if err := b.Check(); err != nil {
			t.Fatalf("decoded board fails Check: %v", err)
		}
	})
}
