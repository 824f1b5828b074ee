package webhook

import "testing"

// TestNotificationID: the webhook-id of a notification, of one stored
// before message ids carried the tenant, and of a copy an erasure
// republished (the same as the original's, so receivers deduplicate it).
func TestNotificationID(t *testing.T) {
	for msgID, want := range map[string]string{
		"t1/board.ended:cup:1796212800000":               "board.ended:cup:1796212800000",
		"board.ended:cup:1796212800000":                  "board.ended:cup:1796212800000",
		"t1/board.ended:cup:1796212800000#erased.17":     "board.ended:cup:1796212800000",
		"t1/standings.amended:cup:9#erased.17#erased.40": "standings.amended:cup:9",
	} {
		if got := notificationID(msgID); got != want {
			t.Errorf("notificationID(%q) = %q, want %q", msgID, got, want)
		}
	}
}
