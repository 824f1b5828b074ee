package loadtest

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

var decodeSeed = flag.Uint64("decodeseed", 0, "seed of TestDecodeWSMessageRandom; 0 picks one")

// wsMessageJSON is the reference model of decodeWSMessage: what
// json.Unmarshal decodes of a server message, as the subscriber did before
// it had its own scanner.
type wsMessageJSON struct {
	Type string  `json:"type"`
	Code string  `json:"code"`
	ID   string  `json:"id"`
	Seq  uint64  `json:"seq"`
	Prev *uint64 `json:"prev"`
	Rows []struct {
		Member string  `json:"member"`
		Score  float64 `json:"score"`
	} `json:"rows"`
}

// checkDecode decodes data with decodeWSMessage into m (which may hold an
// earlier message) and with json.Unmarshal, and fails unless both refuse
// it or both decode the same. errRowsTwice is the one refusal
// json.Unmarshal need not share. It returns the outcome: "decoded",
// "refused" or "rows twice".
func checkDecode(t *testing.T, data []byte, m *wsMessage) string {
	t.Helper()
	err := decodeWSMessage(data, m)
	var want wsMessageJSON
	wantErr := json.Unmarshal(data, &want)
	switch {
	case errors.Is(err, errRowsTwice):
		return "rows twice"
	case err != nil && wantErr != nil:
		return "refused"
	case err != nil || wantErr != nil:
		t.Fatalf("%q:\ndecodeWSMessage: %v\njson.Unmarshal: %v", data, err, wantErr)
	}
	if got, want := fromWSMessage(m).String(), want.String(); got != want {
		t.Fatalf("%q:\ndecodeWSMessage: %s\njson.Unmarshal: %s", data, got, want)
	}
	return "decoded"
}

// fromWSMessage converts m to the wsMessageJSON it stands for.
func fromWSMessage(m *wsMessage) wsMessageJSON {
	ref := wsMessageJSON{Type: string(m.Type), Code: string(m.Code), ID: string(m.ID), Seq: m.Seq}
	if m.HasPrev {
		ref.Prev = &m.Prev
	}
	for _, r := range m.Rows {
		ref.Rows = append(ref.Rows, struct {
			Member string  `json:"member"`
			Score  float64 `json:"score"`
		}{string(r.Member), r.Score})
	}
	return ref
}

// String prints m with prev's value and the scores' bits, so that -0 and
// 0 differ.
func (m wsMessageJSON) String() string {
	s := fmt.Sprintf("type %q code %q id %q seq %d", m.Type, m.Code, m.ID, m.Seq)
	if m.Prev != nil {
		s += fmt.Sprintf(" prev %d", *m.Prev)
	}
	s += fmt.Sprintf(" %d rows", len(m.Rows))
	for _, r := range m.Rows {
		s += fmt.Sprintf(" %q:%#x", r.Member, math.Float64bits(r.Score))
	}
	return s
}

// decodeCases are named messages the decoder must treat as encoding/json
// does; FuzzDecodeWSMessage starts from them too.
var decodeCases = []struct{ name, msg string }{
	{"gateway snapshot", `{"type":"snapshot","id":"s1","seq":1234,"total":100000,"rows":[{"rank":1,"member":"p7","score":98500,"subscore":0}]}`},
	{"gateway diff", `{"type":"diff","id":"s1","seq":1240,"prev":1234,"total":100001,"rows":[{"rank":3,"member":"p9","score":7000,"subscore":0}],"gone":[10]}`},
	{"gateway error", `{"type":"error","id":"s1","code":"bad_request","message":"view.limit: 1000 is not in 1..100"}`},
	{"error without id", `{"type":"error","id":null,"code":"bad_json","message":"x"}`},
	{"whitespace", " \t\r\n{ \"type\" : \"diff\" , \"rows\" : [ { \"member\" : \"a\" , \"score\" : 1 } , null ] }\n "},
	{"empty object", `{}`},
	{"null", `null`},
	{"empty", ``},
	{"top-level array", `[]`},
	{"top-level string", `"diff"`},
	{"trailing garbage", `{} {}`},
	{"prev null", `{"type":"diff","prev":null}`},
	{"prev then null", `{"prev":5,"prev":null}`},
	{"seq null keeps", `{"seq":5,"seq":null}`},
	{"seq negative", `{"seq":-1}`},
	{"seq minus zero", `{"seq":-0}`},
	{"seq fraction", `{"seq":1.0}`},
	{"seq exponent", `{"seq":1e3}`},
	{"seq max", `{"seq":18446744073709551615}`},
	{"seq overflow", `{"seq":18446744073709551616}`},
	{"seq string", `{"seq":"5"}`},
	{"type number", `{"type":5}`},
	{"type object", `{"type":{}}`},
	{"type null", `{"type":null}`},
	{"id of a lobby", `{"type":"diff","id":"v12","seq":3,"prev":2,"rows":[]}`},
	{"id empty", `{"id":""}`},
	{"id number", `{"id":7}`},
	{"id object", `{"id":{"v":1}}`},
	{"id array", `{"id":["v"]}`},
	{"id true", `{"id":true}`},
	{"id null keeps", `{"id":"v1","id":null}`},
	{"id twice", `{"id":"v1","id":"v2"}`},
	{"id escaped", `{"id":"v\u0031\"x"}`},
	{"id folded", `{"ID":"v3","Id":"v4"}`},
	{"id folded after exact", `{"id":"v3","ID":"v4"}`},
	{"id key escaped", `{"\u0069d":"v5"}`},
	{"id unclosed", `{"id":"v5}`},
	{"type escaped", `{"type":"di\u0066f"}`},
	{"key folded", `{"TYPE":"diff","Seq":3,"ſeq":4}`},
	{"key escaped", `{"t\u0079pe":"diff"}`},
	{"key exact beats order", `{"type":"a","Type":"b"}`},
	{"rows null", `{"rows":null}`},
	{"rows object", `{"rows":{}}`},
	{"rows twice", `{"rows":[{"member":"a"}],"rows":[{"score":1}]}`},
	{"row null", `{"rows":[null]}`},
	{"row number", `{"rows":[1]}`},
	{"row array", `{"rows":[[]]}`},
	{"row fields null", `{"rows":[{"member":null,"score":null}]}`},
	{"row member twice", `{"rows":[{"member":"a","member":"b"}]}`},
	{"score minus zero", `{"rows":[{"score":-0}]}`},
	{"score exponent", `{"rows":[{"score":1.5E+3}]}`},
	{"score overflow", `{"rows":[{"score":1e400}]}`},
	{"score underflow", `{"rows":[{"score":1e-400}]}`},
	{"score leading zero", `{"rows":[{"score":01}]}`},
	{"score bare minus", `{"rows":[{"score":-}]}`},
	{"score string", `{"rows":[{"score":"1"}]}`},
	{"member escapes", `{"rows":[{"member":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00\ud800x"}]}`},
	{"member invalid UTF-8", "{\"rows\":[{\"member\":\"a\xffb\xc3\"}]}"},
	{"member raw UTF-8", `{"rows":[{"member":"é😀"}]}`},
	{"member control char", "{\"rows\":[{\"member\":\"a\x01\"}]}"},
	{"control char 0x1f", "{\"x\":\"\x1f\"}"},
	{"DEL is allowed", "{\"x\":\"\x7f\"}"},
	{"bad escape", `{"x":"\q"}`},
	{"short unicode escape", `{"x":"\u12"}`},
	{"nested unknowns", `{"x":{"a":[1,{"b":[true,false,null,"s"]}],"c":{}},"rows":[{"y":[[[]]],"member":"m"}]}`},
	{"mismatched close", `{"x":[1}}`},
	{"trailing comma", `{"x":[1,],"rows":[]}`},
	{"trailing comma in object", `{"type":"diff",}`},
	{"missing colon", `{"type" "diff"}`},
	{"unclosed", `{"type":"diff"`},
	{"literal typo", `{"x":nul}`},
	{"depth 10000", strings.Repeat("[", 10000) + strings.Repeat("]", 10000)},
	{"depth 10001", strings.Repeat("[", 10001) + strings.Repeat("]", 10001)},
	{"object depth 10000", `{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`},
	{"object depth 10001", `{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`},
	{"row depth 10000", `{"rows":[{"x":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}]}`},
	{"row depth 10001", `{"rows":[{"x":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}]}`},
}

func TestDecodeWSMessage(t *testing.T) {
	for _, tt := range decodeCases {
		t.Run(tt.name, func(t *testing.T) {
			checkDecode(t, []byte(tt.msg), &wsMessage{})
		})
	}
	var m wsMessage
	if err := decodeWSMessage([]byte(decodeCases[1].msg), &m); err != nil || string(m.Type) != "diff" || string(m.ID) != "s1" ||
		m.Seq != 1240 || !m.HasPrev || m.Prev != 1234 || len(m.Rows) != 1 || string(m.Rows[0].Member) != "p9" || m.Rows[0].Score != 7000 {
		t.Errorf("gateway diff: %v, %+v", err, m)
	}
	if err := decodeWSMessage([]byte(`{"rows":[],"rows":[]}`), &m); !errors.Is(err, errRowsTwice) {
		t.Errorf("rows twice: %v", err)
	}
}

// TestDecodeWSMessageReuse decodes every case into one wsMessage in turn,
// so that nothing of a message leaks into the next.
func TestDecodeWSMessageReuse(t *testing.T) {
	var m wsMessage
	for _, tt := range decodeCases {
		checkDecode(t, []byte(tt.msg), &m)
	}
}

func TestDecodeWSMessageAllocs(t *testing.T) {
	msg := topDiff(7, time.Now())
	var m wsMessage
	if n := testing.AllocsPerRun(100, func() { decodeWSMessage(msg, &m) }); n != 0 {
		t.Errorf("%v allocations per gateway diff, want 0", n)
	}
	if string(m.ID) != "v" || len(m.Rows) != 10 {
		t.Errorf("decoded id %q and %d rows, want v and 10", m.ID, len(m.Rows))
	}
}

// TestDecodeWSMessageRandom checks the decoder against encoding/json on
// random messages of the server's shape with random keys, values,
// whitespace and escapes, a third of them then mutated byte by byte.
// -decodeseed replays a run.
func TestDecodeWSMessageRandom(t *testing.T) {
	seed := *decodeSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("-decodeseed %d", seed)
	n := 20000
	if testing.Short() {
		n = 2000
	}
	g := &msgGen{r: rand.New(rand.NewPCG(seed, 0))}
	var m wsMessage
	outcomes := map[string]int{}
	for range n {
		outcomes[checkDecode(t, g.message(), &m)]++
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["decoded"] < n/4 || outcomes["refused"] < n/4 {
		t.Errorf("outcomes %v: the generator should make a quarter of each at least", outcomes)
	}
}

// FuzzDecodeWSMessage checks the decoder against encoding/json on any
// input; its seeds (decodeCases) run as a normal test.
func FuzzDecodeWSMessage(f *testing.F) {
	for _, tt := range decodeCases {
		f.Add([]byte(tt.msg))
	}
	f.Add(topDiff(3, time.Now()))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data, &wsMessage{})
	})
}

// msgGen writes random JSON close to what a gateway sends.
type msgGen struct {
	r    *rand.Rand
	b    []byte
	wild bool // this message: values of any type, then byte mutations
}

func (g *msgGen) message() []byte {
	g.b = g.b[:0]
	g.wild = g.r.IntN(2) == 0
	if g.wild && g.r.IntN(20) == 0 {
		g.value(0)
	} else {
		g.object(func() {
			g.members([]genField{
				{"type", func() { g.pick(`"diff"`, `"snapshot"`, `"error"`, `"x"`, `null`, `"di\u0066f"`) }},
				{"code", g.str},
				{"seq", g.uint},
				{"prev", g.uint},
				{"rows", g.rows},
				{"id", g.id},
				{"gone", func() { g.value(2) }},
			})
		})
	}
	if g.wild && g.r.IntN(3) > 0 {
		g.mutate()
	}
	return g.b
}

// genField is an object member msgGen writes: its name, and a writer of
// a value of the type it should have.
type genField struct {
	name  string
	value func()
}

// members writes fields in random order, each usually once, sometimes
// not at all or twice, separated by commas.
func (g *msgGen) members(fields []genField) {
	g.r.Shuffle(len(fields), func(i, j int) { fields[i], fields[j] = fields[j], fields[i] })
	first := true
	for _, f := range fields {
		for range []int{0, 1, 1, 1, 1, 1, 1, 1, 2, 2}[g.r.IntN(10)] {
			if !first {
				g.b = append(g.b, ',')
			}
			first = false
			g.ws()
			g.key(f.name)
			g.ws()
			g.b = append(g.b, ':')
			g.ws()
			if g.wild && g.r.IntN(12) == 0 {
				g.value(2) // any value, of any type
			} else {
				f.value()
			}
			g.ws()
		}
	}
}

// id writes a subscription id: one of rwload's, or any string, or null.
func (g *msgGen) id() {
	switch g.r.IntN(4) {
	case 0:
		g.pick(`"v"`, `null`, `""`, `"v00"`, `"v\u0037"`)
	case 1:
		g.str()
	default:
		g.b = fmt.Appendf(g.b, `"v%d"`, g.r.IntN(120))
	}
}

func (g *msgGen) rows() {
	if g.r.IntN(15) == 0 {
		g.pick(`null`, `[]`)
		return
	}
	g.b = append(g.b, '[')
	for i := range g.r.IntN(12) {
		if i > 0 {
			g.b = append(g.b, ',')
		}
		g.ws()
		if g.r.IntN(20) == 0 {
			g.pick(`null`, `null`, `1`, `[]`, `"r"`)
			continue
		}
		g.object(func() {
			g.members([]genField{{"rank", g.number}, {"member", g.str}, {"score", g.score}, {"subscore", g.number}})
		})
	}
	g.b = append(g.b, ']')
}

func (g *msgGen) object(body func()) {
	g.b = append(g.b, '{')
	body()
	if g.r.IntN(4) == 0 {
		if len(g.b) > 0 && g.b[len(g.b)-1] != '{' {
			g.b = append(g.b, ',')
		}
		g.str()
		g.b = append(g.b, ':')
		g.value(2)
	}
	g.b = append(g.b, '}')
}

// key writes name, sometimes with a letter's case changed, an s as ſ
// (which folds to s) or a letter escaped.
func (g *msgGen) key(name string) {
	g.b = append(g.b, '"')
	for _, c := range []byte(name) {
		switch g.r.IntN(30) {
		case 0:
			g.b = append(g.b, c-'a'+'A')
		case 1:
			if c == 's' {
				g.b = append(g.b, "ſ"...)
			} else {
				g.b = fmt.Appendf(g.b, `\u%04x`, c)
			}
		default:
			g.b = append(g.b, c)
		}
	}
	g.b = append(g.b, '"')
}

// value writes any JSON value, nested at most a few levels below depth.
func (g *msgGen) value(depth int) {
	switch k := g.r.IntN(8); {
	case k < 2 && depth < 5:
		g.b = append(g.b, '[')
		for i := range g.r.IntN(4) {
			if i > 0 {
				g.b = append(g.b, ',')
			}
			g.value(depth + 1)
		}
		g.b = append(g.b, ']')
	case k < 4 && depth < 5:
		g.object(func() {
			for i := range g.r.IntN(4) {
				if i > 0 {
					g.b = append(g.b, ',')
				}
				g.str()
				g.b = append(g.b, ':')
				g.value(depth + 1)
			}
		})
	case k == 4:
		g.pick(`true`, `false`, `null`)
	case k == 5:
		g.number()
	default:
		g.str()
	}
}

func (g *msgGen) str() {
	g.b = append(g.b, '"')
	for range g.r.IntN(10) {
		g.pick("m", "7", " ", "é", "😀", `\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\u0041`, "\xff", "\xc3", "ſ")
	}
	g.b = append(g.b, '"')
}

// uint writes a seq: a uint64, or where wild any number.
func (g *msgGen) uint() {
	if g.wild {
		g.number()
		return
	}
	g.b = fmt.Appendf(g.b, "%d", g.r.Uint64N(1<<uint(g.r.IntN(64))))
}

// score writes a score: a probe score or a float64 in range, or where
// wild any number.
func (g *msgGen) score() {
	if g.wild {
		g.number()
		return
	}
	g.b = strconv.AppendFloat(g.b, probeScore(g.r.IntN(1_000_000), time.Now()), 'f', -1, 64)
	if g.r.IntN(4) == 0 {
		g.b = g.b[:len(g.b)-g.r.IntN(3)] // fewer digits
		g.pick("", ".5", "e-7", "E+2", "e300")
	}
}

func (g *msgGen) number() {
	switch g.r.IntN(4) {
	case 0:
		g.b = fmt.Appendf(g.b, "%d", g.r.Uint64N(1<<20))
	case 1:
		g.b = fmt.Appendf(g.b, "%.0f", probeScore(g.r.IntN(1_000_000), time.Now()))
	case 2:
		g.b = fmt.Appendf(g.b, "%v", (g.r.Float64()-0.5)*math.Pow(10, float64(g.r.IntN(40)-20)))
	default:
		g.pick(`0`, `-0`, `-1`, `1.5`, `1e3`, `1E+3`, `2e-3`, `18446744073709551615`, `18446744073709551616`,
			`1e400`, `-1e400`, `1e-400`, `9007199254740993`, `0.1`, `123456789012345678901234567890`)
	}
}

func (g *msgGen) pick(options ...string) {
	g.b = append(g.b, options[g.r.IntN(len(options))]...)
}

// ws writes random JSON whitespace, usually none.
func (g *msgGen) ws() {
	for g.r.IntN(6) == 0 {
		g.pick(" ", "\t", "\n", "\r")
	}
}

// mutate deletes, inserts, replaces or truncates at a few random places.
func (g *msgGen) mutate() {
	const chars = `{}[]",:\ 0-1eE.tfnu` + "\x00\x1f\x7f\xff"
	for range 1 + g.r.IntN(3) {
		if len(g.b) == 0 {
			return
		}
		i := g.r.IntN(len(g.b))
		switch g.r.IntN(4) {
		case 0:
			g.b = append(g.b[:i], g.b[i+1:]...)
		case 1:
			g.b = append(g.b[:i], append([]byte{chars[g.r.IntN(len(chars))]}, g.b[i:]...)...)
		case 2:
			g.b[i] = chars[g.r.IntN(len(chars))]
		default:
			g.b = g.b[:i]
		}
	}
}
