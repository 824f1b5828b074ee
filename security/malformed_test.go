package security

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// malformed is one hostile request: where want is set the status must be
// it, and where field is set the message must name it.
type malformed struct {
	name, method, path, body string
	want                     int
	field                    string
}

// goType matches what a message must never hold: Go types, package-
// qualified names, decoder internals and stream names.
var goType = regexp.MustCompile(`\b(float64|float32|u?int(8|16|32|64)?|bool|rune|uintptr)\b|map\[|\[\]|struct|interface ?\{|Go (value|struct)|json: |\b(api|hub|auth|board|identity|main|subscriptions|http|json|strconv|reflect)\.[A-Za-z]|[a-z]+JSON\b|\bRW_|unmarshal|Unmarshal|runtime error|goroutine|panic`)

// scoreBodies are submissions that must each be refused with 400.
var scoreBodies = map[string]struct{ body, field string }{
	"empty body":                 {``, ""},
	"whitespace":                 {"  \n\t ", ""},
	"open brace":                 {`{`, ""},
	"close brace":                {`}`, ""},
	"truncated":                  {`{"member":"p1","score":`, ""},
	"trailing object":            {`{"member":"p1","score":1} {"member":"p2","score":2}`, ""},
	"trailing garbage":           {`{"member":"p1","score":1}xyz`, ""},
	"a string":                   {`"p1"`, ""},
	"a number":                   {`123`, ""},
	"true":                       {`true`, ""},
	"an array of numbers":        {`[1,2,3]`, ""},
	"nul":                        {`nul`, ""},
	"single quotes":              {`{'member':'p1','score':1}`, ""},
	"unquoted key":               {`{member:"p1",score:1}`, ""},
	"comment":                    {`{"member":"p1",/*x*/"score":1}`, ""},
	"trailing comma":             {`{"member":"p1","score":1,}`, ""},
	"score 1e309":                {`{"member":"p1","score":1e309}`, "score"},
	"score -1e309":               {`{"member":"p1","score":-1e309}`, "score"},
	"score 400 digits":           {`{"member":"p1","score":` + strings.Repeat("9", 400) + `}`, "score"},
	"score NaN":                  {`{"member":"p1","score":NaN}`, ""},
	"score Infinity":             {`{"member":"p1","score":Infinity}`, ""},
	"score hex":                  {`{"member":"p1","score":0x10}`, ""},
	"score leading zero":         {`{"member":"p1","score":012}`, ""},
	"score plus sign":            {`{"member":"p1","score":+1}`, ""},
	"score bare dot":             {`{"member":"p1","score":.5}`, ""},
	"score underscore":           {`{"member":"p1","score":1_000}`, ""},
	"score string":               {`{"member":"p1","score":"5"}`, "score"},
	"score bool":                 {`{"member":"p1","score":true}`, "score"},
	"score array":                {`{"member":"p1","score":[5]}`, "score"},
	"score object":               {`{"member":"p1","score":{"v":5}}`, "score"},
	"subscore 1e999":             {`{"member":"p1","score":1,"subscore":1e999}`, "subscore"},
	"subscore string":            {`{"member":"p1","score":1,"subscore":"x"}`, "subscore"},
	"member number":              {`{"member":42,"score":1}`, "member"},
	"member array":               {`{"member":["p1"],"score":1}`, "member"},
	"member object":              {`{"member":{"id":"p1"},"score":1}`, "member"},
	"member bool":                {`{"member":false,"score":1}`, "member"},
	"member empty":               {`{"member":"","score":1}`, "member"},
	"member missing":             {`{"score":1}`, "member"},
	"member 129 bytes":           {`{"member":"` + strings.Repeat("m", 129) + `","score":1}`, "member"},
	"member control char":        {`{"member":"p\u0001","score":1}`, "member"},
	"member newline":             {`{"member":"p\n1","score":1}`, "member"},
	"member invalid UTF-8":       {"{\"member\":\"bad\xff\xfe\",\"score\":1}", "member"},
	"member overlong UTF-8":      {"{\"member\":\"\xc0\xaf\",\"score\":1}", "member"},
	"member truncated UTF-8":     {"{\"member\":\"p\xe2\x82\",\"score\":1}", "member"},
	"member UTF-16 surrogate":    {"{\"member\":\"\xed\xa0\x80\",\"score\":1}", "member"},
	"id number":                  {`{"member":"p1","score":1,"id":7}`, "id"},
	"id 129 bytes":               {`{"member":"p1","score":1,"id":"` + strings.Repeat("i", 129) + `"}`, "id"},
	"id invalid UTF-8":           {"{\"member\":\"p1\",\"score\":1,\"id\":\"\xff\"}", "id"},
	"scores not an array":        {`{"scores":{"member":"p1","score":1}}`, "scores"},
	"scores a string":            {`{"scores":"p1"}`, "scores"},
	"scores of numbers":          {`{"scores":[1,2]}`, "scores[0]"},
	"scores empty":               {`{"scores":[]}`, "scores"},
	"scores 1001 items":          {`{"scores":[` + strings.TrimSuffix(strings.Repeat(`{"member":"p1","score":1},`, 1001), ",") + `]}`, "scores"},
	"item 7 bad score":           {`{"scores":[` + strings.Repeat(`{"member":"p1","score":1},`, 7) + `{"member":"p8","score":"x"}]}`, "scores[7].score"},
	"item 3 invalid UTF-8":       {"{\"scores\":[" + strings.Repeat(`{"member":"p1","score":1},`, 3) + "{\"member\":\"\xff\",\"score\":1}]}", "scores[3].member"},
	"item 2 member missing":      {`{"scores":[{"member":"a","score":1},{"member":"b","score":1},{"score":1}]}`, "scores[2].member"},
	"deep arrays":                {strings.Repeat("[", 100000) + strings.Repeat("]", 100000), ""},
	"deep objects":               {strings.Repeat(`{"a":`, 50000) + "1" + strings.Repeat("}", 50000), ""},
	"deep member":                {`{"member":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `,"score":1}`, ""},
	"deep score":                 {`{"member":"p1","score":` + strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000) + `}`, ""},
	"NUL byte":                   {"{\"member\":\"p1\",\"score\":1}\x00", ""},
	"BOM":                        {"\xef\xbb\xbf{\"member\":\"p1\",\"score\":1}", ""},
	"UTF-16 body":                {"\xff\xfe{\x00\"\x00m\x00", ""},
	"invalid UTF-8 outside text": {"{\"member\":\"p1\",\"score\":1\xff}", ""},
}

// otherBodies are refused bodies of the other JSON routes.
var otherBodies = []malformed{
	{"board order sideways", "PUT", "/v1/boards/mf-board", `{"order":"sideways"}`, 400, "order"},
	{"board windows a string", "PUT", "/v1/boards/mf-board", `{"windows":"all"}`, 400, "windows"},
	{"board window year", "PUT", "/v1/boards/mf-board", `{"windows":["all","year"]}`, 400, "windows"},
	{"board retention negative", "PUT", "/v1/boards/mf-board", `{"retention":-1}`, 400, "retention"},
	{"board retention 1e20", "PUT", "/v1/boards/mf-board", `{"retention":1e20}`, 400, "retention"},
	{"board retention 2.5", "PUT", "/v1/boards/mf-board", `{"retention":2.5}`, 400, "retention"},
	{"board policy number", "PUT", "/v1/boards/mf-board", `{"policy":5}`, 400, "policy"},
	{"board tiebreak array", "PUT", "/v1/boards/mf-board", `{"tiebreak":["latest"]}`, 400, "tiebreak"},
	{"board order invalid UTF-8", "PUT", "/v1/boards/mf-board", "{\"order\":\"de\xffsc\"}", 400, "order"},
	{"board body an array", "PUT", "/v1/boards/mf-board", `[]`, 400, ""},
	{"board deep nesting", "PUT", "/v1/boards/mf-board", `{"windows":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, 400, ""},
	{"identity member missing", "POST", "/v1/identities", `{"aliases":["x:1"]}`, 400, "member"},
	{"identity aliases a string", "POST", "/v1/identities", `{"member":"p1","aliases":"x:1"}`, 400, "aliases"},
	{"identity alias a number", "POST", "/v1/identities", `{"member":"p1","aliases":["x:1",2]}`, 400, "aliases[1]"},
	{"identity alias invalid UTF-8", "POST", "/v1/identities", "{\"member\":\"p1\",\"aliases\":[\"x:\xff\"]}", 400, "aliases[0]"},
	{"identity alias empty", "POST", "/v1/identities", `{"member":"p1","aliases":[""]}`, 400, "aliases[0]"},
	{"identity member 129 bytes", "POST", "/v1/identities", `{"member":"` + strings.Repeat("m", 129) + `","aliases":["x:1"]}`, 400, "member"},
	{"identity truncated", "POST", "/v1/identities", `{"member":"p1","aliases":[`, 400, ""},
}

// badURLs are hostile paths and queries of the read routes.
var badURLs = []malformed{
	{"board name 65 bytes", "GET", "/v1/boards/" + strings.Repeat("b", 65) + "/top", "", 400, "board"},
	{"board name with a dot", "GET", "/v1/boards/a.b/top", "", 400, "board"},
	{"board name with >", "GET", "/v1/boards/a%3E/top", "", 400, "board"},
	{"board name upper case", "GET", "/v1/boards/Poker/top", "", 400, "board"},
	{"board name invalid UTF-8", "GET", "/v1/boards/%ff%fe/top", "", 400, "board"},
	{"board name NUL", "GET", "/v1/boards/a%00/top", "", 400, "board"},
	{"limit 0", "GET", "/v1/boards/poker-final/top?limit=0", "", 400, "limit"},
	{"limit 1001", "GET", "/v1/boards/poker-final/top?limit=1001", "", 400, "limit"},
	{"limit -1", "GET", "/v1/boards/poker-final/top?limit=-1", "", 400, "limit"},
	{"limit a word", "GET", "/v1/boards/poker-final/top?limit=ten", "", 400, "limit"},
	{"limit 2^70", "GET", "/v1/boards/poker-final/top?limit=1180591620717411303424", "", 400, "limit"},
	{"limit 1e3", "GET", "/v1/boards/poker-final/top?limit=1e3", "", 400, "limit"},
	{"offset -1", "GET", "/v1/boards/poker-final/top?offset=-1", "", 400, "offset"},
	{"offset 2^64", "GET", "/v1/boards/poker-final/top?offset=18446744073709551616", "", 400, "offset"},
	{"window year", "GET", "/v1/boards/poker-final/top?window=year", "", 400, "window"},
	{"at month 13", "GET", "/v1/boards/poker-final/top?window=all&at=2026-13-45", "", 400, "at"},
	{"at a word", "GET", "/v1/boards/poker-final/top?at=yesterday", "", 400, "at"},
	{"rank 0", "GET", "/v1/boards/poker-final/ranks/0", "", 400, "rank"},
	{"rank -1", "GET", "/v1/boards/poker-final/ranks/-1", "", 400, "rank"},
	{"rank a word", "GET", "/v1/boards/poker-final/ranks/first", "", 400, "rank"},
	{"rank 2^64", "GET", "/v1/boards/poker-final/ranks/18446744073709551616", "", 400, "rank"},
	{"radius 101", "GET", "/v1/boards/poker-final/members/champion/around?radius=101", "", 400, "radius"},
	{"radius a word", "GET", "/v1/boards/poker-final/members/champion/around?radius=x", "", 400, "radius"},
	{"ids 101", "GET", "/v1/boards/poker-final/members?ids=" + strings.TrimSuffix(strings.Repeat("p,", 101), ","), "", 400, "ids"},
	{"ids invalid UTF-8", "GET", "/v1/boards/poker-final/members?ids=a,%ff", "", 400, "ids"},
	{"member invalid UTF-8", "GET", "/v1/boards/poker-final/members/%ff", "", 0, ""},
	{"member 129 bytes", "GET", "/v1/boards/poker-final/members/" + strings.Repeat("m", 129), "", 400, "member"},
	{"identity invalid UTF-8", "GET", "/v1/identities/%c0%af", "", 0, ""},
	{"bad query escape", "GET", "/v1/boards/poker-final/top?limit=%zz", "", 0, ""},
	{"query NUL", "GET", "/v1/boards/poker-final/top?limit=%00", "", 400, "limit"},
	{"unknown route", "GET", "/v1/boards/poker-final/nope", "", 404, ""},
	{"method not allowed", "PATCH", "/v1/boards/poker-final", "{}", 0, ""},
}

// TestMalformedRequests sends over a hundred hostile requests with a valid
// admin token: none answers 5xx, each refusal is a protocol error whose
// message names the field and no Go type, and the gateway still serves.
func TestMalformedRequests(t *testing.T) {
	admin := tokA(t, base(tenantA, "admin"))
	mustOK(t, "PUT", "/v1/boards/mf-board", admin, `{}`)
	var cases []malformed
	for name, b := range scoreBodies {
		cases = append(cases, malformed{"scores: " + name, "POST", "/v1/boards/mf-board/scores", b.body, 400, b.field})
	}
	cases = append(append(cases, otherBodies...), badURLs...)
	if len(cases) < 100 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		r := do(t, c.method, c.path, admin, c.body)
		checkRefusal(t, c, r)
	}
	if body := mustOK(t, "GET", "/v1/boards/mf-board/top", admin, "").body; !strings.Contains(body, `"total":0`) {
		t.Errorf("a malformed submission was applied: %s", body)
	}
}

// checkRefusal applies malformed's rules to r.
func checkRefusal(t *testing.T, c malformed, r reply) {
	t.Helper()
	what := fmt.Sprintf("%s (%s %.60s)", c.name, c.method, c.path)
	if r.status >= 500 {
		t.Errorf("%s: %d %.300q", what, r.status, r.body)
	}
	if c.want != 0 && r.status != c.want {
		t.Errorf("%s: %d %.300q, want %d", what, r.status, r.body, c.want)
	}
	if r.status < 400 {
		return
	}
	_, msg := protocolError(t, what, r)
	if m := goType.FindString(msg); m != "" {
		t.Errorf("%s: message names %q: %q", what, m, msg)
	}
	if c.field != "" && !strings.Contains(msg, c.field) {
		t.Errorf("%s: message %q does not name %s", what, msg, c.field)
	}
}

// TestOversizeBodies: bodies past the limit answer 413 too_large, with a
// declared length or chunked, and the gateway still serves afterwards.
func TestOversizeBodies(t *testing.T) {
	admin := tokA(t, base(tenantA, "admin"))
	big := `{"scores":[` + strings.Repeat(`{"member":"p1","score":1},`, 90000) + `{"member":"p1","score":1}]}`
	for _, chunked := range []bool{false, true} {
		for _, path := range []string{"/v1/boards/poker-final/scores", "/v1/identities", "/v1/boards/poker-final"} {
			method := "POST"
			if path == "/v1/boards/poker-final" {
				method = "PUT"
			}
			req, err := http.NewRequest(method, gw.url(path), strings.NewReader(big))
			if err != nil {
				t.Fatal(err)
			}
			if chunked {
				req.ContentLength = -1 // sent chunked: no length to refuse early
			}
			req.Header.Set("Authorization", "Bearer "+admin)
			r := send(t, req)
			checkRefusal(t, malformed{name: fmt.Sprintf("%d bytes, chunked %v", len(big), chunked), method: method, path: path, want: 413}, r)
		}
	}
	assertUntouched(t)
}
