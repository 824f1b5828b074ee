package redact

import "testing"

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
