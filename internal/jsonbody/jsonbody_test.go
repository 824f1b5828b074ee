package jsonbody

import (
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
	Scores []item `json:"scores"`
}

type settings struct {
	Order     string         `json:"order"`
	Windows   []string       `json:"windows"`
	Retention int            `json:"retention"`
	Small     int8           `json:"small"`
	Count     uint16         `json:"count"`
	Flag      bool           `json:"flag"`
	Extra     map[string]int `json:"extra"`
	Any       any            `json:"any"`
	Hidden    string         `json:"-"`
}

// TestRefusals: every refusal names the JSON path with indexes, or body,
// and no Go type.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name, body, want string
		into             any
	}{
		{"empty", "", "body: empty, want an object", &batch{}},
		{"blank", " \n\t", "body: empty, want an object", &batch{}},
		{"array at top", `[]`, "body: want an object, got array", &batch{}},
		{"string at top", `"x"`, "body: want an object, got string", &batch{}},
		{"number at top", `7`, "body: want an object, got number", &batch{}},
		{"type in batch item", `{"scores":[{"member":"a","score":1},{"member":"b","score":"2"}]}`, "scores[1].score: want a number, got string", &batch{}},
		{"type at top", `{"member":5}`, "member: want a string, got number", &batch{}},
		{"object for number", `{"score":{}}`, "score: want a number, got object", &batch{}},
		{"bool for string", `{"member":true}`, "member: want a string, got boolean", &batch{}},
		{"array for object", `{"scores":[[]]}`, "scores[0]: want an object, got array", &batch{}},
		{"object for array", `{"scores":{}}`, "scores: want an array, got object", &batch{}},
		{"unknown field in item", `{"scores":[{"member":"a"},{"member":"b"},{"foo":1}]}`, "scores[2].foo: unknown field", &batch{}},
		{"unknown top field", `{"Member":"a"}`, "Member: unknown field", &batch{}},
		{"odd key not echoed", `{"a*b":1}`, `["…"]: unknown field`, &batch{}},
		{"odd key inside", `{"scores":[{"api.x":1}]}`, `scores[0]["…"]: unknown field`, &batch{}},
		{"repeated key", `{"member":"a","member":"b"}`, "member: appears more than once", &batch{}},
		{"invalid UTF-8 value", "{\"scores\":[{\"member\":\"bad\xff\xfe\"}]}", "scores[0].member: invalid UTF-8", &batch{}},
		{"invalid UTF-8 other order", "{\"member\":\"bad\xfe\xff\"}", "member: invalid UTF-8", &batch{}},
		{"invalid UTF-8 key", "{\"scores\":[{\"m\xff\":1}]}", "scores[0]: invalid UTF-8 in a key", &batch{}},
		{"lone low surrogate", `{"member":"a\udc00"}`, "member: invalid UTF-8 (a lone surrogate escape)", &batch{}},
		{"lone high surrogate", `{"member":"a\ud800b"}`, "member: invalid UTF-8 (a lone surrogate escape)", &batch{}},
		{"high then non-low", `{"member":"\ud800\u0041"}`, "member: invalid UTF-8 (a lone surrogate escape)", &batch{}},
		{"invalid UTF-8 in array of strings", "{\"windows\":[\"all\",\"d\xc0\"]}", "windows[1]: invalid UTF-8", &settings{}},
		{"int with fraction", `{"retention":1.5}`, "retention: want an integer in -9223372036854775808..9223372036854775807, got 1.5", &settings{}},
		{"int8 overflow", `{"small":300}`, "small: want an integer in -128..127, got 300", &settings{}},
		{"uint negative", `{"count":-1}`, "count: want an integer in 0..65535, got -1", &settings{}},
		{"float overflow", `{"score":1e400}`, "score: want a finite number in range, got 1e400", &batch{}},
		{"map value type", `{"extra":{"a":"x"}}`, "extra.a: want an integer, got string", &settings{}},
		{"dash field is unknown", `{"Hidden":"x"}`, "Hidden: unknown field", &settings{}},
		{"syntax", `{"member":"a",}`, "body: invalid JSON at byte 15", &batch{}},
		{"syntax in item", `{"scores":[{"member":x}]}`, "body: invalid JSON at byte 22, in scores[0].member", &batch{}},
		{"truncated", `{"scores":[{"member":"a"`, "body: truncated JSON at byte 24, in scores[0]", &batch{}},
		{"trailing", `{} {}`, "body: data after the JSON value at byte 4", &batch{}},
		{"trailing garbage", `{}x`, "body: data after the JSON value at byte 3", &batch{}},
		{"too deep", `{"any":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, "body: ", &settings{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Decode([]byte(c.body), c.into)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Decode(%q) = %v, want *Error", c.body, err)
			}
			if c.name == "too deep" {
				if !strings.Contains(e.Msg, "nesting deeper than") {
					t.Fatalf("got %q", e.Error())
				}
				return
			}
			if e.Error() != c.want {
				t.Fatalf("Decode(%q)\n got %q\nwant %q", c.body, e.Error(), c.want)
			}
			checkMessage(t, e.Error())
		})
	}
}

// TestAccepts: what encoding/json takes in the protocol's own shapes comes
// out the same.
func TestAccepts(t *testing.T) {
	for _, body := range []string{
		`{"member":"a","score":1}`,
		`{"scores":[{"member":"a","score":1,"subscore":2,"id":"x"},{"member":"b","score":-1e300}]}`,
		`{"member":"\ud83d\ude00 ok \u00e9","score":0}`,
		`{"member":null,"score":null}`,
		"{\"member\":\"caf\u00e9\"}",
		`{"order":"asc","windows":["all","day"],"retention":3,"extra":{"a":1},"any":{"x":[1,"y",null,true]}}`,
	} {
		into := reflect.TypeOf(&batch{})
		if strings.Contains(body, "order") {
			into = reflect.TypeOf(&settings{})
		}
		got, want := reflect.New(into.Elem()).Interface(), reflect.New(into.Elem()).Interface()
		if err := Decode([]byte(body), got); err != nil {
			t.Fatalf("Decode(%s): %v", body, err)
		}
		if err := json.Unmarshal([]byte(body), want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%s) = %+v, encoding/json %+v", body, got, want)
		}
	}
}

func TestNotAPointer(t *testing.T) {
	var b batch
	if err := Decode([]byte(`{}`), b); err == nil {
		t.Fatal("a non-pointer target was accepted")
	}
}

// goType matches text that would name a Go type or package.
var goType = regexp.MustCompile(`api\.|\bjson:|main\.|jsonbody\.|\*|reflect|struct|float64|int64|string\]`)

// pathStart is how every refusal starts: body, or a JSON path.
var pathStart = regexp.MustCompile(`^(body|[A-Za-z_\[]).*?: `)

func checkMessage(t *testing.T, msg string) {
	t.Helper()
	if !pathStart.MatchString(msg) {
		t.Errorf("%q does not start with a path or body", msg)
	}
	if goType.MatchString(msg) {
		t.Errorf("%q names a Go type", msg)
	}
}

// FuzzDecode: never a panic; a refusal names a path and no Go type; what
// Decode accepts, encoding/json decodes the same, and the body was valid
// UTF-8 throughout.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"member":"a","score":1}`, `{"scores":[{"member":"a","score":1}]}`,
		`{"order":"asc","windows":["all"],"retention":1}`, "{\"member\":\"\xff\"}", `{"member":"\ud800"}`, `[`, `{"a":`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, into := range []any{&batch{}, &settings{}} {
			err := Decode(data, into)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("Decode(%q) = %v, not an *Error", data, err)
				}
				checkMessage(t, e.Error())
				continue
			}
			if !utf8Valid(data) {
				t.Fatalf("Decode accepted invalid UTF-8 %q", data)
			}
			want := reflect.New(reflect.TypeOf(into).Elem()).Interface()
			if err := json.Unmarshal(data, want); err != nil {
				t.Fatalf("Decode accepted %q, encoding/json: %v", data, err)
			}
			if !reflect.DeepEqual(into, want) {
				t.Fatalf("Decode(%q) = %+v, encoding/json %+v", data, into, want)
			}
		}
	})
}

func utf8Valid(b []byte) bool { return checkString(b) == "" }
