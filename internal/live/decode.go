package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// decodeMsg parses one client message, naming the field that was wrong
// by its JSON path (view.limit), never by a Go type. data is valid UTF-8
// (the read loop checks it); a string whose escapes decode to an unpaired
// surrogate, which encoding/json would replace with U+FFFD, is refused.
// O(len(data)).
func decodeMsg(data []byte) (clientMsg, error) {
	var m clientMsg
	err := json.Unmarshal(data, &m)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return m, badRequest("%s: want %s", fieldPath(data, typeErr.Field), jsonKind(typeErr.Type))
	case errors.As(err, &syntaxErr):
		return m, badRequest("message: not valid JSON (byte %d)", syntaxErr.Offset)
	case err != nil:
		return m, badRequest("message: not a JSON object")
	}
	return m, replacedText(data, m)
}

// fieldPath names a field for a message: the whole message where the
// field is the top level, and the item's index in view.members (which
// encoding/json does not give). encoding/json names a field of the
// embedded wire.Subscribe with its Go name first ("Subscribe.view.limit"):
// the client sent no such member, so it is cut.
func fieldPath(data []byte, field string) string {
	field = strings.TrimPrefix(field, "Subscribe.")
	switch field {
	case "":
		return "message"
	case "view.members":
		var v struct {
			View struct{ Members []json.RawMessage } `json:"view"`
		}
		_ = json.Unmarshal(data, &v) // decoded once already: an item is not a string
		for i, raw := range v.View.Members {
			if len(raw) == 0 || raw[0] != '"' && string(raw) != "null" { // null leaves a string as it is
				return fmt.Sprintf("view.members[%d]", i)
			}
		}
	}
	return field
}

// jsonKind names what JSON a Go type of clientMsg decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a JSON object"
	case reflect.Slice, reflect.Array:
		return "a JSON array"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another JSON value"
}

// replacedText refuses a message whose strings hold U+FFFD that data does
// not spell out: encoding/json put it there for an unpaired surrogate
// escape (\ud800). PROTOCOL.md: text is valid UTF-8, never replaced.
func replacedText(data []byte, m clientMsg) error {
	if !bytes.Contains(data, []byte(`\u`)) || bytes.Contains(data, []byte(`\uFFFD`)) ||
		bytes.Contains(data, []byte(`\ufffd`)) || bytes.ContainsRune(data, utf8.RuneError) {
		return nil // no escape, or U+FFFD spelled out: kept as sent
	}
	fields := []textField{{"type", m.Type}, {"id", m.ID}, {"board", m.Board}, {"window", m.Window}, {"at", m.At}, {"token", m.Token}}
	fields = append(fields, textField{"view.kind", m.View.Kind}, textField{"view.member", m.View.Member})
	for i, id := range m.View.Members {
		fields = append(fields, textField{fmt.Sprintf("view.members[%d]", i), id})
	}
	for _, f := range fields {
		if strings.ContainsRune(f.v, utf8.RuneError) {
			return badRequest("%s: not valid UTF-8 (an unpaired surrogate escape)", f.path)
		}
	}
	return nil
}

// textField is a decoded string of a client message and its JSON path.
type textField struct{ path, v string }
