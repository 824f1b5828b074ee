package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

type item struct {
	Member   *string  `json:"member"`
	Score    *float64 `json:"score"`
	Subscore float64  `json:"subscore"`
	ID       string   `json:"id"`
}

type batch struct {
	item
	Scores    []item   `json:"scores"`
	Retention int      `json:"retention"`
	Tags      []string `json:"tags"`
	Flag      bool     `json:"flag"`
	Any       any      `json:"any"`
	Skipped   string   `json:"-"`
}

// TestMessages: each refusal names the JSON path, with indexes, and says
// what is wrong without Go text.
func TestMessages(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"empty", "", "body: empty, want a JSON object"},
		{"spaces", " \n\t", "body: empty, want a JSON object"},
		{"array", `[1]`, "body: want an object, got array"},
		{"null", `null`, "body: want an object, got null"},
		{"string", `"x"`, "body: want an object, got string"},
		{"not a value", `xyz`, "body: invalid JSON at byte 0: want a JSON object"},
		{"not JSON", `{nope`, `body: invalid JSON at byte 1: want a field name in ""`},
		{"trailing", `{} {}`, "body: data after the JSON value at byte 3"},
		{"truncated", `{"member":`, "member: invalid JSON at byte 10: the body ends early"},
		{"truncated string", `{"member":"ab`, "member: invalid JSON at byte 13: the body ends inside a string"},
		{"no colon", `{"member" "x"}`, "member: invalid JSON at byte 10: want ':' after the field name"},
		{"no comma", `{"member":"x" "score":1}`, "body: invalid JSON at byte 14: want ',' or '}'"},
		{"type top", `{"score":"1"}`, "score: want a number, got string"},
		{"type in batch", `{"scores":[{"member":"a","score":1},{"member":"b","score":"7"}]}`, "scores[1].score: want a number, got string"},
		{"object for array", `{"scores":{}}`, "scores: want an array, got object"},
		{"array item not object", `{"scores":[1]}`, "scores[0]: want an object, got number"},
		{"unknown top", `{"member":"x","scroe":1}`, "scroe: unknown field"},
		{"unknown in batch", `{"scores":[{},{},{"foo":1}]}`, "scores[2].foo: unknown field"},
		{"case differs", `{"Member":"x"}`, "Member: unknown field"},
		{"odd name", `{"a b":1}`, `body["a b"]: unknown field`},
		{"skipped field", `{"Skipped":"x"}`, "Skipped: unknown field"},
		{"repeats", `{"member":"a","member":"b"}`, "member: field repeats"},
		{"bad utf8", "{\"member\":\"bad\xff\xfe\"}", "member: invalid UTF-8"},
		{"bad utf8 in batch", "{\"scores\":[{\"member\":\"a\\u00e9\xfe\"}]}", "scores[0].member: invalid UTF-8"},
		{"lone high surrogate", `{"member":"a\ud800"}`, "member: invalid UTF-8"},
		{"lone low surrogate", `{"member":"\udc00x"}`, "member: invalid UTF-8"},
		{"high then not low", `{"member":"\ud800\u0041"}`, "member: invalid UTF-8"},
		{"bad utf8 in name", "{\"scores\":[{\"\xff\":1}]}", "scores[0]: invalid UTF-8 in a field name"},
		{"bad utf8 in tags", "{\"tags\":[\"ok\",\"\xc3\"]}", "tags[1]: invalid UTF-8"},
		{"bad utf8 in any", "{\"any\":{\"k\":[\"\xff\"]}}", "any.k[0]: invalid UTF-8"},
		{"overflow", `{"score":1e999}`, "score: want a finite number"},
		{"integer field", `{"retention":1.5}`, "retention: want an integer"},
		{"integer range", `{"retention":99999999999999999999}`, "retention: want an integer in range"},
		{"bool field", `{"flag":1}`, "flag: want true or false, got number"},
		{"bad number", `{"score":01}`, "body: invalid JSON at byte 10: want ',' or '}'"},
		{"bad fraction", `{"score":1.}`, "score: invalid JSON at byte 11: invalid number"},
		{"bad escape", `{"member":"\x"}`, "member: invalid JSON at byte 12: invalid escape in a string"},
		{"raw control", "{\"member\":\"a\tb\"}", "member: invalid JSON at byte 12: a control character in a string must be escaped"},
		{"bad literal", `{"flag":tru}`, "flag: invalid JSON at byte 8: want a value"},
		{"deep", `{"any":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "any" + strings.Repeat("[0]", 63) + ": nested deeper than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v batch
			err := Decode([]byte(tt.body), &v)
			var e *Error
			if !errors.As(err, &e) || err.Error() != tt.want {
				t.Errorf("Decode(%q) = %v, want %q", tt.body, err, tt.want)
			}
			if !reflect.DeepEqual(v, batch{}) {
				t.Errorf("a refused body changed the value: %+v", v)
			}
		})
	}
}

// TestAccepts: what encoding/json takes (and the strict rules allow)
// decodes as encoding/json decodes it.
func TestAccepts(t *testing.T) {
	for _, body := range []string{
		`{}`, ` {"member":"a","score":1} `, `{"member":null,"score":null}`,
		`{"scores":[{"member":"a","score":-1.5e3,"subscore":0,"id":"x"}]}`,
		`{"\u006dember":"\u00e9\ud83d\ude00"}`, `{"any":{"x":[1,true,null,"s",{}]}}`,
		`{"retention":-0}`, `{"score":1e-400}`, `{"tags":null,"flag":false}`,
	} {
		var got, want batch
		if err := Decode([]byte(body), &got); err != nil {
			t.Errorf("Decode(%s): %v", body, err)
			continue
		}
		_ = json.Unmarshal([]byte(body), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Decode(%s) = %+v, encoding/json %+v", body, got, want)
		}
	}
}

// goText matches what a client must never read: a Go type, encoding/json's
// prefix, a pointer star.
var goText = regexp.MustCompile(`api\.|jsonbody\.|\bjson:|main\.|\*|struct|float64|int64|\bint\b`)

// quoted matches what a message quotes of the body (a field name).
var quoted = regexp.MustCompile(`\["(?:[^"\\]|\\.)*"\]`)

// leadsWithPath matches a message that starts with "body" or a JSON path.
var leadsWithPath = regexp.MustCompile(`^(body|[A-Za-z0-9_-]+)(\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\]|\.[A-Za-z0-9_-]+)*: `)

// FuzzDecode holds Decode to encoding/json: never a panic; what Decode
// accepts, a strict encoding/json decoder accepts and decodes alike; what
// that decoder refuses, Decode refuses too, with a message that starts with
// a path and holds no Go text.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"member":"a","score":1}`, `{"scores":[{"member":"a","score":1},{"member":"b","score":"x"}]}`,
		"{\"member\":\"\xff\"}", `{"member":"\ud800"}`, `{"any":[[[{}]]]}`, `{"retention":1e3}`, `[]`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got batch
		err := Decode(data, &got)
		var strictWant batch
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		jerr := dec.Decode(&strictWant)
		if jerr == nil && dec.More() {
			jerr = errors.New("trailing")
		}
		if err == nil {
			if jerr != nil {
				t.Fatalf("Decode accepted %q, encoding/json: %v", data, jerr)
			}
			var want batch
			_ = json.Unmarshal(data, &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Decode(%q) = %+v, encoding/json %+v", data, got, want)
			}
			return
		}
		msg := err.Error()
		if !leadsWithPath.MatchString(msg) || goText.MatchString(quoted.ReplaceAllString(msg, "")) {
			t.Fatalf("Decode(%q): message %q", data, msg)
		}
	})
}
