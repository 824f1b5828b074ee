package redact

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
)

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:pw@hooks.example.com:8443/t/s3cret?k=s3cret#s3cret": "https://hooks.example.com:8443",
		"http://10.0.0.1/x": "http://10.0.0.1",
		"not a url":         "(unparsable URL)",
		"://x":              "(unparsable URL)",
	} {
		if got := Origin(in); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURLs(t *testing.T) {
	got := URLs("nats://u:s3cret@127.0.0.1:4222, nats://127.0.0.2:4222,nats://u:s3cret@%zz")
	want := "nats://127.0.0.1:4222,nats://127.0.0.2:4222,(a URL that does not parse)"
	if got != want {
		t.Errorf("URLs = %q, want %q", got, want)
	}
}

func TestErr(t *testing.T) {
	cause := errors.New("refused")
	err := fmt.Errorf("post: %w", &url.Error{Op: "Post", URL: "https://h/s3cret", Err: cause})
	if got := Err(err); got != cause {
		t.Errorf("Err = %v, want the cause", got)
	}
	if got := Err(cause); got != cause {
		t.Errorf("Err(cause) = %v", got)
	}
}
