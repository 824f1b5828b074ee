package loadtest

import (
	"context"
	"testing"
	"time"
)

// TestAckBook: disabled it records nothing and answers false; enabled, a
// probe received after its batch's acknowledgement counts from it, one
// received first or whose acknowledgement is not recorded counts 0.
func TestAckBook(t *testing.T) {
	var b ackBook
	sent := time.UnixMicro(1_700_000_000_000_000)
	ack := sent.Add(3 * time.Millisecond)
	b.put(sent, ack)
	if _, ok := b.afterAck(sent, ack.Add(time.Millisecond)); ok {
		t.Fatal("a disabled book answered")
	}
	b.enable()
	b.put(sent, ack)
	tests := []struct {
		name       string
		sent, recv time.Time
		want       time.Duration
	}{
		{"after the acknowledgement", sent, ack.Add(2 * time.Millisecond), 2 * time.Millisecond},
		{"before it", sent, ack.Add(-time.Millisecond), 0},
		{"not recorded", sent.Add(time.Microsecond), ack.Add(time.Second), 0},
	}
	for _, tt := range tests {
		if d, ok := b.afterAck(tt.sent, tt.recv); !ok || d != tt.want {
			t.Errorf("%s: %v, %v; want %v", tt.name, d, ok, tt.want)
		}
	}
	b.disable()
	if _, ok := b.afterAck(sent, ack.Add(time.Millisecond)); ok {
		t.Error("answered after disable")
	}
	b.enable()
	if d, ok := b.afterAck(sent, ack.Add(time.Millisecond)); !ok || d != 0 {
		t.Errorf("enable did not start afresh: %v, %v", d, ok)
	}
}

// TestMarkAck: markAck fills the writer's empty slot and the book at once
// (before the sink returns), leaves a marked slot as it is (the first mark
// is the acknowledgement), and does nothing where the context carries no
// slot.
func TestMarkAck(t *testing.T) {
	acks.enable()
	defer acks.disable()
	markAck(context.Background()) // no slot: must not panic
	sent := time.Now()
	slot := ackSlot{sent: sent}
	markAck(withAckSlot(context.Background(), &slot))
	if slot.at.IsZero() {
		t.Fatal("markAck left the slot empty")
	}
	if d, _ := acks.afterAck(sent, slot.at.Add(time.Millisecond)); d != time.Millisecond {
		t.Errorf("the book has %v after the mark, want 1ms (the mark not in it)", d)
	}
	first := slot.at
	markAck(withAckSlot(context.Background(), &slot))
	if !slot.at.Equal(first) {
		t.Errorf("a second mark moved the acknowledgement from %v to %v", first, slot.at)
	}
}
