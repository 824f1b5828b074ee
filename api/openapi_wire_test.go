package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// schema is the part of a JSON Schema (OpenAPI 3.1) the wire check reads.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 any                `json:"type"` // a name or a list of names
	Const                any                `json:"const"`
	Enum                 []any              `json:"enum"`
	Required             []string           `json:"required"`
	Properties           map[string]*schema `json:"properties"`
	Items                *schema            `json:"items"`
	OneOf                []*schema          `json:"oneOf"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
}

// wireSchemas maps each body and message schema of the OpenAPI document,
// by its JSON pointer, to the wire type it describes. Nested objects
// (Error.error, Standings.rows, Tenant.limits, a subscribe's view) are
// checked through the field that holds them.
var wireSchemas = []struct {
	pointer string
	typ     any
	msgType string // the const of a WebSocket message's "type"
}{
	{"/components/schemas/Error", wire.ErrorBody{}, ""},
	{"/components/schemas/Row", wire.Row{}, ""},
	{"/components/schemas/Page", wire.Page{}, ""},
	{"/components/schemas/MemberRow", wire.MemberRow{}, ""},
	{"/components/schemas/Prize", wire.Prize{}, ""},
	{"/components/schemas/Rules", wire.Rules{}, ""},
	{"/components/schemas/Settings", wire.Settings{}, ""},
	{"/components/schemas/Board", wire.Board{}, ""},
	{"/components/schemas/Score", wire.Score{}, ""},
	{"/components/schemas/Submission/oneOf/0", wire.Score{}, ""},
	{"/components/schemas/Submission/oneOf/1", wire.Submission{}, ""},
	{"/components/schemas/Result", wire.Result{}, ""},
	{"/components/schemas/Standings", wire.Standings{}, ""},
	{"/components/schemas/Held", wire.Held{}, ""},
	{"/components/schemas/Profile", wire.Profile{}, ""},
	{"/components/schemas/Identity", wire.Identity{}, ""},
	{"/components/schemas/PersonalData", wire.PersonalData{}, ""},
	{"/components/schemas/PersonalEntry", wire.PersonalEntry{}, ""},
	{"/components/schemas/Erasure", wire.Erasure{}, ""},
	{"/components/schemas/History", wire.History{}, ""},
	{"/components/schemas/Tenant", wire.Tenant{}, ""},
	{"/components/schemas/Amendment", wire.Amendment{}, ""},
	{"/components/schemas/Void", wire.Void{}, ""},
	{"/components/schemas/Decision", wire.Decision{}, ""},
	{"/components/schemas/MintRequest", wire.MintRequest{}, ""},
	{"/components/schemas/MintedToken", wire.MintedToken{}, ""},
	{"/components/schemas/AdminAction", wire.AdminAction{}, ""},
	{"/components/schemas/Audit", wire.Audit{}, ""},
	{"/components/schemas/ScheduleSpec", wire.ScheduleSpec{}, ""},
	{"/components/schemas/Schedule", wire.Schedule{}, ""},
	{answer("/v1/schedules", "get", "200"), wire.ScheduleList{}, ""},
	{answer("/v1/schedules/{schedule}", "delete", "200"), wire.Unscheduled{}, ""},
	{answer("/v1/boards", "get", "200"), wire.BoardList{}, ""},
	{answer("/v1/boards/{board}", "delete", "200"), wire.Deleted{}, ""},
	{answer("/v1/boards/{board}/reset", "post", "200"), wire.ResetDone{}, ""},
	{answer("/v1/boards/{board}/members/{member}", "delete", "200"), wire.Removed{}, ""},
	{answer("/v1/boards/{board}/scores", "post", "200"), wire.Results{}, ""},
	{answer("/v1/boards/{board}/score-rank", "get", "200"), wire.ScoreRank{}, ""},
	{answer("/v1/boards/{board}/quarantine", "get", "200"), wire.Quarantine{}, ""},
	{answer("/v1/boards/{board}/quarantine/{qid}/reject", "post", "200"), wire.Rejected{}, ""},
	{answer("/readyz", "get", "200"), wire.Ready{}, ""},
	{answer("/readyz", "get", "503"), wire.Ready{}, ""},
	{"/x-websocket/client/auth", wire.Auth{}, wire.TypeAuth},
	{"/x-websocket/client/subscribe", wire.Subscribe{}, wire.TypeSubscribe},
	{"/x-websocket/client/unsubscribe", wire.Unsubscribe{}, wire.TypeUnsubscribe},
	{"/x-websocket/server/snapshot", wire.Snapshot{}, wire.TypeSnapshot},
	{"/x-websocket/server/diff", wire.Diff{}, wire.TypeDiff},
	{"/x-websocket/server/error", wire.ErrorMessage{}, wire.TypeError},
	{"/x-websocket/server/board", wire.BoardMessage{}, wire.TypeBoard},
	{"/x-websocket/server/heartbeat", wire.Heartbeat{}, wire.TypeHeartbeat},
}

// answer is the JSON pointer of an operation's JSON answer schema.
func answer(path, method, status string) string {
	return "/paths/" + strings.ReplaceAll(strings.ReplaceAll(path, "~", "~0"), "/", "~1") + "/" + method +
		"/responses/" + status + "/content/application~1json/schema"
}

// TestOpenAPIMatchesWire checks the OpenAPI document against package wire
// field by field, both ways: every property of a schema is a json tag of
// its wire type and every json tag a property, a property is required
// exactly where its field has no omitempty, JSON types match Go types,
// objects refuse additional properties; the error codes and close codes
// are wire's. Every wire body and message type is covered.
func TestOpenAPIMatchesWire(t *testing.T) {
	var doc any
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	c := wireCheck{doc: doc, seen: map[reflect.Type]bool{}}
	for _, m := range wireSchemas {
		s := c.at(m.pointer)
		if s == nil {
			t.Errorf("%s: not in the document", m.pointer)
			continue
		}
		c.object(m.pointer, s, reflect.TypeOf(m.typ))
		if m.msgType != "" && (s.Properties["type"] == nil || s.Properties["type"].Const != m.msgType) {
			t.Errorf("%s: type is not the const %q", m.pointer, m.msgType)
		}
	}
	for _, e := range c.errs {
		t.Error(e)
	}
	c.covered(t)
	codes := c.at("/components/schemas/Error/properties/error/properties/code")
	var want []any
	for _, code := range wire.Codes {
		want = append(want, string(code))
	}
	if !reflect.DeepEqual(codes.Enum, want) {
		t.Errorf("Error's codes %v, wire.Codes %v", codes.Enum, want)
	}
	closes, _ := c.node("/x-websocket/close_codes").(map[string]any)
	var documented, sent []string
	for k := range closes {
		documented = append(documented, k)
	}
	for _, code := range wire.CloseCodes {
		sent = append(sent, code.String())
	}
	slices.Sort(documented)
	if !slices.Equal(documented, sent) {
		t.Errorf("x-websocket.close_codes %v, wire.CloseCodes %v", documented, sent)
	}
}

// wireCheck walks the document beside wire's types, gathering mismatches.
type wireCheck struct {
	doc  any
	errs []string
	seen map[reflect.Type]bool // struct types checked
}

func (c *wireCheck) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// node returns the document's value at a JSON pointer, or nil.
func (c *wireCheck) node(pointer string) any {
	n := c.doc
	for _, part := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		switch v := n.(type) {
		case map[string]any:
			n = v[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i >= len(v) {
				return nil
			}
			n = v[i]
		default:
			return nil
		}
	}
	return n
}

// at returns the schema at a JSON pointer, its $ref followed, or nil.
func (c *wireCheck) at(pointer string) *schema {
	n := c.node(pointer)
	if n == nil {
		return nil
	}
	raw, _ := json.Marshal(n)
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		c.errorf("%s: %v", pointer, err)
		return nil
	}
	if s.Ref != "" {
		return c.at(strings.TrimPrefix(s.Ref, "#"))
	}
	return &s
}

// resolve follows s's $ref.
func (c *wireCheck) resolve(s *schema) *schema {
	if s != nil && s.Ref != "" {
		return c.at(strings.TrimPrefix(s.Ref, "#"))
	}
	return s
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name      string
	omitempty bool
	typ       reflect.Type
	goName    string
}

// jsonFields lists t's JSON members in order, embedded structs flattened.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("json")
		if f.Anonymous && !ok {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		out = append(out, jsonField{name, omits(opts), f.Type, t.Name() + "." + f.Name})
	}
	return out
}

// variants returns s's object schemas: s itself, or its oneOf's non-null
// variants (a union such as a subscribe's view).
func (c *wireCheck) variants(s *schema) []*schema {
	if len(s.OneOf) == 0 {
		return []*schema{s}
	}
	var out []*schema
	for _, v := range s.OneOf {
		if v = c.resolve(v); v != nil && !reflect.DeepEqual(v.Type, "null") {
			out = append(out, v)
		}
	}
	return out
}

// object checks an object schema (or a union of them) against struct t:
// the properties of any variant are t's JSON members, and a member is
// required in every variant exactly where it has no omitempty.

// omits reports whether a json tag's options leave the field out when
// empty: omitempty, or omitzero (a nil slice left out, [] kept).
func omits(opts string) bool {
	o := strings.Split(opts, ",")
	return slices.Contains(o, "omitempty") || slices.Contains(o, "omitzero")
}
func (c *wireCheck) object(path string, s *schema, t reflect.Type) {
	c.seen[t] = true
	props := map[string]*schema{}
	requiredIn := map[string]int{}
	vs := c.variants(s)
	for _, v := range vs {
		if string(v.AdditionalProperties) != "false" {
			c.errorf("%s: additionalProperties is not false (wire.%s has no other fields)", path, t.Name())
		}
		for name, p := range v.Properties {
			props[name] = p
		}
		for _, r := range v.Required {
			requiredIn[r]++
		}
	}
	fields := jsonFields(t)
	for _, f := range fields {
		p, ok := props[f.name]
		if !ok {
			c.errorf("%s: no property %q for wire.%s", path, f.name, f.goName)
			continue
		}
		if required := requiredIn[f.name] == len(vs); required == f.omitempty {
			c.errorf("%s: %q required %v, but wire.%s omitempty %v", path, f.name, required, f.goName, f.omitempty)
		}
		c.value(path+"/"+f.name, p, f.typ)
	}
	for name := range props {
		if !slices.ContainsFunc(fields, func(f jsonField) bool { return f.name == name }) {
			c.errorf("%s: property %q is no field of wire.%s", path, name, t.Name())
		}
	}
}

// jsonTypes are the JSON Schema types a Go kind encodes as.
var jsonTypes = map[reflect.Kind]string{
	reflect.String: "string", reflect.Bool: "boolean", reflect.Float64: "number", reflect.Float32: "number",
	reflect.Int: "integer", reflect.Int64: "integer", reflect.Uint64: "integer", reflect.Uint32: "integer",
	reflect.Slice: "array", reflect.Map: "object", reflect.Struct: "object",
}

// value checks a property's schema against the Go type of its field.
func (c *wireCheck) value(path string, s *schema, t reflect.Type) {
	s = c.resolve(s)
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	if t.Kind() == reflect.Struct {
		c.object(path, s, t)
		return
	}
	want := jsonTypes[t.Kind()]
	got := c.typesOf(s)
	if !slices.Contains(got, want) && !(want == "number" && slices.Contains(got, "integer")) {
		c.errorf("%s: JSON type %v, but Go %s encodes as %s", path, got, t, want)
	}
	if slices.Contains(got, "null") && !nullable && t.Kind() != reflect.Slice {
		c.errorf("%s: may be null, but Go %s cannot", path, t)
	}
	switch {
	case t.Kind() == reflect.Slice && s.Items != nil:
		c.value(path+"[]", s.Items, t.Elem())
	case t.Kind() == reflect.Map && len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{':
		var v schema
		if err := json.Unmarshal(s.AdditionalProperties, &v); err == nil {
			c.value(path+"{}", &v, t.Elem())
		}
	}
}

// typesOf returns the JSON types s allows: its type, or its const's or
// enum's, or its variants'.
func (c *wireCheck) typesOf(s *schema) []string {
	switch v := s.Type.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, n := range v {
			out = append(out, fmt.Sprint(n))
		}
		return out
	}
	var out []string
	for _, v := range append([]any{s.Const}, s.Enum...) {
		switch v.(type) {
		case string:
			out = append(out, "string")
		case bool:
			out = append(out, "boolean")
		case float64:
			out = append(out, "number")
		}
	}
	for _, v := range s.OneOf {
		out = append(out, c.typesOf(c.resolve(v))...)
	}
	return out
}

// covered fails for a struct type of package wire that no schema checked,
// besides those that are not bodies or messages of their own.
func (c *wireCheck) covered(t *testing.T) {
	t.Helper()
	exempt := map[string]bool{"ServerMessage": true, "Close": true, "Example": true}
	checked := map[string]bool{}
	for typ := range c.seen {
		checked[typ.Name()] = true
	}
	for _, ex := range wire.Examples() {
		name := reflect.TypeOf(ex.Value).Name()
		if !checked[name] && !exempt[name] {
			t.Errorf("wire.%s (example %s) is checked against no schema of the document", name, ex.Name)
		}
	}
	for _, name := range []string{"ErrorDetail", "StandingRow", "HistoryPoint", "TenantLimits", "View"} {
		if !checked[name] {
			t.Errorf("wire.%s is checked against no schema of the document", name)
		}
	}
}

// TestOperationIDs: every operation has an operationId, camelCase and
// unique, so that generated clients get stable method names.
func TestOperationIDs(t *testing.T) {
	doc, _ := loadSpec(t)
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	seen := map[string]string{}
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			n++
			where := method + " " + path
			switch id := op.OperationID; {
			case id == "":
				t.Errorf("%s: no operationId", where)
			case !camel.MatchString(id):
				t.Errorf("%s: operationId %q is not camelCase", where, id)
			case seen[id] != "":
				t.Errorf("%s: operationId %q is %s's too", where, id, seen[id])
			default:
				seen[id] = where
			}
		}
	}
	if n < 25 {
		t.Fatalf("only %d operations", n)
	}
}

// TestWireLimits: wire's limits are the ones the gateway enforces, until
// the gateway reads them from wire. (The WebSocket plane's are tested in
// internal/live's TestWireLimits.)
func TestWireLimits(t *testing.T) {
	for _, l := range []struct {
		name       string
		wire, gate int
	}{
		{"MaxBody", wire.MaxBody, DefaultMaxBody},
		{"MaxBatch", wire.MaxBatch, hub.MaxBatch},
		{"MaxScoreID", wire.MaxScoreID, hub.MaxIDLen},
		{"MaxAliases", wire.MaxAliases, hub.MaxAliases},
		{"MaxReadLimit", wire.MaxReadLimit, MaxLimit},
		{"MaxReadRadius", wire.MaxReadRadius, MaxRadius},
		{"MaxReadIDs", wire.MaxReadIDs, MaxIDs},
		{"MaxQuarantinePage", wire.MaxQuarantinePage, hub.MaxHeldPage},
		{"MaxRetention", wire.MaxRetention, hub.MaxRetention},
		{"MaxPrizes", wire.MaxPrizes, hub.MaxPrizes},
		{"MaxPrizeRank", wire.MaxPrizeRank, hub.MaxPrizeRank},
		{"MaxPrizeLabel", wire.MaxPrizeLabel, hub.MaxPrizeLen},
		{"MaxPerMinute", wire.MaxPerMinute, hub.MaxPerMinuteLimit},
		{"MaxProfileName", wire.MaxProfileName, hub.MaxProfileName},
		{"MaxAvatarURL", wire.MaxAvatarURL, hub.MaxAvatarLen},
		{"MaxHistoryPoints", wire.MaxHistoryPoints, hub.MaxHistoryPoints},
		{"SinceChanges", wire.SinceChanges, subscriptions.DefaultRingSize},
	} {
		if l.wire != l.gate {
			t.Errorf("wire.%s = %d, the gateway enforces %d", l.name, l.wire, l.gate)
		}
	}
}
